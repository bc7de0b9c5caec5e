//! Regression tests of the security and reliability review (issue 22), one or more per finding,
//! each named after its finding: `review_NN_...`.

mod support;

use std::collections::HashSet;
use std::sync::Arc;

use adk_core::{Content, FunctionCall, LlmResponse, Part, Role};
use adk_test::{ClosureTool, ScriptedModel};
use serde_json::json;
use support::{agent, run, runner, stored};

/// A model response holding one call of `name` with `args`, with the provider's `id`.
fn call_with_id(name: &str, args: serde_json::Value, id: &str) -> LlmResponse {
    LlmResponse::new(Content::new(
        Role::Model,
        [Part::function_call(
            FunctionCall::new(name, args).with_id(id),
        )],
    ))
}

#[tokio::test]
async fn review_01_reused_tool_call_ids_do_not_brick_a_session() {
    // A server that numbers the calls of every answer from zero, as some proxies do.
    let model = ScriptedModel::new("m")
        .then(call_with_id(
            "get_weather",
            json!({"city": "Paris"}),
            "call_0",
        ))
        .then_text("Sunny in Paris.")
        .then(call_with_id(
            "get_weather",
            json!({"city": "Rome"}),
            "call_0",
        ))
        .then_text("Sunny in Rome.")
        .then(call_with_id("get_weather", json!({"city": "Oslo"}), ""))
        .then_text("Snow in Oslo.");
    let weather = ClosureTool::shared("get_weather", |_, args| {
        Ok(json!({"city": args["city"], "sky": "clear"}))
    });
    let forecaster = agent("forecaster", &model).tool(weather).build().unwrap();
    let runner = runner(Arc::new(forecaster)).build().unwrap();

    for (question, answer) in [
        ("Paris?", "Sunny in Paris."),
        ("Rome?", "Sunny in Rome."),
        ("Oslo?", "Snow in Oslo."),
    ] {
        let outcome = run(&runner, question).await;
        assert!(outcome.error.is_none(), "{}", outcome.render());
        assert_eq!(outcome.last().text().as_deref(), Some(answer));
    }

    let session = stored(&runner).await;
    let ids: Vec<String> = session
        .events
        .iter()
        .flat_map(|event| event.function_calls())
        .map(|call| call.id.clone().unwrap().into_string())
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[0], "call_0", "a provider's new id is kept");
    assert!(ids[1].starts_with("call_0_"), "{ids:?}");
    assert!(ids[2].starts_with("call_"), "{ids:?}");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 3, "{ids:?}");
    // Each response answers its own call, so the model saw each result after its call.
    let last_request = model.requests().pop().unwrap();
    let rendered = serde_json::to_string(&*last_request.contents).unwrap();
    for city in ["Paris", "Rome", "Oslo"] {
        assert!(
            rendered.contains(&format!("\"city\":\"{city}\",\"sky\"")),
            "{rendered}"
        );
    }
}
