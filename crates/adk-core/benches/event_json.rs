//! Reading and writing events as JSON, the format sessions store them in: 10,000 events of a
//! conversation with tool calls, as a session service loads them. Run with
//! `cargo bench -p adk-core --bench event_json`.

use adk_core::{Content, Event, FunctionCall, FunctionResponse, InvocationId, Part, Role};
use serde_json::json;

fn main() {
    divan::main();
}

/// `count` events cycling through a question, a function call, its response and an answer.
fn conversation(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let content = match i % 4 {
                0 => Content::user(format!("question {i}: what is the weather in Paris today?")),
                1 => Content::new(
                    Role::Model,
                    [Part::function_call(
                        FunctionCall::new(
                            "get_weather",
                            json!({"city": "Paris", "unit": "celsius"}),
                        )
                        .with_id(format!("call-{i}")),
                    )],
                ),
                2 => Content::new(
                    Role::User,
                    [Part::function_response(
                        FunctionResponse::new(
                            "get_weather",
                            json!({"sky": "sunny", "celsius": 21}),
                        )
                        .with_id(format!("call-{i}")),
                    )],
                ),
                _ => Content::model(format!("answer {i}: it is sunny and 21 degrees in Paris.")),
            };
            let mut event =
                Event::new(InvocationId::from("e-bench"), "weather_agent").with_content(content);
            event
                .actions
                .state_delta
                .insert("user:last_city".into(), json!("Paris"));
            serde_json::to_string(&event).unwrap()
        })
        .collect()
}

#[divan::bench(args = [10_000])]
fn read_events(bencher: divan::Bencher<'_, '_>, count: usize) {
    let rows = conversation(count);
    bencher.bench(|| {
        rows.iter()
            .map(|row| serde_json::from_str::<Event>(row).unwrap())
            .collect::<Vec<_>>()
    });
}

#[divan::bench(args = [10_000])]
fn write_events(bencher: divan::Bencher<'_, '_>, count: usize) {
    let events: Vec<Event> = conversation(count)
        .iter()
        .map(|row| serde_json::from_str(row).unwrap())
        .collect();
    bencher.bench(|| {
        events
            .iter()
            .map(|event| serde_json::to_string(event).unwrap())
            .collect::<Vec<_>>()
    });
}
