//! Content capture turned on: model requests and responses and tool arguments and results are
//! recorded on their spans, inline bytes left out. (Its own test binary, as the setting is
//! process-wide.)

use std::sync::Arc;

use adk_core::{
    Agent, Content, Event, EventStream, FunctionCall, FunctionCallId, InvocationContext,
    LlmRequest, LlmResponse, Part, Role, Session, SessionKey,
};
use adk_telemetry::{ModelCall, ToolCall};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{Map, Value, json};
use tracing_subscriber::layer::SubscriberExt as _;

struct Silent;

impl Agent for Silent {
    fn name(&self) -> &str {
        "silent"
    }

    fn description(&self) -> &str {
        ""
    }

    fn run(self: Arc<Self>, _ctx: InvocationContext) -> EventStream {
        Box::pin(futures::stream::empty())
    }
}

#[test]
fn captured_content_is_recorded_on_the_spans() {
    adk_telemetry::content::set_capture_message_content(true);
    assert!(adk_telemetry::content::capture_message_content());

    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::with_default(subscriber, || {
        let agent: Arc<dyn Agent> = Arc::new(Silent);
        let session = Session::new(SessionKey::new("app", "user", "session_1"));
        let ctx = InvocationContext::builder(agent, session).build().unwrap();

        let image = Part::inline_data("image/png", vec![0_u8; 64]);
        let request = LlmRequest::new(
            "vision",
            vec![Content::new(
                Role::User,
                [Part::text("what is this?"), image],
            )],
        );
        let mut model_call = ModelCall::start(&ctx, &request);
        model_call.record_response(&LlmResponse::new(Content::model("a square")));

        let call = FunctionCall::new("lookup", json!({"secret": "s3cr3t"}))
            .with_id(FunctionCallId::from("adk-1"));
        let tool_call = ToolCall::start(&ctx, "Looks things up.", &call);
        let mut result = Map::new();
        result.insert("found".to_owned(), Value::Bool(true));
        tool_call.finish(Some(&result));

        let merged = adk_telemetry::merged_tools_span();
        let event = Event::new(ctx.invocation_id().clone(), "silent")
            .with_content(Content::new(Role::User, [Part::text("merged")]));
        adk_telemetry::record_merged_tools(&merged, &event);
    });
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let attribute = |span_name: &str, key: &str| -> String {
        let span = spans
            .iter()
            .find(|span| span.name == span_name)
            .unwrap_or_else(|| panic!("no span {span_name}"));
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
            .unwrap_or_else(|| panic!("{span_name} has no {key}"))
    };
    let request = attribute("generate_content vision", "gcp.vertex.agent.llm_request");
    assert!(request.contains("what is this?"), "{request}");
    assert!(!request.contains("inlineData"), "{request}");
    assert!(
        attribute("generate_content vision", "gcp.vertex.agent.llm_response").contains("a square")
    );
    assert_eq!(
        attribute("execute_tool lookup", "gcp.vertex.agent.tool_call_args"),
        r#"{"secret":"s3cr3t"}"#
    );
    assert_eq!(
        attribute("execute_tool lookup", "gcp.vertex.agent.tool_response"),
        r#"{"found":true}"#
    );
    assert_eq!(
        attribute("execute_tool (merged)", "gcp.vertex.agent.tool_response"),
        r#"{"parts":[{"text":"merged"}],"role":"user"}"#
    );
}

/// Without a setting, capture follows `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` and is
/// off when it is unset. The variable is read once per process, so each case runs this test again
/// in a child process with the variable set or removed.
#[test]
fn the_standard_environment_variable_decides_when_nothing_was_set() {
    const EXPECTED: &str = "ADK_TELEMETRY_TEST_EXPECTED_CAPTURE";
    const THIS_TEST: &str = "the_standard_environment_variable_decides_when_nothing_was_set";
    if let Some(expected) = std::env::var_os(EXPECTED) {
        assert_eq!(
            adk_telemetry::content::capture_message_content(),
            expected == "on"
        );
        return;
    }
    let env = adk_telemetry::content::CAPTURE_MESSAGE_CONTENT_ENV;
    for (value, expected) in [
        (Some("true"), "on"),
        (Some("TRUE"), "on"),
        (Some("false"), "off"),
        (None, "off"),
    ] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", THIS_TEST]).env(EXPECTED, expected);
        match value {
            Some(value) => child.env(env, value),
            None => child.env_remove(env),
        };
        let output = child.output().unwrap();
        assert!(
            output.status.success() && String::from_utf8_lossy(&output.stdout).contains("1 passed"),
            "{env}={value:?} should turn capture {expected}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}
