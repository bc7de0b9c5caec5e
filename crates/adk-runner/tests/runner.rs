//! The runner's core: which agent takes the turn, what is stored, limits, stale sessions, and
//! cancellation by dropping the stream.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use adk_core::{
    Content, CreateSessionRequest, ErrorKind, Event, GetSessionRequest, InvocationContext,
    LlmResponse, Result, RunConfig, SessionKey, SessionService, StreamingMode,
};
use adk_flow::Plugin;
use adk_runner::{RunRequest, Runner};
use adk_session::SqliteSessionService;
use adk_test::{ClosureTool, ScriptedModel, SequentialIds, StepClock, render_events};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use expect_test::expect;
use futures::StreamExt as _;
use serde_json::Value;
use serde_json::json;
use support::{APP, SESSION, USER, agent, check, run, run_with, runner, stored};

fn transfer(to: &str) -> (&'static str, serde_json::Value) {
    ("transfer_to_agent", json!({"agent_name": to}))
}

#[tokio::test]
async fn an_agent_transferred_to_keeps_the_next_turn() {
    let (name, args) = transfer("billing");
    let model = ScriptedModel::new("m")
        .then_call(name, args)
        .then_text("Billing here: refund started.")
        .then_text("Billing again: done.");
    let billing = agent("billing", &model)
        .description("Refunds.")
        .build()
        .unwrap();
    let root = agent("desk", &model).sub_agent(billing).build().unwrap();
    let runner = runner(Arc::new(root)).build().unwrap();

    check(
        &run(&runner, "I want a refund").await,
        expect![[r#"
            desk: call transfer_to_agent {"agent_name":"billing"}
            desk: response transfer_to_agent {"result":null} [transfer billing]
            billing: "Billing here: refund started."
        "#]],
    );
    check(
        &run(&runner, "Is it done?").await,
        expect![[r#"
            billing: "Billing again: done."
        "#]],
    );
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn an_agent_that_may_not_return_to_its_parent_gives_the_turn_back_to_the_root() {
    let (name, args) = transfer("billing");
    let model = ScriptedModel::new("m")
        .then_call(name, args)
        .then_text("Billing here.")
        .then_text("Desk here.");
    let billing = agent("billing", &model)
        .disallow_transfer_to_parent(true)
        .build()
        .unwrap();
    let root = agent("desk", &model).sub_agent(billing).build().unwrap();
    let runner = runner(Arc::new(root)).build().unwrap();
    run(&runner, "refund").await;
    check(
        &run(&runner, "anything else").await,
        expect![[r#"
            desk: "Desk here."
        "#]],
    );
}

#[tokio::test]
async fn the_llm_call_limit_ends_the_run_with_a_typed_error() {
    let model = ScriptedModel::new("m")
        .then_call("ping", json!({}))
        .then_call("ping", json!({}))
        .then_call("ping", json!({}));
    let pinger = agent("pinger", &model)
        .tool(ClosureTool::shared("ping", |_, _| {
            Ok(json!({"pong": true}))
        }))
        .build()
        .unwrap();
    let runner = runner(Arc::new(pinger)).build().unwrap();
    let outcome = run_with(
        &runner,
        Content::user("ping forever"),
        // The loop guard would end this turn first; the limit on model calls is what is tested.
        RunConfig::default()
            .with_max_llm_calls(2)
            .with_max_repeated_tool_calls(0),
    )
    .await;
    check(
        &outcome,
        expect![[r#"
            pinger: call ping {}
            pinger: response ping {"pong":true}
            pinger: call ping {}
            pinger: response ping {"pong":true}
            error: llm_calls_limit_exceeded: the invocation exceeded its limit of 2 model calls; raise RunConfig::max_llm_calls if this is expected
        "#]],
    );
    assert_eq!(
        outcome.error.unwrap().kind(),
        ErrorKind::LlmCallsLimitExceeded
    );
    // The user's message and the four events are stored; nothing of the refused third call.
    assert_eq!(stored(&runner).await.events.len(), 5);
}

#[tokio::test]
async fn partial_events_are_yielded_but_only_complete_ones_are_stored() {
    let chunk = |text: &str| {
        let mut response = LlmResponse::new(Content::model(text));
        response.partial = Some(true);
        response
    };
    let done = LlmResponse::new(Content::model("Hello there"));
    let model = ScriptedModel::new("m").then_stream(vec![chunk("Hello"), chunk(" there"), done]);
    let greeter = agent("greeter", &model)
        .output_key("temp:last")
        .build()
        .unwrap();
    let runner = runner(Arc::new(greeter)).build().unwrap();
    let outcome = run_with(
        &runner,
        Content::user("hi"),
        RunConfig::default().with_streaming_mode(StreamingMode::Sse),
    )
    .await;
    check(
        &outcome,
        expect![[r#"
            greeter: (partial) "Hello"
            greeter: (partial) " there"
            greeter: "Hello there" [temp:last="Hello there"]
        "#]],
    );
    let session = stored(&runner).await;
    expect![[r#"
        user: "hi"
        greeter: "Hello there"
    "#]]
    .assert_eq(&render_events(&session.events));
    assert!(!session.state.contains_key("temp:last"));
}

#[tokio::test]
async fn the_run_config_custom_metadata_reaches_every_event() {
    let done = LlmResponse::new(Content::model("Hello there"));
    let mut partial = LlmResponse::new(Content::model("Hello"));
    partial.partial = Some(true);
    let model = ScriptedModel::new("m")
        .then_call("ping", json!({}))
        .then_stream(vec![partial, done]);
    let pinger = agent("pinger", &model)
        .tool(ClosureTool::shared("ping", |_, _| {
            Ok(json!({"pong": true}))
        }))
        .build()
        .unwrap();
    let runner = runner(Arc::new(pinger)).build().unwrap();
    let mut config = RunConfig::default().with_streaming_mode(StreamingMode::Sse);
    config.custom_metadata = json!({"tenant": "acme"}).as_object().unwrap().clone();
    let outcome = run_with(&runner, Content::user("ping"), config).await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let expected = Some(json!({"tenant": "acme"}).as_object().unwrap().clone());
    assert_eq!(outcome.events.len(), 4, "call, response, partial, final");
    for event in &outcome.events {
        assert_eq!(event.response.custom_metadata, expected, "{event:?}");
    }
    let stored = stored(&runner).await;
    assert_eq!(
        stored.events.len(),
        4,
        "the user's message and three complete events"
    );
    for event in &stored.events {
        assert_eq!(event.response.custom_metadata, expected, "{event:?}");
    }
}

/// Writes to the session behind the runner's back when the agent calls a tool.
struct Interloper;

#[async_trait]
impl Plugin for Interloper {
    fn name(&self) -> &str {
        "interloper"
    }

    async fn on_event(&self, ctx: &InvocationContext, event: &Event) -> Result<Option<Event>> {
        if event.function_calls().next().is_some() {
            let sessions = ctx.session_service().unwrap();
            let key = ctx.session_key().clone();
            let mut session = sessions
                .get_session(GetSessionRequest::new(key))
                .await?
                .unwrap();
            let note = Event::new(ctx.invocation_id().clone(), "user")
                .with_content(Content::user("written elsewhere"));
            sessions.append_event(&mut session, note).await?;
        }
        Ok(None)
    }
}

#[tokio::test]
async fn a_session_changed_elsewhere_ends_the_run_with_a_stale_session_error() {
    let model = ScriptedModel::new("m").then_call("ping", json!({}));
    let pinger = agent("pinger", &model)
        .tool(ClosureTool::shared("ping", |_, _| {
            Ok(json!({"pong": true}))
        }))
        .build()
        .unwrap();
    let runner = runner(Arc::new(pinger)).plugin(Interloper).build().unwrap();
    let outcome = run(&runner, "ping").await;
    assert!(outcome.events.is_empty(), "{}", outcome.render());
    assert_eq!(outcome.error.unwrap().kind(), ErrorKind::StaleSession);
    // The other writer's event is stored; the runner's call event is not.
    expect![[r#"
        user: "ping"
        user: "written elsewhere"
    "#]]
    .assert_eq(&render_events(&stored(&runner).await.events));
}

/// Blocks every tool call until the run is cancelled, and reports the cancellation.
struct BlockTools {
    cancelled: Arc<AtomicBool>,
    notify: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl Plugin for BlockTools {
    fn name(&self) -> &str {
        "block_tools"
    }

    async fn before_tool(
        &self,
        _tool: &dyn Tool,
        _args: &mut Value,
        ctx: &ToolContext,
    ) -> Result<Option<Value>> {
        let token = ctx.cancellation().clone();
        let (cancelled, notify) = (self.cancelled.clone(), self.notify.clone());
        tokio::spawn(async move {
            token.cancelled().await;
            cancelled.store(true, Ordering::SeqCst);
            notify.notify_one();
        });
        futures::future::pending().await
    }
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_run_and_stores_nothing_more() {
    let model = ScriptedModel::new("m").then_call("ping", json!({}));
    let pinger = agent("pinger", &model)
        .tool(ClosureTool::shared("ping", |_, _| {
            Ok(json!({"pong": true}))
        }))
        .build()
        .unwrap();
    let cancelled = Arc::new(AtomicBool::new(false));
    let notify = Arc::new(tokio::sync::Notify::new());
    let runner = runner(Arc::new(pinger))
        .plugin(BlockTools {
            cancelled: cancelled.clone(),
            notify: notify.clone(),
        })
        .build()
        .unwrap();
    let mut stream = Box::pin(runner.run(USER, SESSION, "ping"));
    let call = stream.next().await.unwrap().unwrap();
    assert_eq!(call.function_calls().count(), 1);
    let blocked = tokio::time::timeout(Duration::from_millis(50), stream.next()).await;
    assert!(blocked.is_err(), "the tool call is blocked");
    assert!(!cancelled.load(Ordering::SeqCst));
    drop(stream);
    // A guard against a hang only: the token fires at once, on any machine.
    tokio::time::timeout(Duration::from_secs(120), notify.notified())
        .await
        .expect("the run's cancellation token fires when the stream is dropped");
    assert!(cancelled.load(Ordering::SeqCst));
    expect![[r#"
        user: "ping"
        pinger: call ping {}
    "#]]
    .assert_eq(&render_events(&stored(&runner).await.events));
}

#[tokio::test]
async fn a_missing_session_is_an_error_unless_sessions_are_created_on_use() {
    let model = ScriptedModel::new("m");
    let root = Arc::new(agent("root", &model).build().unwrap());
    let runner = runner(root).auto_create_session(false).build().unwrap();
    check(
        &run(&runner, "hi").await,
        expect![[r#"
            error: not_found: session 's-1' of user 'ada' in app 'app' does not exist; create it first, or build the runner with auto_create_session(true)
        "#]],
    );
}

#[tokio::test]
async fn runs_are_stored_in_sqlite_with_the_state_delta_of_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = Arc::new(
        SqliteSessionService::open(dir.path().join("sessions.db"))
            .await
            .unwrap(),
    );
    sessions
        .create_session(CreateSessionRequest::new(APP, USER).with_session_id(SESSION))
        .await
        .unwrap();
    let model = ScriptedModel::new("m").then_text("Noted.");
    let root = Arc::new(agent("root", &model).output_key("answer").build().unwrap());
    let runner = Runner::builder(APP, root, sessions.clone())
        .ids(Arc::new(SequentialIds::default()))
        .clock(Arc::new(StepClock::default()))
        .build()
        .unwrap();
    let mut delta = serde_json::Map::new();
    delta.insert("user:name".into(), json!("Ada"));
    let outcome = support::run_request(
        &runner,
        RunRequest::new(USER, SESSION)
            .message(Content::user("Remember me"))
            .state_delta(delta),
    )
    .await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    let session = sessions
        .get_session(GetSessionRequest::new(SessionKey::new(APP, USER, SESSION)))
        .await
        .unwrap()
        .unwrap();
    expect![[r#"
        user: "Remember me" [user:name="Ada"]
        root: "Noted." [answer="Noted."]
    "#]]
    .assert_eq(&render_events(&session.events));
    assert_eq!(session.state["user:name"], json!("Ada"));
    assert_eq!(session.state["answer"], json!("Noted."));
}

#[tokio::test]
async fn a_message_with_a_function_call_is_rejected() {
    let model = ScriptedModel::new("m");
    let root = Arc::new(agent("root", &model).build().unwrap());
    let runner = runner(root).build().unwrap();
    let message = Content::new(
        adk_core::Role::User,
        [adk_core::Part::function_call(adk_core::FunctionCall::new(
            "transfer_money",
            json!({"amount": 1}),
        ))],
    );
    check(
        &run_with(&runner, message, RunConfig::default()).await,
        expect![[r#"
            error: invalid_input: the message holds a call of `transfer_money`; only agents make function calls; the message was not stored and no tool ran
        "#]],
    );
}

#[tokio::test]
async fn resuming_needs_a_resumable_runner() {
    let model = ScriptedModel::new("m").then_text("hi");
    let root = Arc::new(agent("root", &model).build().unwrap());
    let runner = runner(root).build().unwrap();
    let first = run(&runner, "hello").await;
    let outcome = support::run_request(
        &runner,
        RunRequest::new(USER, SESSION).resume(first.events[0].invocation_id.clone()),
    )
    .await;
    check(
        &outcome,
        expect![[r#"
            error: config: cannot resume invocation 'e-00000000-0000-4000-8000-000000000001': the runner is not resumable; build it with resumable(true)
        "#]],
    );
}

#[tokio::test]
async fn input_blobs_are_saved_as_artifacts_when_asked() {
    let artifacts = Arc::new(adk_session::InMemoryArtifactService::new());
    let model = ScriptedModel::new("m").then_text("Nice picture.");
    let root = Arc::new(agent("root", &model).build().unwrap());
    let runner = runner(root)
        .artifact_service(artifacts.clone())
        .build()
        .unwrap();
    let message = Content::user("Look at this")
        .with_part(adk_core::Part::inline_data("image/png", vec![1_u8, 2, 3]));
    let mut config = RunConfig::default();
    config.save_input_blobs_as_artifacts = true;
    run_with(&runner, message, config).await;
    let session = stored(&runner).await;
    expect![[r#"
        user: "Look at this" "Uploaded file: artifact_e-00000000-0000-4000-8000-000000000001_1. It is saved into artifacts" [artifact artifact_e-00000000-0000-4000-8000-000000000001_1 v0]
        root: "Nice picture."
    "#]]
    .assert_eq(&render_events(&session.events));
    let saved = adk_core::ArtifactService::list_artifact_keys(artifacts.as_ref(), &session.key())
        .await
        .unwrap();
    assert_eq!(saved.len(), 1);
}

#[tokio::test]
async fn a_function_response_goes_to_the_agent_that_made_the_call() {
    let (name, args) = transfer("billing");
    let model = ScriptedModel::new("m")
        .then_call(name, args)
        .then_call("ask_approval", json!({"amount": 20}))
        .then_text("Refund approved and sent.");
    // Not sticky: without the function response the next turn would go to the root.
    let billing = agent("billing", &model)
        .disallow_transfer_to_parent(true)
        .tool(ClosureTool::long_running("ask_approval", |_, _| {
            Ok(Value::Null)
        }))
        .build()
        .unwrap();
    let root = agent("desk", &model).sub_agent(billing).build().unwrap();
    let runner = runner(Arc::new(root)).build().unwrap();
    let first = run(&runner, "refund please").await;
    let call = support::call_id(&first.events, "ask_approval");
    check(
        &support::answer(&runner, "ask_approval", call, json!({"approved": true})).await,
        expect![[r#"
            billing: "Refund approved and sent."
        "#]],
    );
}
