//! Resuming an invocation a crash cut off: its events are stored as a process that died would
//! have left them (the user's message, then the model's call without its answer, or the message
//! alone), and the next message to the session, or `Runner::resume_interrupted`, continues it
//! from its last stored event. The scripted model counts its calls: answers already stored are
//! not asked for again.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Content, CreateSessionRequest, Event, FunctionCall, InvocationId, Part, Role, RunConfig,
    SessionKey, SessionService, USER_AUTHOR,
};
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use adk_test::{ClosureTool, ScriptedModel};
use futures::TryStreamExt as _;
use serde_json::json;
use support::{APP, SESSION, USER, agent};

/// A session holding invocation `e-cut` as a crash left it: the user's message, and, when
/// `with_call`, the model's call of `lookup` with no answer.
async fn cut_off_session(with_call: bool) -> Arc<dyn SessionService> {
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let mut session = sessions
        .create_session(CreateSessionRequest::new(APP, USER).with_session_id(SESSION))
        .await
        .unwrap();
    let invocation = InvocationId::from("e-cut");
    let message =
        Event::new(invocation.clone(), USER_AUTHOR).with_content(Content::user("look it up"));
    sessions.append_event(&mut session, message).await.unwrap();
    if with_call {
        let call = FunctionCall::new("lookup", json!({"q": "x"})).with_id("adk-call-1");
        let model = Event::new(invocation, "assistant")
            .with_content(Content::new(Role::Model, [Part::function_call(call)]));
        sessions.append_event(&mut session, model).await.unwrap();
    }
    sessions
}

/// The runner of `assistant` on `model` with the `lookup` tool counting its runs.
fn runner(
    sessions: Arc<dyn SessionService>,
    model: &ScriptedModel,
    lookups: &Arc<AtomicUsize>,
) -> Runner {
    let lookups = lookups.clone();
    let assistant = agent("assistant", model)
        .tool(ClosureTool::shared("lookup", move |_ctx, _args| {
            lookups.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"found": "x"}))
        }))
        .build()
        .unwrap();
    Runner::builder(APP, assistant, sessions)
        .resume_interrupted(true)
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_next_message_first_continues_the_invocation_a_crash_cut_off() {
    let sessions = cut_off_session(true).await;
    let model = ScriptedModel::new("scripted")
        .then_text("found x")
        .then_text("and hello to you");
    let lookups = Arc::new(AtomicUsize::new(0));
    let runner = runner(sessions.clone(), &model, &lookups);
    let events: Vec<Event> = runner
        .run(USER, SESSION, "hello")
        .try_collect()
        .await
        .unwrap();

    // The cut-off call ran once, the model was asked twice: once to read its result, once for
    // the new message; the call it had already made was not asked for again.
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 2);
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(events[0].invocation_id, InvocationId::from("e-cut"));
    assert!(events[0].function_responses().next().is_some());
    assert_eq!(events[1].text().as_deref(), Some("found x"));
    assert_eq!(events[1].invocation_id, InvocationId::from("e-cut"));
    assert_eq!(events[2].text().as_deref(), Some("and hello to you"));
    assert_ne!(events[2].invocation_id, InvocationId::from("e-cut"));

    // Stored in order: the cut-off invocation completed, then the new one.
    let stored = sessions
        .get_session(adk_core::GetSessionRequest::new(SessionKey::new(
            APP, USER, SESSION,
        )))
        .await
        .unwrap()
        .unwrap();
    let texts: Vec<Option<String>> = stored.events.iter().map(Event::text).collect();
    assert_eq!(stored.events.len(), 6, "{texts:?}");
    assert_eq!(stored.events[4].text().as_deref(), Some("hello"));
    assert_eq!(stored.events[4].author, USER_AUTHOR);

    // The session has nothing cut off any more: another message runs alone.
    let model_calls = model.requests().len();
    let nothing = runner
        .resume_interrupted(USER, SESSION, RunConfig::default())
        .await
        .unwrap();
    assert!(nothing.is_none());
    assert_eq!(model.requests().len(), model_calls);
}

#[tokio::test]
async fn resume_interrupted_answers_a_message_a_crash_left_unanswered() {
    let sessions = cut_off_session(false).await;
    let model = ScriptedModel::new("scripted").then_text("looked");
    let lookups = Arc::new(AtomicUsize::new(0));
    let runner = runner(sessions, &model, &lookups);
    let resumed = runner
        .resume_interrupted(USER, SESSION, RunConfig::default())
        .await
        .unwrap()
        .expect("a cut-off invocation");
    assert_eq!(resumed.invocation_id(), Some(&InvocationId::from("e-cut")));
    let events: Vec<Event> = resumed.try_collect().await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].text().as_deref(), Some("looked"));
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let history = serde_json::to_string(&requests[0].contents).unwrap();
    assert_eq!(
        history.matches("look it up").count(),
        1,
        "the message is not stored twice"
    );
}
