//! Golden wire tests: events, sessions and content captured from ADK Python's own server (in the
//! shared `docs/wire-format.md`) deserialize into adk-core types and serialize back to the same JSON.

use adk_core::{Content, Event, PartData, Role, Session};
use serde_json::{Value, json};

/// The events of the captured `/run` output: the first JSON block after its heading.
fn captured_run_events() -> Vec<Value> {
    let doc = adk_test::shared_file("docs/wire-format.md");
    let section = doc
        .split("## Captured `/run` output")
        .nth(1)
        .expect("wire-format.md has a captured /run section");
    let block = section
        .split("```json")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the captured section holds a json block");
    let events: Vec<Value> = serde_json::Deserializer::from_str(block)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("the captured events are JSON");
    assert_eq!(
        events.len(),
        3,
        "the capture holds one turn of three events"
    );
    events
}

fn check_round_trip<T>(expected: &Value) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let parsed: T = serde_json::from_value(expected.clone()).expect("deserializes");
    let written = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(&written, expected, "JSON changed in the round trip");
    parsed
}

#[test]
fn captured_events_round_trip() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    for captured in captured_run_events() {
        check_round_trip::<Event>(&captured);
    }
}

#[test]
fn captured_function_call_event_reads_as_adk_does() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let events = captured_run_events();
    let call: Event = check_round_trip(&events[0]);
    assert_eq!(call.author, "echo");
    assert_eq!(
        call.node_info.path, "echo@1",
        "a plain root agent's run is a node"
    );
    assert!(call.invocation_id.as_str().starts_with("e-"));
    let function_call = call.function_calls().next().expect("a function call");
    assert_eq!(function_call.name, "get_weather");
    assert_eq!(function_call.args["city"], "Paris");
    assert!(function_call.id.as_ref().unwrap().is_client_generated());
    assert_eq!(call.long_running_tool_ids.as_deref(), Some(&[][..]));
    assert!(!call.is_final_response());

    let response: Event = check_round_trip(&events[1]);
    assert_eq!(response.content().unwrap().role, Some(Role::User));
    assert_eq!(
        response.author, "echo",
        "the agent authors its tool's response"
    );
    let function_response = response.function_responses().next().unwrap();
    assert_eq!(function_response.id, function_call.id);
    assert_eq!(function_response.response["result"], "sunny");
    assert_eq!(response.actions.state_delta["user:last_city"], "Paris");
    assert!(!response.is_final_response());

    let answer: Event = check_round_trip(&events[2]);
    assert_eq!(answer.text().as_deref(), Some("It is sunny"));
    assert_eq!(answer.response.turn_complete, Some(true));
    assert_eq!(answer.actions.state_delta["answer"], "It is sunny");
    assert!(answer.is_final_response());
}

#[test]
fn captured_contents_round_trip() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    for captured in captured_run_events() {
        check_round_trip::<Content>(&captured["content"]);
    }
}

#[test]
fn session_with_captured_events_round_trips() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let events: Vec<Value> = captured_run_events().into_iter().collect();
    let session = json!({
        "id": "4a1c2b3d-0000-4000-8000-000000000001",
        "appName": "weather_app",
        "userId": "user-1",
        "state": {"user:last_city": "Paris", "answer": "It is sunny"},
        "events": events,
        "lastUpdateTime": 1795298362.3141923
    });
    let parsed: Session = check_round_trip(&session);
    assert_eq!(parsed.events.len(), 3);
    assert_eq!(parsed.key().app_name, "weather_app");
}

#[test]
fn bytes_round_trip_as_url_safe_base64_and_read_both_alphabets() {
    let url_safe = json!({"parts": [{"inlineData": {"mimeType": "application/octet-stream", "data": "-w=="}}], "role": "user"});
    let content: Content = check_round_trip(&url_safe);
    let PartData::InlineData(blob) = &content.parts[0].data else {
        panic!("an inline-data part")
    };
    assert_eq!(blob.data.as_ref(), &[0xfb]);

    let standard = json!({"parts": [{"inlineData": {"mimeType": "application/octet-stream", "data": "+w=="}}], "role": "user"});
    let from_standard: Content = serde_json::from_value(standard).unwrap();
    assert_eq!(
        from_standard, content,
        "standard and URL-safe base64 read the same bytes"
    );
}

#[test]
fn timestamps_are_float_epoch_seconds() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let events = captured_run_events();
    let event: Event = serde_json::from_value(events[0].clone()).unwrap();
    assert_eq!(event.timestamp, 1795298362.2617297);
    let written = serde_json::to_string(&event).unwrap();
    assert!(
        written.contains("\"timestamp\":1795298362.2617297"),
        "{written}"
    );
}
