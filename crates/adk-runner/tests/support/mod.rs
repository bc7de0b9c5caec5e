//! What the runner's tests share: a runner on deterministic seams and in-memory sessions, and a
//! run rendered as a log to compare with an expected literal.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Content, Event, FunctionCallId, FunctionResponse, GetSessionRequest, IntoAgent,
    IntoSessionService, Part, Role, RunConfig, Session, SessionKey,
};
use adk_flow::{LlmAgent, LlmAgentBuilder};
use adk_runner::{RunRequest, Runner, RunnerBuilder};
use adk_session::InMemorySessionService;
use adk_test::{ClosureTool, ScriptedModel, SequentialIds, StepClock};
use adk_tool::{Tool, ToolContext};
use expect_test::Expect;
use serde_json::json;

pub(crate) const APP: &str = "app";
pub(crate) const USER: &str = "ada";
pub(crate) const SESSION: &str = "s-1";

/// A runner of `root` on in-memory sessions that are created on first use, with deterministic
/// ids and clock.
pub(crate) fn runner(root: impl IntoAgent) -> RunnerBuilder {
    runner_on(root, InMemorySessionService::new())
}

/// As [`runner`], with sessions kept in `sessions`.
pub(crate) fn runner_on(root: impl IntoAgent, sessions: impl IntoSessionService) -> RunnerBuilder {
    Runner::builder(APP, root, sessions)
        .auto_create_session(true)
        .ids(Arc::new(SequentialIds::default()))
        .clock(Arc::new(StepClock::default()))
}

/// An `LlmAgent` builder on `model`.
pub(crate) fn agent(name: &str, model: &ScriptedModel) -> LlmAgentBuilder {
    LlmAgent::builder(name).model(model.clone())
}

/// What a run yielded and the error that ended it.
pub(crate) use adk_test::RunOutcome as Outcome;

/// Runs `request` to its end.
pub(crate) async fn run_request(runner: &Runner, request: RunRequest) -> Outcome {
    Outcome::collect(runner.run_request(request)).await
}

/// Runs the user's `text` in the test session.
pub(crate) async fn run(runner: &Runner, text: &str) -> Outcome {
    run_with(runner, Content::user(text), RunConfig::default()).await
}

/// Runs `message` with `config` in the test session.
pub(crate) async fn run_with(runner: &Runner, message: Content, config: RunConfig) -> Outcome {
    run_request(
        runner,
        RunRequest::new(USER, SESSION)
            .message(message)
            .run_config(config),
    )
    .await
}

/// Answers call `id` of `name` with `response` in the test session.
pub(crate) async fn answer(
    runner: &Runner,
    name: &str,
    id: FunctionCallId,
    response: serde_json::Value,
) -> Outcome {
    run_request(
        runner,
        RunRequest::new(USER, SESSION)
            .function_responses([FunctionResponse::new(name, response).with_id(id)]),
    )
    .await
}

/// A user message of one function response.
pub(crate) fn response_message(name: &str, id: &str, response: serde_json::Value) -> Content {
    Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new(name, response).with_id(id),
        )],
    )
}

/// The test session as stored.
pub(crate) async fn stored(runner: &Runner) -> Session {
    runner
        .session_service()
        .get_session(GetSessionRequest::new(SessionKey::new(APP, USER, SESSION)))
        .await
        .unwrap()
        .expect("the test session exists")
}

/// The id of the first call of `name` among `events`.
pub(crate) fn call_id(events: &[Event], name: &str) -> FunctionCallId {
    events
        .iter()
        .flat_map(Event::function_calls)
        .find(|call| call.name == name)
        .and_then(|call| call.id.clone())
        .unwrap_or_else(|| panic!("no call of `{name}`"))
}

/// Compares the rendered run with `expected`.
pub(crate) fn check(outcome: &Outcome, expected: Expect) {
    expected.assert_eq(&outcome.render());
}

/// `transfer_money`, which asks for confirmation first and counts the transfers it made.
pub(crate) fn guarded_transfer(sent: Arc<AtomicUsize>) -> Arc<dyn Tool> {
    ClosureTool::shared("transfer_money", move |ctx: &ToolContext, args| {
        match ctx.tool_confirmation() {
            None => {
                ctx.request_confirmation("Send money?", Some(args.clone()))?;
                Ok(json!({"status": "awaiting confirmation"}))
            }
            Some(confirmation) if confirmation.confirmed => {
                sent.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"status": "sent", "amount": args["amount"]}))
            }
            Some(_) => Ok(json!({"status": "rejected"})),
        }
    })
}

/// A resumable runner of agent `banker` on `model`, with [`guarded_transfer`] counting in `sent`.
pub(crate) fn banker(model: &ScriptedModel, sent: &Arc<AtomicUsize>) -> Runner {
    let banker = agent("banker", model)
        .tool(guarded_transfer(sent.clone()))
        .build()
        .unwrap();
    runner(Arc::new(banker)).resumable(true).build().unwrap()
}
