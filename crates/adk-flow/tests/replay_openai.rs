//! The flow end to end through the real OpenAI adapter, against a loopback server replaying real
//! recorded OpenAI traffic: a streamed tool call, the tool's result sent back, a streamed answer.

use std::sync::Arc;

use adk_core::{Content, RunConfig, Session, SessionKey, StreamingMode};
use adk_flow::LlmAgent;
use adk_model::OpenAi;
use adk_test::{AgentRun, MockServer, load_recording, shared_dir};
use adk_tool::{FunctionTool, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

// The arguments of `multiply`, as the recorded model called it. A line comment, not a doc
// comment, and plain integers, so that the schema is the recorded one (no description, no format).
#[derive(Deserialize, JsonSchema)]
struct Factors {
    #[schemars(schema_with = "plain_integer")]
    a: i64,
    #[schemars(schema_with = "plain_integer")]
    b: i64,
}

fn plain_integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer"})
}

async fn multiply(_ctx: ToolContext, factors: Factors) -> Result<i64, String> {
    Ok(factors.a * factors.b)
}

#[tokio::test]
async fn a_recorded_streamed_tool_call_round_trip_runs_through_the_flow() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let recording =
        shared_dir().join("fixtures/recorded/openai/llm__test_tools__test_tool_use_basic.yaml");
    let exchanges = load_recording(&recording).expect("the recording parses");
    assert_eq!(
        exchanges.len(),
        2,
        "the recording holds the call and the answer"
    );
    let server = MockServer::replay(&exchanges).await;
    let model = OpenAi::builder("gpt-4o-mini")
        .api_key("test-key")
        .base_url(server.base_url())
        .build()
        .expect("the adapter builds");
    let agent = LlmAgent::builder("calculator")
        .model(model)
        .tool(FunctionTool::new(
            "multiply",
            // As the recorded client described it, so that the first request matches the recording.
            "Multiply two numbers.",
            multiply,
        ))
        .build()
        .unwrap();
    let run = AgentRun::on_session(
        Arc::new(agent),
        Session::new(SessionKey::new("app", "user", "session")),
        Content::user("What is 1231 * 2331?"),
        RunConfig::default().with_streaming_mode(StreamingMode::Sse),
    )
    .await;
    assert!(run.error.is_none(), "{:?}", run.error);

    // The stored history: the user, the call, the tool's response, the aggregated answer.
    let stored: Vec<_> = run
        .session
        .events
        .iter()
        .map(|event| event.author.as_str())
        .collect();
    assert_eq!(stored, ["user", "calculator", "calculator", "calculator"]);
    let call = run.session.events[1]
        .function_calls()
        .next()
        .expect("a function call");
    assert_eq!(call.name, "multiply");
    assert_eq!(call.args["a"], 1231);
    assert_eq!(call.args["b"], 2331);
    assert!(
        !call.id.as_ref().unwrap().is_client_generated(),
        "the model's own call id is kept"
    );
    let response = run.session.events[2]
        .function_responses()
        .next()
        .expect("a function response");
    assert_eq!(response.response["result"], 2_869_461);
    let answer = run.session.events[3].text().expect("a text answer");
    assert!(
        answer.contains("2,869,461") || answer.contains("2869461"),
        "{answer}"
    );
    assert!(
        run.events.iter().any(|event| event.is_partial()),
        "text was streamed"
    );

    // The first request is the recorded one: the user's message, the tool, streaming with usage.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The flow adds one thing the recorded client did not send: the agent's identity as the
    // system message.
    let mut expected = exchanges[0]
        .request_json()
        .expect("the recorded request is JSON");
    expected["messages"].as_array_mut().unwrap().insert(
        0,
        json!({"role": "system", "content": "You are an agent named \"calculator\"."}),
    );
    assert_eq!(requests[0].json(), expected);

    // The second request carried the call and its result back in OpenAI's shape.
    let messages = requests[1].json()["messages"].clone();
    let messages = messages.as_array().unwrap();
    let tool_message = messages
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("a tool message");
    assert_eq!(
        tool_message["tool_call_id"],
        call.id.as_ref().unwrap().as_str()
    );
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("2869461")
    );
}
