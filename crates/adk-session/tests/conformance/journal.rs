//! The effect journal's part of the conformance suite: each state a call can be in (no record,
//! intent only, result only, both), completion in the append's own transaction, the journal's
//! life with its session, and the cancel requests it keeps, signalled to who listens.

use adk_core::{
    Content, ErrorKind, Event, FunctionResponse, InvocationId, JournalEntry, Part, Role,
    SessionKey, SessionService, ToolIntent,
};
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use serde_json::json;

use super::{create, get, unique_app};

/// How long a test waits for a signal that should come at once, before failing.
const GUARD: Duration = Duration::from_secs(30);

/// The intent to run `call` of `charge` in invocation `e-1`.
fn intent(call: &str) -> ToolIntent {
    ToolIntent::new(InvocationId::from("e-1"), call.into(), "charge", "hash-1")
}

/// An event of invocation `e-1` answering each call of `calls`.
fn responses(calls: &[&str]) -> Event {
    let parts = calls.iter().map(|&call| {
        Part::function_response(FunctionResponse::new("charge", json!({"ok": true})).with_id(call))
    });
    Event::new(InvocationId::from("e-1"), "agent").with_content(Content::new(Role::User, parts))
}

/// The journal of `invocation` in session `key`, from a service that keeps one.
async fn journal_of(
    service: &dyn SessionService,
    key: &SessionKey,
    invocation: &InvocationId,
) -> Vec<JournalEntry> {
    service
        .tool_journal(key, invocation)
        .await
        .expect("the journal is read")
        .expect("the service keeps a journal")
}

pub(crate) async fn journal_keeps_each_state_of_a_call(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    let key = session.key();
    let invocation = InvocationId::from("e-1");
    assert_eq!(
        service.tool_journal(&key, &invocation).await.unwrap(),
        Some(Vec::new()),
        "no call recorded yet"
    );

    // Intent only: `intent-only` started and has no result; `both` started and is answered
    // below; `result-only` is answered without an intent (a read-only tool's call).
    service
        .record_tool_intent(&key, &intent("intent-only"))
        .await
        .unwrap();
    service
        .record_tool_intent(&key, &intent("both"))
        .await
        .unwrap();
    let journal = journal_of(service, &key, &invocation).await;
    assert_eq!(journal.len(), 2);
    assert!(
        journal
            .iter()
            .all(|entry| !entry.is_complete() && entry.attempts == 1)
    );
    assert_eq!(
        journal[0].intent,
        intent("intent-only"),
        "the order recorded"
    );

    let answer = service
        .append_event(&mut session, responses(&["both", "result-only"]))
        .await
        .unwrap();
    let journal = journal_of(service, &key, &invocation).await;
    let ids: Vec<(&str, Option<&str>)> = journal
        .iter()
        .map(|entry| {
            (
                entry.intent.function_call_id.as_str(),
                entry.result_event_id.as_ref().map(|id| id.as_str()),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [("intent-only", None), ("both", Some(answer.id.as_str()))],
        "a call without an intent gets no entry from its answer"
    );

    // A resumed call is recorded again: one more attempt, the same entry. A later answer keeps
    // the first result.
    service
        .record_tool_intent(&key, &intent("intent-only"))
        .await
        .unwrap();
    service
        .record_tool_intent(&key, &intent("both"))
        .await
        .unwrap();
    service
        .append_event(&mut session, responses(&["both"]))
        .await
        .unwrap();
    let journal = journal_of(service, &key, &invocation).await;
    assert_eq!(journal[0].attempts, 2);
    assert!(!journal[0].is_complete());
    assert_eq!(journal[1].attempts, 2);
    assert_eq!(journal[1].result_event_id.as_ref(), Some(&answer.id));

    // Other invocations and sessions see none of it.
    let other = InvocationId::from("e-2");
    assert_eq!(
        service.tool_journal(&key, &other).await.unwrap(),
        Some(Vec::new())
    );
    let elsewhere = create(service, &app, "ada", "elsewhere").await;
    assert_eq!(
        service
            .tool_journal(&elsewhere.key(), &invocation)
            .await
            .unwrap(),
        Some(Vec::new())
    );
}

pub(crate) async fn journal_completes_only_with_a_stored_event(service: &dyn SessionService) {
    let app = unique_app();
    create(service, &app, "ada", "s").await;
    let key = SessionKey::new(&app, "ada", "s");
    let invocation = InvocationId::from("e-1");
    service
        .record_tool_intent(&key, &intent("call-1"))
        .await
        .unwrap();
    // An answer that only asks for a confirmation is not the call's result.
    let mut asking = responses(&["call-1"]);
    asking
        .actions
        .requested_tool_confirmations
        .insert("call-1".into(), adk_core::ToolConfirmation::default());
    let mut session = get(service, &key).await;
    service.append_event(&mut session, asking).await.unwrap();
    let journal = journal_of(service, &key, &invocation).await;
    assert!(
        !journal[0].is_complete(),
        "a confirmation request completes nothing"
    );

    let mut fresh = get(service, &key).await;
    let mut stale = get(service, &key).await;
    service
        .append_event(&mut fresh, Event::new(invocation.clone(), "agent"))
        .await
        .unwrap();
    let error = service
        .append_event(&mut stale, responses(&["call-1"]))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::StaleSession);
    let journal = journal_of(service, &key, &invocation).await;
    assert!(
        !journal[0].is_complete(),
        "an answer that was not stored completes nothing"
    );
}

pub(crate) async fn journal_lives_and_dies_with_its_session(service: &dyn SessionService) {
    let app = unique_app();
    let missing = SessionKey::new(&app, "ada", "missing");
    let error = service
        .record_tool_intent(&missing, &intent("call-1"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");

    create(service, &app, "ada", "s").await;
    let key = SessionKey::new(&app, "ada", "s");
    service
        .record_tool_intent(&key, &intent("call-1"))
        .await
        .unwrap();
    service.delete_session(&key).await.unwrap();
    create(service, &app, "ada", "s").await;
    assert_eq!(
        service
            .tool_journal(&key, &InvocationId::from("e-1"))
            .await
            .unwrap(),
        Some(Vec::new()),
        "a re-created session starts with an empty journal"
    );
}

pub(crate) async fn cancel_requests_are_kept_and_signalled(service: &dyn SessionService) {
    let app = unique_app();
    let key = create(service, &app, "ada", "s").await.key();
    let other = create(service, &app, "ada", "other").await.key();
    let mut signals = service
        .cancel_signals(&key)
        .await
        .unwrap()
        .expect("the service signals cancel requests");
    let mut other_signals = service.cancel_signals(&other).await.unwrap().unwrap();
    let invocation = InvocationId::from("e-1");
    assert!(!service.cancel_requested(&key, &invocation).await.unwrap());

    assert!(service.request_cancel(&key, &invocation).await.unwrap());
    tokio::time::timeout(GUARD, signals.next())
        .await
        .expect("the subscriber hears the request")
        .expect("the signals go on");
    assert!(service.cancel_requested(&key, &invocation).await.unwrap());
    let later = InvocationId::from("e-2");
    assert!(
        !service.cancel_requested(&key, &later).await.unwrap(),
        "another invocation is not cancelled"
    );
    // A later invocation of the session has a request of its own.
    assert!(service.request_cancel(&key, &later).await.unwrap());
    assert!(service.cancel_requested(&key, &later).await.unwrap());
    assert!(service.cancel_requested(&key, &invocation).await.unwrap());
    assert!(
        other_signals.next().now_or_never().is_none(),
        "another session's subscriber hears nothing"
    );
}
