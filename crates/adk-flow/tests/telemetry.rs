//! The span tree of scripted runs, captured through `tracing-opentelemetry` by an in-memory
//! OpenTelemetry exporter and rendered as text: names, nesting, and the attributes ADK records.

mod support;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Agent, Content, Event, FinishReason, IdGen as _, InvocationContext, LlmResponse, Services,
    Session, SessionKey, USER_AUTHOR, UsageMetadata,
};
use adk_flow::LlmAgent;
use adk_test::{ScriptedModel, SequentialIds, StepClock};
use expect_test::{Expect, expect};
use futures::StreamExt as _;
use opentelemetry::trace::{SpanId, Status, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use support::{agent, tool, weather_tool};
use tracing_subscriber::layer::SubscriberExt as _;

/// Runs `agent` on `message` as the runner does, inside the invocation span, and compares the
/// span tree with `expected`.
async fn check(agent: impl Agent + 'static, message: &str, expected: Expect) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("adk-flow-tests"))
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_location(false);
    let subscriber = tracing_subscriber::registry().with(layer);
    {
        // Thread-local, so that tests running at the same time keep their spans apart.
        let _default = tracing::subscriber::set_default(subscriber);
        run_invocation(Arc::new(agent), message).await;
    }
    provider.force_flush().unwrap();
    expected.assert_eq(&render_tree(&exporter.get_finished_spans().unwrap()));
}

/// What the runner does: the user's message in a fresh session, then the agent's events in the
/// invocation span, each non-partial one applied to the session.
async fn run_invocation(agent: Arc<dyn Agent>, message: &str) {
    let ids = Arc::new(SequentialIds::default());
    let clock = Arc::new(StepClock::default());
    let invocation_id = ids.invocation_id();
    let mut session = Session::new(SessionKey::new("app", "user", "session_1"));
    let user_event = Event::with_ids_and_clock(
        invocation_id.clone(),
        USER_AUTHOR,
        ids.as_ref(),
        clock.as_ref(),
    )
    .with_content(Content::user(message));
    session.apply_event(user_event, 1);
    let mut services = Services::default();
    services.ids = ids;
    services.clock = clock;
    let ctx = InvocationContext::builder(agent.clone(), session)
        .invocation_id(invocation_id)
        .user_content(Content::user(message))
        .services(services)
        .build()
        .unwrap();
    let mut events = adk_telemetry::trace_invocation(ctx.clone(), agent.run(ctx.clone()));
    while let Some(event) = events.next().await {
        let event = event.expect("the run succeeds");
        if !event.is_partial() {
            ctx.with_session_mut(|session| {
                let revision = session.revision + 1;
                session.apply_event(event, revision);
            });
        }
    }
}

/// One span per line, children indented under their parent in the order they started, each with
/// its ADK and GenAI attributes (sorted, ids shortened, values an ancestor showed left out) and
/// `!error` when its status is an error.
fn render_tree(spans: &[SpanData]) -> String {
    let mut children: HashMap<SpanId, Vec<&SpanData>> = HashMap::new();
    for span in spans {
        children.entry(span.parent_span_id).or_default().push(span);
    }
    for siblings in children.values_mut() {
        siblings.sort_by_key(|span| span.start_time);
    }
    let mut out = String::new();
    let roots = children.get(&SpanId::INVALID).cloned().unwrap_or_default();
    for root in roots {
        render_span(root, 0, &children, &mut out);
    }
    out
}

fn render_span(
    span: &SpanData,
    depth: usize,
    children: &HashMap<SpanId, Vec<&SpanData>>,
    out: &mut String,
) {
    render_span_under(span, depth, children, &HashMap::new(), out);
}

/// Renders `span` under ancestors whose attributes are `inherited`; an attribute with the value
/// an ancestor already showed (the invocation and session ids) is not repeated.
fn render_span_under(
    span: &SpanData,
    depth: usize,
    children: &HashMap<SpanId, Vec<&SpanData>>,
    inherited: &HashMap<String, String>,
    out: &mut String,
) {
    let mut shown = inherited.clone();
    let mut attributes: Vec<String> = Vec::new();
    for kv in &span.attributes {
        let key = kv.key.as_str();
        if !(key.starts_with("gen_ai.") || key.starts_with("gcp.") || key.starts_with("error.")) {
            continue;
        }
        let value = short_ids(&kv.value.to_string());
        if inherited.get(key) == Some(&value) {
            continue;
        }
        attributes.push(format!("{key}={value}"));
        shown.insert(key.to_owned(), value);
    }
    attributes.sort();
    let error = if matches!(span.status, Status::Error { .. }) {
        " !error"
    } else {
        ""
    };
    let _ = writeln!(out, "{}{}{error}", "  ".repeat(depth), span.name);
    for attribute in attributes {
        let _ = writeln!(out, "{}  · {attribute}", "  ".repeat(depth));
    }
    for child in children
        .get(&span.span_context.span_id())
        .into_iter()
        .flatten()
    {
        render_span_under(child, depth + 1, children, &shown, out);
    }
}

/// `e-00000000-0000-4000-8000-000000000007` becomes `e-7`: the sequential test ids, readable. An
/// id from a real UUID generator becomes `<uuid>`.
fn short_ids(value: &str) -> String {
    const UUID_PREFIX: &str = "00000000-0000-4000-8000-";
    let Some((before, after)) = value.split_once(UUID_PREFIX) else {
        let bytes = value.as_bytes();
        let is_uuid = bytes.len() == 36
            && [8, 13, 18, 23].iter().all(|&i| bytes[i] == b'-')
            && value.chars().all(|c| c == '-' || c.is_ascii_hexdigit());
        return if is_uuid {
            "<uuid>".to_owned()
        } else {
            value.to_owned()
        };
    };
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let rest = &after[digits.len()..];
    let number = digits.trim_start_matches('0');
    format!(
        "{before}{}{}",
        if number.is_empty() { "0" } else { number },
        short_ids(rest)
    )
}

/// A final text answer with a finish reason and token usage, as providers report them.
fn answer(text: &str) -> LlmResponse {
    let mut response = LlmResponse::new(Content::model(text));
    response.finish_reason = Some(FinishReason::Stop);
    response.usage_metadata = Some(UsageMetadata::new(42, 7));
    response
}

#[tokio::test]
async fn a_single_agent_calls_the_model_then_a_tool_then_the_model() {
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then(answer("It is sunny in Paris."));
    let agent = agent("weather_agent", &model)
        .description("Answers questions about the weather.")
        .tool(weather_tool())
        .build()
        .unwrap();
    check(
        agent,
        "Weather in Paris?",
        expect![[r#"
        invocation
          · gcp.vertex.agent.invocation_id=e-1
          · gen_ai.conversation.id=session_1
          invoke_agent weather_agent
            · gen_ai.agent.description=Answers questions about the weather.
            · gen_ai.agent.name=weather_agent
            · gen_ai.operation.name=invoke_agent
            call_llm
              · gcp.vertex.agent.event_id=3
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted
                · gen_ai.operation.name=generate_content
              execute_tool get_weather
                · gen_ai.operation.name=execute_tool
                · gen_ai.tool.call.id=adk-4
                · gen_ai.tool.description=a test tool
                · gen_ai.tool.name=get_weather
            call_llm
              · gcp.vertex.agent.event_id=6
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted
                · gen_ai.operation.name=generate_content
                · gen_ai.response.finish_reasons=stop
                · gen_ai.usage.input_tokens=42
                · gen_ai.usage.output_tokens=7
    "#]],
    )
    .await;
}

#[tokio::test]
async fn a_transfer_runs_the_next_agent_inside_the_step_that_transferred() {
    let root_model = ScriptedModel::new("root_model")
        .then_call("transfer_to_agent", json!({"agent_name": "billing"}));
    let billing_model = ScriptedModel::new("billing_model").then(answer("Your bill is 42 EUR."));
    let billing = agent("billing", &billing_model)
        .description("Handles bills.")
        .build()
        .unwrap();
    let root = agent("root", &root_model)
        .description("Routes questions.")
        .sub_agent(billing)
        .build()
        .unwrap();
    check(root, "How much do I owe?", expect![[r#"
        invocation
          · gcp.vertex.agent.invocation_id=e-1
          · gen_ai.conversation.id=session_1
          invoke_agent root
            · gen_ai.agent.description=Routes questions.
            · gen_ai.agent.name=root
            · gen_ai.operation.name=invoke_agent
            call_llm
              · gcp.vertex.agent.event_id=3
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=root_model
              generate_content root_model
                · gen_ai.operation.name=generate_content
              execute_tool transfer_to_agent
                · gen_ai.operation.name=execute_tool
                · gen_ai.tool.call.id=adk-4
                · gen_ai.tool.description=Hands the conversation to the named agent, which answers the user from now on.
                · gen_ai.tool.name=transfer_to_agent
              invoke_agent billing
                · gen_ai.agent.description=Handles bills.
                · gen_ai.agent.name=billing
                call_llm
                  · gcp.vertex.agent.event_id=6
                  · gen_ai.request.model=billing_model
                  generate_content billing_model
                    · gen_ai.operation.name=generate_content
                    · gen_ai.response.finish_reasons=stop
                    · gen_ai.usage.input_tokens=42
                    · gen_ai.usage.output_tokens=7
    "#]]).await;
}

#[tokio::test]
async fn parallel_tool_calls_run_inside_one_merged_span() {
    let model = ScriptedModel::new("scripted")
        .then_calls(&[
            ("get_weather", json!({"city": "Paris"})),
            ("get_time", json!({"city": "Oslo"})),
        ])
        .then(answer("Sunny in Paris; noon in Oslo."));
    let agent = agent("weather_agent", &model)
        .tool(weather_tool())
        .tool(tool("get_time", |_, _| Ok(json!({"time": "12:00"}))))
        .build()
        .unwrap();
    check(
        agent,
        "Paris weather and Oslo time?",
        expect![[r#"
        invocation
          · gcp.vertex.agent.invocation_id=e-1
          · gen_ai.conversation.id=session_1
          invoke_agent weather_agent
            · gen_ai.agent.description=
            · gen_ai.agent.name=weather_agent
            · gen_ai.operation.name=invoke_agent
            call_llm
              · gcp.vertex.agent.event_id=3
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted
                · gen_ai.operation.name=generate_content
              execute_tool (merged)
                · gcp.vertex.agent.event_id=6
                · gen_ai.operation.name=execute_tool
                · gen_ai.tool.call.id=6
                · gen_ai.tool.description=(merged tools)
                · gen_ai.tool.name=(merged tools)
                execute_tool get_weather
                  · gen_ai.tool.call.id=adk-4
                  · gen_ai.tool.description=a test tool
                  · gen_ai.tool.name=get_weather
                execute_tool get_time
                  · gen_ai.tool.call.id=adk-5
                  · gen_ai.tool.description=a test tool
                  · gen_ai.tool.name=get_time
            call_llm
              · gcp.vertex.agent.event_id=7
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted
                · gen_ai.operation.name=generate_content
                · gen_ai.response.finish_reasons=stop
                · gen_ai.usage.input_tokens=42
                · gen_ai.usage.output_tokens=7
    "#]],
    )
    .await;
}

#[tokio::test]
async fn failures_mark_their_spans_with_the_error_type() {
    let model = ScriptedModel::new("scripted")
        .then_call("broken", json!({}))
        .then_fail("quota exhausted");
    let agent: LlmAgent = agent("fragile", &model)
        .tool(tool("broken", |_, _| {
            Err(adk_core::Error::new(adk_core::ErrorKind::Tool, "disk full"))
        }))
        .on_model_error_callback(|_, _, _| Ok(Some(LlmResponse::new(Content::model("Sorry.")))))
        .build()
        .unwrap();
    check(
        agent,
        "Go",
        expect![[r#"
        invocation
          · gcp.vertex.agent.invocation_id=e-1
          · gen_ai.conversation.id=session_1
          invoke_agent fragile
            · gen_ai.agent.description=
            · gen_ai.agent.name=fragile
            · gen_ai.operation.name=invoke_agent
            call_llm
              · gcp.vertex.agent.event_id=3
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted
                · gen_ai.operation.name=generate_content
              execute_tool broken !error
                · error.type=tool
                · gen_ai.operation.name=execute_tool
                · gen_ai.tool.call.id=adk-4
                · gen_ai.tool.description=a test tool
                · gen_ai.tool.name=broken
            call_llm
              · gcp.vertex.agent.event_id=6
              · gcp.vertex.agent.session_id=session_1
              · gen_ai.request.model=scripted
              generate_content scripted !error
                · error.type=model
                · gen_ai.operation.name=generate_content
    "#]],
    )
    .await;
}

#[tokio::test]
async fn workflow_agents_and_agent_tools_nest_the_agents_they_run() {
    let writer_model = ScriptedModel::new("writer_model").then(answer("A draft."));
    let helper_model = ScriptedModel::new("helper_model").then(answer("A fact."));
    let reviewer_model = ScriptedModel::new("reviewer_model")
        .then_call("helper", json!({"request": "a fact"}))
        .then(answer("Reviewed."));
    let writer = agent("writer", &writer_model).build().unwrap();
    let helper = agent("helper", &helper_model)
        .description("Finds facts.")
        .build()
        .unwrap();
    let reviewer = agent("reviewer", &reviewer_model)
        .tool(adk_flow::AgentTool::new(helper))
        .build()
        .unwrap();
    let pipeline = adk_flow::SequentialAgent::builder("pipeline")
        .sub_agent(writer)
        .sub_agent(reviewer)
        .build()
        .unwrap();
    check(
        pipeline,
        "Write and review.",
        expect![[r#"
            invocation
              · gcp.vertex.agent.invocation_id=e-1
              · gen_ai.conversation.id=session_1
              invoke_agent pipeline
                · gen_ai.agent.description=
                · gen_ai.agent.name=pipeline
                · gen_ai.operation.name=invoke_agent
                invoke_agent writer
                  · gen_ai.agent.name=writer
                  call_llm
                    · gcp.vertex.agent.event_id=3
                    · gcp.vertex.agent.session_id=session_1
                    · gen_ai.request.model=writer_model
                    generate_content writer_model
                      · gen_ai.operation.name=generate_content
                      · gen_ai.response.finish_reasons=stop
                      · gen_ai.usage.input_tokens=42
                      · gen_ai.usage.output_tokens=7
                invoke_agent reviewer
                  · gen_ai.agent.name=reviewer
                  call_llm
                    · gcp.vertex.agent.event_id=4
                    · gcp.vertex.agent.session_id=session_1
                    · gen_ai.request.model=reviewer_model
                    generate_content reviewer_model
                      · gen_ai.operation.name=generate_content
                    execute_tool helper
                      · gen_ai.operation.name=execute_tool
                      · gen_ai.tool.call.id=adk-5
                      · gen_ai.tool.description=Finds facts.
                      · gen_ai.tool.name=helper
                      invoke_agent helper
                        · gcp.vertex.agent.invocation_id=e-7
                        · gen_ai.agent.description=Finds facts.
                        · gen_ai.agent.name=helper
                        · gen_ai.conversation.id=6
                        · gen_ai.operation.name=invoke_agent
                        call_llm
                          · gcp.vertex.agent.event_id=9
                          · gcp.vertex.agent.session_id=6
                          · gen_ai.request.model=helper_model
                          generate_content helper_model
                            · gen_ai.operation.name=generate_content
                            · gen_ai.response.finish_reasons=stop
                            · gen_ai.usage.input_tokens=42
                            · gen_ai.usage.output_tokens=7
                  call_llm
                    · gcp.vertex.agent.event_id=11
                    · gcp.vertex.agent.session_id=session_1
                    · gen_ai.request.model=reviewer_model
                    generate_content reviewer_model
                      · gen_ai.operation.name=generate_content
                      · gen_ai.response.finish_reasons=stop
                      · gen_ai.usage.input_tokens=42
                      · gen_ai.usage.output_tokens=7
        "#]],
    )
    .await;
}
