//! What telemetry costs the flow: one step (a model call and the tool call it asks for) of a long
//! invocation, with telemetry off (no subscriber), with spans recorded by a `tracing` registry
//! only, with spans turned into OpenTelemetry spans but not exported, and with spans exported to
//! an in-memory exporter through the batch processor, as an OTLP exporter would be fed.
//!
//! The model and the tool answer at once, so the flow and its telemetry are all that is measured.
//! Run with `cargo bench -p adk-flow --bench telemetry_overhead`.

use std::cell::RefCell;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Agent, Content, Event, EventStream, FunctionCall, FunctionDeclaration, InvocationContext,
    InvocationId, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Role, RunConfig, Session,
    SessionKey, StreamingMode,
};
use adk_flow::LlmAgent;
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use futures::StreamExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{Value, json};
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt as _;

fn main() {
    divan::main();
}

/// A model that always asks for the `noop` tool, at once, and reports token usage.
struct CallingModel;

impl Llm for CallingModel {
    fn name(&self) -> &str {
        "calling"
    }

    fn generate(&self, _request: LlmRequest, _mode: StreamingMode) -> LlmResponseStream {
        let call = Part::function_call(FunctionCall::new("noop", json!({"n": 1})));
        let mut response = LlmResponse::new(Content::new(Role::Model, [call]));
        response.usage_metadata = Some(adk_core::UsageMetadata::new(120, 8));
        futures::stream::iter([Ok(response)]).boxed()
    }
}

struct Noop;

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn description(&self) -> &str {
        "does nothing"
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new("noop", "does nothing"))
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> adk_core::Result<Value> {
        Ok(json!({"ok": true}))
    }
}

/// A session with 100 events of history, so that a step does the usual request building.
fn session_with_history() -> Session {
    let mut session = Session::new(SessionKey::new("bench", "user", "session"));
    for i in 0..100 {
        let (author, content) = if i % 2 == 0 {
            ("user", Content::user(format!("question {i}: the weather?")))
        } else {
            ("agent", Content::model(format!("answer {i}: sunny.")))
        };
        let event = Event::new(InvocationId::from("e-history"), author).with_content(content);
        session.apply_event(event, i + 1);
    }
    session
}

/// A running invocation that is advanced one step at a time.
struct Invocation {
    runtime: tokio::runtime::Runtime,
    ctx: InvocationContext,
    events: EventStream,
}

impl Invocation {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let agent: Arc<dyn Agent> = Arc::new(
            LlmAgent::builder("agent")
                .model(CallingModel)
                .instruction("You call noop.")
                .tool(Noop)
                .build()
                .unwrap(),
        );
        let ctx = InvocationContext::builder(agent.clone(), session_with_history())
            .user_content(Content::user("go"))
            .run_config(RunConfig::default().with_max_llm_calls(u32::MAX))
            .build()
            .unwrap();
        let events = agent.run(ctx.clone());
        let mut invocation = Self {
            runtime,
            ctx,
            events,
        };
        invocation.step();
        invocation
    }

    /// One step: the model's call event and the tool's response event, applied to the session.
    fn step(&mut self) {
        for _ in 0..2 {
            let event = self
                .runtime
                .block_on(self.events.next())
                .expect("the flow goes on")
                .expect("the step succeeds");
            self.ctx.with_session_mut(|session| {
                let revision = session.revision + 1;
                session.apply_event(event, revision);
            });
        }
    }
}

/// How the spans of the run are handled.
#[derive(Debug, Clone, Copy)]
enum Telemetry {
    /// No subscriber: spans are disabled at their call sites.
    Off,
    /// A `tracing_subscriber::Registry`: spans are created and their fields kept, nothing more.
    Registry,
    /// The OpenTelemetry layer with a tracer provider that has no exporter.
    OtelNoExporter,
    /// The OpenTelemetry layer exporting through a batch processor to an in-memory exporter.
    OtelExporter,
}

impl Telemetry {
    /// The subscriber, and the provider to keep alive while it runs.
    fn dispatch(self) -> (Dispatch, Option<SdkTracerProvider>) {
        let provider = match self {
            Self::Off => return (Dispatch::none(), None),
            Self::Registry => return (Dispatch::new(tracing_subscriber::registry()), None),
            Self::OtelNoExporter => SdkTracerProvider::builder().build(),
            Self::OtelExporter => SdkTracerProvider::builder()
                .with_batch_exporter(InMemorySpanExporter::default())
                .build(),
        };
        let layer = tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("bench"))
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false);
        let subscriber = tracing_subscriber::registry().with(layer);
        (Dispatch::new(subscriber), Some(provider))
    }
}

impl std::fmt::Display for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Off => "off",
            Self::Registry => "registry",
            Self::OtelNoExporter => "otel_no_exporter",
            Self::OtelExporter => "otel_exporter",
        })
    }
}

#[divan::bench(
    args = [Telemetry::Off, Telemetry::Registry, Telemetry::OtelNoExporter, Telemetry::OtelExporter],
    sample_count = 200,
    sample_size = 10
)]
fn flow_step(bencher: divan::Bencher<'_, '_>, telemetry: Telemetry) {
    let (dispatch, provider) = telemetry.dispatch();
    let _default = tracing::dispatcher::set_default(&dispatch);
    let invocation = RefCell::new(Invocation::start());
    bencher.bench_local(|| invocation.borrow_mut().step());
    drop(invocation);
    if let Some(provider) = provider {
        let _ = provider.shutdown();
    }
}
