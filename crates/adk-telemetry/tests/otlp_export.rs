//! OTLP export end to end: an agent's spans and metrics go over HTTP/protobuf to a receiver on
//! loopback started by the test, which decodes what arrived.

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{
    Agent, Content, EventStream, FinishReason, FunctionCall, FunctionCallId, InvocationContext,
    LlmRequest, LlmResponse, Session, SessionKey, UsageMetadata,
};
use adk_telemetry::otel::OtelConfig;
use adk_telemetry::{ModelCall, ToolCall};
use futures::StreamExt as _;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::{AnyValue as Any, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::json;
use support::{Received, start_receiver};
use tracing_subscriber::layer::SubscriberExt as _;

/// An agent whose run makes one model call and one tool call through the telemetry helpers, as
/// the flow does.
struct Echo;

impl Agent for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn description(&self) -> &str {
        "Repeats what it hears."
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let traced = ctx.clone();
        let events = Box::pin(async_stream::stream! {
            let request = LlmRequest::new("echo-model", vec![Content::user("hello")]);
            let mut model_call = ModelCall::start(&ctx, &request);
            let mut response = LlmResponse::new(Content::model("hello"));
            response.finish_reason = Some(FinishReason::Stop);
            response.usage_metadata = Some(UsageMetadata::new(11, 3));
            model_call.record_response(&response);

            let call = FunctionCall::new("clock", json!({"zone": "UTC"}))
                .with_id(FunctionCallId::from("adk-call-1"));
            let tool_call = ToolCall::start(&ctx, "Tells the time.", &call);
            tool_call.finish(None);

            yield Ok(ctx.new_event().with_content(Content::model("hello")));
        });
        adk_telemetry::trace_agent(traced, events)
    }
}

fn string_attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv
            .value
            .as_ref()
            .and_then(|value: &Any| value.value.as_ref())
        {
            Some(AnyValue::StringValue(text)) => Some(text.as_str()),
            _ => None,
        }
    })
}

fn int_attribute(attributes: &[KeyValue], key: &str) -> Option<i64> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref().and_then(|value| value.value.as_ref()) {
            Some(AnyValue::IntValue(number)) => Some(*number),
            _ => None,
        }
    })
}

#[test]
fn spans_and_metrics_reach_an_otlp_receiver_over_http() {
    let (address, received) = start_receiver();
    let config = OtelConfig::new()
        .endpoint(format!("http://{address}"))
        .service_name("otlp-test");
    let (layer, guard) = adk_telemetry::otel::layer(&config).unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);

    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let agent: Arc<dyn Agent> = Arc::new(Echo);
            let session = Session::new(SessionKey::new("app", "user", "session_1"));
            let ctx = InvocationContext::builder(agent.clone(), session)
                .build()
                .unwrap();
            let mut events = adk_telemetry::trace_invocation(ctx.clone(), agent.run(ctx));
            while let Some(event) = events.next().await {
                event.unwrap();
            }
        });
    });
    // Flushes and shuts the exporters down, outside any runtime: it waits for the receiver.
    drop(guard);

    let mut spans: Vec<Span> = Vec::new();
    let mut metric_names = Vec::new();
    let mut service_names = Vec::new();
    while let Ok(request) = received.recv_timeout(support::PATIENCE) {
        match request {
            Received::Traces(request) => {
                for resource_spans in request.resource_spans {
                    if let Some(resource) = &resource_spans.resource {
                        service_names.extend(
                            string_attribute(&resource.attributes, "service.name")
                                .map(str::to_owned),
                        );
                    }
                    for scope_spans in resource_spans.scope_spans {
                        spans.extend(scope_spans.spans);
                    }
                }
            }
            Received::Metrics(request) => {
                for resource_metrics in request.resource_metrics {
                    for scope_metrics in resource_metrics.scope_metrics {
                        metric_names.extend(scope_metrics.metrics.into_iter().map(|m| m.name));
                    }
                }
            }
        }
        if spans.len() >= 4 && !metric_names.is_empty() {
            break;
        }
    }

    assert_eq!(service_names.first().map(String::as_str), Some("otlp-test"));
    let by_name: HashMap<&str, &Span> = spans
        .iter()
        .map(|span| (span.name.as_str(), span))
        .collect();
    let mut names: Vec<&str> = by_name.keys().copied().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "execute_tool clock",
            "generate_content echo-model",
            "invocation",
            "invoke_agent echo"
        ]
    );

    let invocation = by_name["invocation"];
    let agent = by_name["invoke_agent echo"];
    let model = by_name["generate_content echo-model"];
    let tool = by_name["execute_tool clock"];
    assert!(invocation.parent_span_id.is_empty());
    assert_eq!(agent.parent_span_id, invocation.span_id);
    assert_eq!(model.parent_span_id, agent.span_id);
    assert_eq!(tool.parent_span_id, agent.span_id);
    assert!(
        spans
            .iter()
            .all(|span| span.trace_id == invocation.trace_id)
    );

    assert_eq!(
        string_attribute(&invocation.attributes, "gen_ai.conversation.id"),
        Some("session_1")
    );
    assert_eq!(
        string_attribute(&agent.attributes, "gen_ai.operation.name"),
        Some("invoke_agent")
    );
    assert_eq!(
        string_attribute(&agent.attributes, "gen_ai.agent.name"),
        Some("echo")
    );
    assert_eq!(
        string_attribute(&agent.attributes, "gen_ai.agent.description"),
        Some("Repeats what it hears.")
    );
    assert_eq!(
        string_attribute(&model.attributes, "gen_ai.request.model"),
        Some("echo-model")
    );
    assert_eq!(
        string_attribute(&model.attributes, "gen_ai.response.finish_reasons"),
        Some("stop")
    );
    assert_eq!(
        int_attribute(&model.attributes, "gen_ai.usage.input_tokens"),
        Some(11)
    );
    assert_eq!(
        int_attribute(&model.attributes, "gen_ai.usage.output_tokens"),
        Some(3)
    );
    assert_eq!(
        string_attribute(&tool.attributes, "gen_ai.tool.call.id"),
        Some("adk-call-1")
    );
    assert_eq!(
        string_attribute(&tool.attributes, "gen_ai.tool.description"),
        Some("Tells the time.")
    );
    // Content capture is off by default: no arguments or bodies left the process.
    assert_eq!(
        string_attribute(&tool.attributes, "gcp.vertex.agent.tool_call_args"),
        None
    );
    assert_eq!(
        string_attribute(&model.attributes, "gcp.vertex.agent.llm_request"),
        None
    );

    metric_names.sort_unstable();
    metric_names.dedup();
    assert_eq!(
        metric_names,
        [
            "adk.model.calls",
            "gen_ai.client.operation.duration",
            "gen_ai.client.token.usage",
            "gen_ai.execute_tool.duration",
            "gen_ai.invoke_agent.duration",
        ]
    );
}
