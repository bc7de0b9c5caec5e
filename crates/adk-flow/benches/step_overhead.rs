//! Per-step overhead of the flow at 100, 1,000 and 10,000 events of history.
//!
//! The model answers every call at once with one function call, and the tool answers at once, so
//! what is measured is the flow itself: building the request (the contents processor's cached
//! history included), finalizing events, running the call, and applying the events to the session
//! as the runner does. One iteration is one step of a long invocation; the cost should not grow
//! with the history. Run with `cargo bench -p adk-flow`.
//!
//! `compacted_flow_step` does the same after a compaction event that summarizes all of the history
//! but its last two events, at 10, 1,000 and 10,000 events: the model then sees the summary, and
//! the step's cost should not depend on how many events it replaced.

use std::cell::RefCell;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Agent, Content, Event, EventActions, EventCompaction, EventStream, FunctionCall,
    FunctionDeclaration, InvocationContext, InvocationId, Llm, LlmRequest, LlmResponse,
    LlmResponseStream, Part, Role, RunConfig, Session, SessionKey, StreamingMode,
};
use adk_flow::LlmAgent;
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use futures::StreamExt as _;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A model that always asks for the `noop` tool, at once.
struct CallingModel;

impl Llm for CallingModel {
    fn name(&self) -> &str {
        "calling"
    }

    fn generate(&self, _request: LlmRequest, _mode: StreamingMode) -> LlmResponseStream {
        let call = Part::function_call(FunctionCall::new("noop", json!({"n": 1})));
        let response = LlmResponse::new(Content::new(Role::Model, [call]));
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

/// A session with `events` events of history: user questions and the agent's answers.
fn session_with_history(events: usize) -> Session {
    let mut session = Session::new(SessionKey::new("bench", "user", "session"));
    for i in 0..events {
        let (author, content) = if i % 2 == 0 {
            (
                "user",
                Content::user(format!("question {i}: what is the weather like today?")),
            )
        } else {
            (
                "agent",
                Content::model(format!("answer {i}: it is sunny and 21 degrees.")),
            )
        };
        let mut event = Event::new(InvocationId::from("e-history"), author).with_content(content);
        // Distinct timestamps in order, so that a compaction's range is exact.
        event.timestamp = i as f64 + 1.0;
        session.apply_event(event, i as u64 + 1);
    }
    session
}

/// `session` with a compaction event summarizing all of its events but the last two, as the
/// runner appends one.
fn compacted(mut session: Session) -> Session {
    let covered = session.events.len().saturating_sub(2).max(1);
    let mut actions = EventActions::default();
    actions.compaction = Some(EventCompaction {
        start_timestamp: session.events[0].timestamp,
        end_timestamp: session.events[covered - 1].timestamp,
        compacted_content: Content::model(format!(
            "The user asked {covered} questions about the weather; it was sunny and 21 degrees."
        )),
    });
    let mut event = Event::new(InvocationId::from("e-compaction"), "user").with_actions(actions);
    event.timestamp = session.events[session.events.len() - 1].timestamp + 0.5;
    let revision = session.revision + 1;
    session.apply_event(event, revision);
    session
}

/// A running invocation that is advanced one step at a time.
struct Invocation {
    runtime: tokio::runtime::Runtime,
    ctx: InvocationContext,
    events: EventStream,
}

impl Invocation {
    fn start(session: Session) -> Self {
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
        let ctx = InvocationContext::builder(agent.clone(), session)
            .user_content(Content::user("go"))
            // Thousands of steps in one invocation: lift the default limit of 500 model calls.
            .run_config(RunConfig::default().with_max_llm_calls(0))
            .build()
            .unwrap();
        let events = agent.run(ctx.clone());
        let mut invocation = Self {
            runtime,
            ctx,
            events,
        };
        // The first step converts the whole history once; the measured steps start after it.
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

// Each iteration adds two events; bounded samples keep the history near its nominal size.
#[divan::bench(args = [100, 1_000, 10_000], sample_count = 100, sample_size = 10)]
fn flow_step(bencher: divan::Bencher<'_, '_>, history: usize) {
    let invocation = RefCell::new(Invocation::start(session_with_history(history)));
    bencher.bench_local(|| invocation.borrow_mut().step());
}

// The same step when a compaction summarizes all of the history but its last two events.
#[divan::bench(args = [10, 1_000, 10_000], sample_count = 100, sample_size = 10)]
fn compacted_flow_step(bencher: divan::Bencher<'_, '_>, history: usize) {
    let invocation = RefCell::new(Invocation::start(compacted(session_with_history(history))));
    bencher.bench_local(|| invocation.borrow_mut().step());
}
