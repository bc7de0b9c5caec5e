//! The session conformance suite: every [`SessionService`] backend must pass these tests.
//! [`session_conformance!`] instantiates all of them for one backend's fixture.

pub(crate) mod fixtures;
mod journal;

pub(crate) use journal::{
    journal_completes_only_with_a_stored_event, journal_keeps_each_state_of_a_call,
    journal_lives_and_dies_with_its_session,
};

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use adk_core::{
    Content, CreateSessionRequest, ErrorKind, Event, EventActions, GetSessionRequest, IdGen,
    InvocationId, Session, SessionKey, SessionService, UuidIdGen,
};
use serde_json::{Map, Value, json};

/// Instantiates every conformance test for the backend that `$make` (an async fn returning
/// `Option<Fixture>`) provides; `None` means the backend is not available and the test passes
/// after the fixture said so loudly.
macro_rules! session_conformance {
    ($make:path) => {
        $crate::conformance::session_conformance!(@tests $make; borrowed;
            create_get_list_delete,
            duplicate_ids_and_missing_sessions,
            state_scopes_are_shared_correctly,
            temp_keys_are_never_persisted,
            recent_events_and_after_timestamp,
            stale_writes_are_refused_and_write_nothing,
            re_created_sessions_never_repeat_a_revision,
            large_payloads_round_trip,
            unicode_round_trips,
            nul_and_its_escape_round_trip,
            events_round_trip_exactly,
            ten_thousand_events,
            journal_keeps_each_state_of_a_call,
            journal_completes_only_with_a_stored_event,
            journal_lives_and_dies_with_its_session,
        );
        // These spawn tasks, so they take the service's `Arc`.
        $crate::conformance::session_conformance!(@tests $make; shared;
            concurrent_appends_lose_and_double_nothing,
            appends_to_many_sessions_at_once,
        );
    };
    (@tests $make:path; $access:ident; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                let Some(fixture) = $make().await else {
                    return;
                };
                $crate::conformance::$test(fixture.$access()).await;
                fixture.teardown().await;
            }
        )*
    };
}
pub(crate) use session_conformance;

/// An app name no other test uses.
fn unique_app() -> String {
    format!("app-{}", UuidIdGen.new_uuid())
}

/// A model event saying `text`.
fn event(text: &str) -> Event {
    Event::new(InvocationId::from("e-conformance"), "agent").with_content(Content::model(text))
}

/// A model event saying `text` that sets `delta`.
fn event_with_state(text: &str, delta: Value) -> Event {
    let mut actions = EventActions::default();
    actions.state_delta = as_map(delta);
    event(text).with_actions(actions)
}

fn as_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

async fn create(service: &dyn SessionService, app: &str, user: &str, id: &str) -> Session {
    service
        .create_session(CreateSessionRequest::new(app, user).with_session_id(id))
        .await
        .expect("create_session")
}

async fn get(service: &dyn SessionService, key: &SessionKey) -> Session {
    service
        .get_session(GetSessionRequest::new(key.clone()))
        .await
        .expect("get_session")
        .expect("the session exists")
}

/// Storage moves the update time as the in-memory copy does, keeping it to the microsecond as
/// ADK Python's tables do.
fn assert_same_time(stored: f64, in_memory: f64) {
    assert!(
        (stored - in_memory).abs() <= 0.5e-6 + in_memory.abs() * f64::EPSILON,
        "stored update time {stored} is not {in_memory} to the microsecond"
    );
}

fn texts(session: &Session) -> Vec<String> {
    session
        .events
        .iter()
        .map(|event| event.text().unwrap_or_default())
        .collect()
}

pub(crate) async fn create_get_list_delete(service: &dyn SessionService) {
    let app = unique_app();
    let generated = service
        .create_session(CreateSessionRequest::new(&app, "ada"))
        .await
        .unwrap();
    assert!(!generated.id.as_str().is_empty());
    assert_eq!(generated.revision, 0);

    let mut session = create(service, &app, "ada", "s1").await;
    create(service, &app, "bob", "s2").await;
    service
        .append_event(&mut session, event("hello"))
        .await
        .unwrap();
    assert_eq!(session.revision, 1);

    let loaded = get(service, &session.key()).await;
    assert_eq!(texts(&loaded), ["hello"]);
    assert_eq!(loaded.revision, 1);
    assert_eq!(loaded.app_name, app);
    assert_eq!(loaded.user_id, "ada");

    let listed = service.list_sessions(&app, "ada").await.unwrap();
    let mut ids: Vec<&str> = listed.iter().map(|session| session.id.as_str()).collect();
    ids.sort_unstable();
    let mut expected = vec![generated.id.as_str(), "s1"];
    expected.sort_unstable();
    assert_eq!(ids, expected, "only ada's sessions");
    assert!(listed.iter().all(|session| session.events.is_empty()));
    assert!(
        service
            .list_sessions(&app, "nobody")
            .await
            .unwrap()
            .is_empty()
    );

    service.delete_session(&session.key()).await.unwrap();
    let gone = service
        .get_session(GetSessionRequest::new(session.key()))
        .await
        .unwrap();
    assert!(gone.is_none());
    service
        .delete_session(&session.key())
        .await
        .expect("deleting a missing session is fine");

    // A new session under the deleted id starts empty.
    let again = create(service, &app, "ada", "s1").await;
    assert!(get(service, &again.key()).await.events.is_empty());
}

pub(crate) async fn duplicate_ids_and_missing_sessions(service: &dyn SessionService) {
    let app = unique_app();
    create(service, &app, "ada", "s1").await;
    let error = service
        .create_session(CreateSessionRequest::new(&app, "ada").with_session_id("s1"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::AlreadyExists, "{error}");
    assert_eq!(
        error
            .downcast_source::<adk_session::Error>()
            .map(adk_session::Error::kind),
        Some(adk_session::ErrorKind::AlreadyExists)
    );
    // The same id for another user or app is another session.
    create(service, &app, "bob", "s1").await;

    let missing = SessionKey::new(&app, "ada", "nope");
    assert!(
        service
            .get_session(GetSessionRequest::new(missing.clone()))
            .await
            .unwrap()
            .is_none()
    );
    let error = service
        .persist_event(&missing, 0, &event("x"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
}

pub(crate) async fn state_scopes_are_shared_correctly(service: &dyn SessionService) {
    let app = unique_app();
    let other_app = unique_app();
    let initial =
        as_map(json!({"app:theme": "dark", "user:name": "Ada", "topic": "maths", "temp:x": 1}));
    let mut a = service
        .create_session(
            CreateSessionRequest::new(&app, "ada")
                .with_session_id("a")
                .with_state(initial),
        )
        .await
        .unwrap();
    assert_eq!(
        Value::Object(a.state.clone()),
        json!({"app:theme": "dark", "user:name": "Ada", "topic": "maths"})
    );
    service
        .append_event(
            &mut a,
            event_with_state(
                "set",
                json!({"app:count": 1, "user:age": 36, "mood": "happy", "nothing": null}),
            ),
        )
        .await
        .unwrap();

    let b = create(service, &app, "ada", "b").await;
    assert_eq!(
        Value::Object(b.state.clone()),
        json!({"app:theme": "dark", "app:count": 1, "user:name": "Ada", "user:age": 36}),
        "a new session of the same user sees app and user keys"
    );
    let c = create(service, &app, "bob", "c").await;
    assert_eq!(
        Value::Object(c.state.clone()),
        json!({"app:theme": "dark", "app:count": 1}),
        "another user sees only app keys"
    );
    let d = create(service, &other_app, "ada", "d").await;
    assert!(d.state.is_empty(), "another app sees nothing");

    // Keys set from another session show in the first one when reloaded.
    let mut b = b;
    service
        .append_event(
            &mut b,
            event_with_state("b", json!({"user:name": "Ada L.", "app:count": 2})),
        )
        .await
        .unwrap();
    let a = get(service, &SessionKey::new(&app, "ada", "a")).await;
    assert_eq!(
        Value::Object(a.state.clone()),
        json!({
            "app:theme": "dark", "app:count": 2, "user:name": "Ada L.", "user:age": 36,
            "topic": "maths", "mood": "happy", "nothing": null
        })
    );
    let listed = service.list_sessions(&app, "bob").await.unwrap();
    assert_eq!(
        Value::Object(listed[0].state.clone()),
        json!({"app:theme": "dark", "app:count": 2})
    );
}

pub(crate) async fn temp_keys_are_never_persisted(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    let stored = service
        .append_event(
            &mut session,
            event_with_state(
                "t",
                json!({"temp:draft": "...", "kept": true, "app:temp:x": 1}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        session.state.get("temp:draft"),
        Some(&json!("...")),
        "in memory for the invocation"
    );
    assert!(!stored.actions.state_delta.contains_key("temp:draft"));

    // Even a caller that skips append_event cannot store temp keys.
    service
        .persist_event(
            &session.key(),
            session.revision,
            &event_with_state("raw", json!({"temp:raw": 1})),
        )
        .await
        .unwrap();

    let loaded = get(service, &session.key()).await;
    assert_eq!(
        Value::Object(loaded.state.clone()),
        json!({"kept": true, "app:temp:x": 1})
    );
    for event in &loaded.events {
        assert!(
            event
                .actions
                .state_delta
                .keys()
                .all(|key| !key.starts_with("temp:")),
            "{:?}",
            event.actions.state_delta
        );
    }
}

pub(crate) async fn recent_events_and_after_timestamp(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    for n in 1..=10 {
        let mut event = event(&n.to_string());
        event.timestamp = 1_000.0 + f64::from(n);
        service.append_event(&mut session, event).await.unwrap();
    }
    let key = session.key();
    let load = |request: GetSessionRequest| async move {
        let session = service.get_session(request).await.unwrap().unwrap();
        texts(&session)
    };
    let all: Vec<String> = (1..=10).map(|n: u32| n.to_string()).collect();
    let from = |first: usize| all[first - 1..].to_vec();
    let request = || GetSessionRequest::new(key.clone());
    for (request, expected, why) in [
        (request().recent(3), from(8), "the most recent three"),
        (request().recent(100), from(1), "more than there are"),
        (request().recent(0), from(1), "0 means all, as in ADK"),
        (request().after(1_007.0), from(7), "at or after"),
        (
            request().after(1_007.5),
            from(8),
            "after a time between two events",
        ),
        (request().after(2_000.0), Vec::new(), "after the last"),
        (
            request().after(1_005.0).recent(2),
            from(9),
            "the most recent two at or after",
        ),
        (
            request().after(1_009.0).recent(5),
            from(9),
            "fewer than asked at or after",
        ),
    ] {
        assert_eq!(load(request).await, expected, "{why}");
    }

    let full = get(service, &key).await;
    assert_same_time(full.last_update_time, session.last_update_time);
    assert!(full.last_update_time >= 1_010.0);
    assert_eq!(full.revision, 10);
}

pub(crate) async fn stale_writes_are_refused_and_write_nothing(service: &dyn SessionService) {
    let app = unique_app();
    create(service, &app, "ada", "s").await;
    let key = SessionKey::new(&app, "ada", "s");
    let mut first = get(service, &key).await;
    let mut second = get(service, &key).await;

    service
        .append_event(&mut first, event("first"))
        .await
        .unwrap();
    let error = service
        .append_event(
            &mut second,
            event_with_state("second", json!({"app:x": 1, "user:y": 1, "z": 1})),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::StaleSession, "{error}");
    assert!(second.events.is_empty(), "the stale copy is unchanged");

    let stored = get(service, &key).await;
    assert_eq!(texts(&stored), ["first"]);
    assert!(
        stored.state.is_empty(),
        "nothing of the stale write reached any scope"
    );
    let other = create(service, &app, "ada", "other").await;
    assert!(other.state.is_empty());

    // Reloaded, the second writer succeeds.
    let mut second = get(service, &key).await;
    service
        .append_event(&mut second, event("second"))
        .await
        .unwrap();
    assert_eq!(texts(&get(service, &key).await), ["first", "second"]);

    // A revision from the future is stale too.
    let error = service
        .persist_event(&key, 99, &event("future"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::StaleSession);
}

/// Writers appending to one session at once, as spawned tasks on the multi-thread runtime released
/// together, each reloading after a stale error: every attempt either wins a revision or fails as
/// stale, and storage holds exactly the winners, in revision order.
pub(crate) async fn concurrent_appends_lose_and_double_nothing(service: &Arc<dyn SessionService>) {
    const WRITERS: usize = 4;
    const ATTEMPTS: usize = 25;
    let app = unique_app();
    let start_revision = create(service.as_ref(), &app, "ada", "s").await.revision;
    let key = SessionKey::new(&app, "ada", "s");

    let start = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let (service, key, start) = (service.clone(), key.clone(), start.clone());
            tokio::spawn(async move {
                let mut session = get(service.as_ref(), &key).await;
                start.wait().await;
                let (mut won, mut stale) = (Vec::new(), 0);
                for attempt in 0..ATTEMPTS {
                    let text = format!("{writer}-{attempt}");
                    let event = event_with_state(&text, json!({"user:last": text}));
                    match service.append_event(&mut session, event).await {
                        Ok(_) => won.push((session.revision, text)),
                        Err(error) if error.kind() == ErrorKind::StaleSession => {
                            stale += 1;
                            session = get(service.as_ref(), &key).await;
                        }
                        Err(error) => panic!("{error}"),
                    }
                }
                (won, stale)
            })
        })
        .collect();
    let (mut won, mut stale) = (Vec::new(), 0);
    for writer in writers {
        let (writer_won, writer_stale) = writer.await.expect("the writer task");
        won.extend(writer_won);
        stale += writer_stale;
    }
    assert_eq!(
        won.len() + stale,
        WRITERS * ATTEMPTS,
        "every attempt won or failed as stale"
    );

    let revisions: BTreeSet<u64> = won.iter().map(|(revision, _)| *revision).collect();
    assert_eq!(revisions.len(), won.len(), "one winner per revision");
    let last = start_revision + won.len() as u64;
    assert_eq!(revisions, (start_revision + 1..=last).collect());

    let stored = get(service.as_ref(), &key).await;
    assert_eq!(stored.revision, last);
    let stored_texts = texts(&stored);
    let unique: HashSet<&String> = stored_texts.iter().collect();
    assert_eq!(stored_texts.len(), won.len(), "nothing lost or doubled");
    assert_eq!(unique.len(), won.len());
    won.sort();
    let expected: Vec<String> = won.into_iter().map(|(_, text)| text).collect();
    assert_eq!(
        stored_texts, expected,
        "events are stored in revision order"
    );
    assert_eq!(
        stored.state.get("user:last"),
        Some(&json!(expected.last().unwrap()))
    );
}

/// Many writers append at once, each to its own session (SQLite commits such appends in one
/// transaction), while another keeps appending with a stale copy of its session: every fresh
/// append is stored once and in order, and every stale one is refused and writes nothing, however
/// the appends were grouped.
pub(crate) async fn appends_to_many_sessions_at_once(service: &Arc<dyn SessionService>) {
    const SESSIONS: usize = 32;
    const APPENDS: usize = 5;
    let app = unique_app();
    let stale = create(service.as_ref(), &app, "ada", "stale").await;
    let mut fresh = stale.clone();
    service
        .append_event(&mut fresh, event("kept"))
        .await
        .expect("the first append");

    let start = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    let mut writers: Vec<_> = (0..SESSIONS)
        .map(|writer| {
            let (service, app, start) = (service.clone(), app.clone(), start.clone());
            tokio::spawn(async move {
                let id = format!("s{writer}");
                let mut session = create(service.as_ref(), &app, "ada", &id).await;
                start.wait().await;
                for append in 0..APPENDS {
                    service
                        .append_event(&mut session, event(&format!("{writer}-{append}")))
                        .await
                        .expect("a fresh append is stored");
                }
                session.key()
            })
        })
        .collect();
    let refused = {
        let (service, start) = (service.clone(), start.clone());
        tokio::spawn(async move {
            start.wait().await;
            for append in 0..2 * APPENDS {
                let error = service
                    .append_event(&mut stale.clone(), event(&format!("stale-{append}")))
                    .await
                    .expect_err("a stale append is refused");
                assert_eq!(error.kind(), ErrorKind::StaleSession, "{error}");
            }
            stale.key()
        })
    };
    writers.push(refused);
    let keys: Vec<SessionKey> = futures::future::join_all(writers)
        .await
        .into_iter()
        .map(|key| key.expect("a writer task"))
        .collect();

    for (writer, key) in keys[..SESSIONS].iter().enumerate() {
        let stored = get(service.as_ref(), key).await;
        let expected: Vec<String> = (0..APPENDS)
            .map(|append| format!("{writer}-{append}"))
            .collect();
        assert_eq!(texts(&stored), expected, "session {writer}");
    }
    let stale_stored = get(service.as_ref(), &keys[SESSIONS]).await;
    assert_eq!(
        texts(&stale_stored),
        ["kept"],
        "the stale appends wrote nothing"
    );
    assert_eq!(stale_stored.revision, fresh.revision);
}

/// A session deleted and created again with the same id never hands out a revision the deleted
/// one had: a writer still holding the old session fails as stale instead of appending to the new.
pub(crate) async fn re_created_sessions_never_repeat_a_revision(service: &dyn SessionService) {
    let app = unique_app();
    let mut old_writer = create(service, &app, "ada", "s").await;
    for text in ["one", "two"] {
        service
            .append_event(&mut old_writer, event(text))
            .await
            .unwrap();
    }
    let key = old_writer.key();
    service.delete_session(&key).await.unwrap();

    let mut new_writer = create(service, &app, "ada", "s").await;
    assert!(
        new_writer.revision > old_writer.revision,
        "the new session starts after the deleted one's last revision"
    );
    for text in ["three", "four"] {
        service
            .append_event(&mut new_writer, event(text))
            .await
            .unwrap();
    }
    let error = service
        .append_event(&mut old_writer, event("stale"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::StaleSession, "{error}");
    assert_eq!(texts(&get(service, &key).await), ["three", "four"]);

    // Deleted and created once more, it still moves on.
    service.delete_session(&key).await.unwrap();
    let again = create(service, &app, "ada", "s").await;
    assert!(again.revision > new_writer.revision);
}

pub(crate) async fn large_payloads_round_trip(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    let text: String = "0123456789abcdef".repeat(4 << 16); // 4 MiB
    let blob: Vec<u8> = (0..(2 << 20)).map(|n: u32| (n % 251) as u8).collect(); // 2 MiB
    let content = Content::new(
        adk_core::Role::Model,
        [
            adk_core::Part::text(text.clone()),
            adk_core::Part::inline_data("application/octet-stream", blob),
        ],
    );
    let big_state = "x".repeat(1 << 20);
    let mut event = event_with_state("", json!({"big": big_state, "app:big": big_state}));
    event.response.content = Some(content);
    let stored = service.append_event(&mut session, event).await.unwrap();

    let loaded = get(service, &session.key()).await;
    assert_eq!(loaded.events, [stored]);
    assert_eq!(loaded.state["big"].as_str().map(str::len), Some(1 << 20));
    assert_eq!(
        loaded.state["app:big"].as_str().map(str::len),
        Some(1 << 20)
    );
}

pub(crate) async fn unicode_round_trips(service: &dyn SessionService) {
    let app = format!("应用-{}", unique_app());
    let user = "użytkownik-👩‍💻";
    let id = "séance-セッション-\u{1F600}";
    let mut session = service
        .create_session(
            CreateSessionRequest::new(&app, user)
                .with_session_id(id)
                .with_state(as_map(json!({"user:名前": "Zoë", "ключ": "значение"}))),
        )
        .await
        .unwrap();
    let text = "héllo 世界 🎉 \u{202e}rtl\u{202c} 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \"quotes\" \\ back\\slash \t tab";
    let stored = service
        .append_event(
            &mut session,
            event_with_state(text, json!({"émoji🔑": "✓"})),
        )
        .await
        .unwrap();

    let loaded = get(service, &SessionKey::new(&app, user, id)).await;
    assert_eq!(loaded.events, [stored]);
    assert_eq!(loaded.events[0].text().as_deref(), Some(text));
    assert_eq!(
        Value::Object(loaded.state),
        json!({"user:名前": "Zoë", "ключ": "значение", "émoji🔑": "✓"})
    );
    let listed = service.list_sessions(&app, user).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id.as_str(), id);
}

/// U+0000 and the six characters `\u0000` (JSON writes both with that escape, once escaped) in an
/// event round-trip exactly, and the text `\u0000` in state in every scope.
pub(crate) async fn nul_and_its_escape_round_trip(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    let text = "nul \0, text \\u0000, a backslash and nul \\\0";
    let stored = service
        .append_event(
            &mut session,
            event_with_state(
                text,
                json!({"text": "\\u0000", "app:text": "\\u0000", "user:text": "\\u0000"}),
            ),
        )
        .await
        .unwrap();
    let loaded = get(service, &session.key()).await;
    assert_eq!(loaded.events, [stored]);
    assert_eq!(loaded.events[0].text().as_deref(), Some(text));
    assert_eq!(
        Value::Object(loaded.state),
        json!({"text": "\\u0000", "app:text": "\\u0000", "user:text": "\\u0000"})
    );
}

pub(crate) async fn events_round_trip_exactly(service: &dyn SessionService) {
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    let wire = json!({
        "content": {"parts": [{"functionCall": {"id": "adk-1", "args": {"city": "Paris"}, "name": "get_weather"}}], "role": "model"},
        "invocationId": "e-4d3daeaf-759f-4be7-8f26-e5977c26248f",
        "author": "echo",
        "actions": {"stateDelta": {"user:last_city": "Paris"}, "artifactDelta": {"report.pdf": 2},
                    "requestedAuthConfigs": {}, "requestedToolConfirmations": {}, "escalate": true},
        "longRunningToolIds": ["adk-1"],
        "branch": "root.child",
        "nodeInfo": {"path": ""},
        "turnComplete": true,
        "finishReason": "STOP",
        "customMetadata": {"k": [1, 2.5, null]},
        "id": "24acfff9-f6f4-4de8-a1eb-933d4bf0ba16",
        "timestamp": 1795298362.2617297
    });
    let event: Event = serde_json::from_value(wire.clone()).unwrap();
    service.append_event(&mut session, event).await.unwrap();
    let loaded = get(service, &session.key()).await;
    assert_eq!(serde_json::to_value(&loaded.events[0]).unwrap(), wire);
    assert_same_time(loaded.last_update_time, session.last_update_time);
}

pub(crate) async fn ten_thousand_events(service: &dyn SessionService) {
    const COUNT: usize = 10_000;
    let app = unique_app();
    let mut session = create(service, &app, "ada", "s").await;
    for n in 0..COUNT {
        let event = event(&n.to_string());
        // Keep the in-memory copy small: the test is about storage.
        service.append_event(&mut session, event).await.unwrap();
        session.events.clear();
    }
    let loaded = get(service, &session.key()).await;
    assert_eq!(loaded.events.len(), COUNT);
    assert_eq!(loaded.revision, COUNT as u64);
    assert!(
        loaded
            .events
            .iter()
            .enumerate()
            .all(|(n, event)| event.text() == Some(n.to_string()))
    );
    let recent = service
        .get_session(GetSessionRequest::new(session.key()).recent(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(texts(&recent), ["9995", "9996", "9997", "9998", "9999"]);
}
