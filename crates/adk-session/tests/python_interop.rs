//! Sessions shared with ADK Python: its `DatabaseSessionService` (google-adk 2.13.0 from PyPI, in
//! the cached virtualenv of `adk_test::python_peers`) and adk-rs read and append to one database,
//! SQLite and PostgreSQL, both ways round.
//!
//! Python first: Python writes a session (state in the app, user, session and temp scopes, a
//! message with bytes, a function call with a state delta, its response) → adk-rs reads it and
//! appends → Python reads everything back unchanged, and appends again → adk-rs reads it all.
//! adk-rs first: the same session written by adk-rs → Python reads it unchanged and appends →
//! adk-rs reads everything back unchanged.

#[allow(dead_code)]
#[path = "conformance/fixtures.rs"]
mod fixtures;

use std::path::Path;

use adk_core::{
    Content, CreateSessionRequest, Event, EventActions, FunctionCall, FunctionResponse,
    GetSessionRequest, InvocationId, Part, Role, Session, SessionKey, SessionService,
};
use adk_session::{PostgresSessionService, SqliteSessionService};
use serde_json::{Map, Value, json};
use sqlx::PgPool;
use sqlx::postgres::PgConnectOptions;

/// ADK Python's view of the session: its merged state and its events, read as adk-rs events.
struct PythonView {
    state: Map<String, Value>,
    events: Vec<Event>,
}

/// Runs `adk_sessions.py COMMAND URL SEARCH_PATH` in the peers' virtualenv and reads the session
/// it prints.
fn python(command: &str, url: &str, search_path: &str) -> PythonView {
    let script =
        adk_test::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/python/adk_sessions.py");
    let output = adk_test::python_peers::a2a_peers()
        .command()
        .arg(script)
        .args([command, url, search_path])
        .output()
        .expect("running ADK Python");
    assert!(
        output.status.success(),
        "ADK Python's `{command}` failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let session: Value = serde_json::from_slice(&output.stdout).expect("ADK Python prints JSON");
    let state = session["state"].as_object().cloned().unwrap_or_default();
    let events = session["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| {
            serde_json::from_value(event.clone()).expect("adk-rs reads ADK Python's event")
        })
        .collect();
    PythonView { state, events }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn key() -> SessionKey {
    SessionKey::new("interop", "ada", "s1")
}

async fn load(service: &dyn SessionService) -> Session {
    service
        .get_session(GetSessionRequest::new(key()))
        .await
        .unwrap()
        .expect("the session exists")
}

/// The bytes of the first inline data part of `event`.
fn bytes_of(event: &Event) -> Vec<u8> {
    event
        .response
        .content
        .iter()
        .flat_map(|content| &content.parts)
        .find_map(|part| part.as_inline_data().map(|blob| blob.data.to_vec()))
        .expect("an inline data part")
}

/// What `adk_sessions.py write` leaves, and what adk-rs writes in its place.
fn written_state() -> Map<String, Value> {
    object(json!({
        "app:theme": "dark", "app:calls": 1, "user:name": "Ada", "user:city": "Paris",
        "topic": "weather", "asked": true
    }))
}

/// Actions carrying the state delta `value`.
fn delta(value: Value) -> EventActions {
    let mut actions = EventActions::default();
    actions.state_delta = object(value);
    actions
}

/// adk-rs's reply: a text, bytes, and a delta in every scope (the temp key is never stored).
fn rust_reply() -> Event {
    let content = Content::model("rust adds").with_part(Part::inline_data(
        "application/octet-stream",
        b"\x00\x01\xfe\xff rust bytes".to_vec(),
    ));
    Event::new(InvocationId::from("rs-2"), "assistant")
        .with_content(content)
        .with_actions(delta(json!({
            "app:calls": 2, "user:city": "Lyon", "rust": "yes", "temp:skip": true
        })))
}

/// Python first: Python writes, adk-rs reads and appends, Python reads it all back unchanged and
/// appends, adk-rs reads it all.
async fn python_first(
    url: &str,
    search_path: &str,
    open: impl AsyncFn() -> Box<dyn SessionService>,
) {
    let written = python("write", url, search_path);
    assert_eq!(written.events.len(), 3);
    assert_eq!(written.state, written_state());

    let service = open().await;
    let mut session = load(service.as_ref()).await;
    assert_eq!(
        session.events, written.events,
        "adk-rs reads ADK Python's events as written"
    );
    assert_eq!(session.state, written_state());
    assert_eq!(session.revision, 3);
    assert_eq!(bytes_of(&session.events[0]), b"\x00\xff\xfe py bytes");
    assert!(
        session.events[1]
            .function_calls()
            .any(|call| call.name == "get_weather")
    );
    assert_eq!(session.events[2].function_responses().count(), 1);
    let reply = service
        .append_event(&mut session, rust_reply())
        .await
        .unwrap();
    drop(service);

    let read = python("read", url, search_path);
    assert_eq!(
        read.events[..3],
        written.events,
        "ADK Python's own events are unchanged"
    );
    assert_eq!(
        read.events[3], reply,
        "ADK Python reads adk-rs's event as adk-rs wrote it"
    );
    assert_eq!(bytes_of(&read.events[3]), b"\x00\x01\xfe\xff rust bytes");
    let mut expected = written_state();
    expected.extend(object(
        json!({"app:calls": 2, "user:city": "Lyon", "rust": "yes"}),
    ));
    assert_eq!(read.state, expected);

    let appended = python("append", url, search_path);
    assert_eq!(appended.events.len(), 5);
    let service = open().await;
    let session = load(service.as_ref()).await;
    assert_eq!(session.events, appended.events);
    assert_eq!(
        session.revision, 5,
        "ADK Python's append moved adk-rs's revision"
    );
    assert_eq!(session.state, appended.state);
    assert_eq!(
        bytes_of(&session.events[4]),
        b"\x89PNG\r\n\x1a\n from python"
    );
}

/// adk-rs first: adk-rs writes the session, Python reads it unchanged and appends, adk-rs reads it
/// all back unchanged.
async fn rust_first(url: &str, search_path: &str, open: impl AsyncFn() -> Box<dyn SessionService>) {
    let service = open().await;
    let mut session = service
        .create_session(
            CreateSessionRequest::new("interop", "ada")
                .with_session_id("s1")
                .with_state(object(json!({
                    "app:theme": "dark", "user:name": "Ada", "topic": "weather", "temp:scratch": 1
                }))),
        )
        .await
        .unwrap();
    let message = Content::user("weather?").with_part(Part::inline_data(
        "application/octet-stream",
        b"\x00\xff\xfe rs bytes".to_vec(),
    ));
    let call = Content::new(
        Role::Model,
        [Part::function_call(
            FunctionCall::new("get_weather", json!({"city": "Paris"})).with_id("call-1"),
        )],
    );
    let response = Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new("get_weather", json!({"sky": "clear"})).with_id("call-1"),
        )],
    );
    let events = [
        Event::new(InvocationId::from("rs-1"), "user").with_content(message),
        Event::new(InvocationId::from("rs-1"), "assistant")
            .with_content(call)
            .with_actions(delta(json!({
                "app:calls": 1, "user:city": "Paris", "asked": true, "temp:t": 2
            }))),
        Event::new(InvocationId::from("rs-1"), "assistant").with_content(response),
    ];
    let mut stored = Vec::new();
    for event in events {
        stored.push(service.append_event(&mut session, event).await.unwrap());
    }
    drop(service);

    let read = python("read", url, search_path);
    assert_eq!(
        read.events, stored,
        "ADK Python reads adk-rs's events as adk-rs wrote them"
    );
    assert_eq!(read.state, written_state());

    let appended = python("append", url, search_path);
    let service = open().await;
    let session = load(service.as_ref()).await;
    assert_eq!(
        session.events[..3],
        stored,
        "adk-rs's own events are unchanged"
    );
    assert_eq!(session.events[3], appended.events[3]);
    assert_eq!(
        bytes_of(&session.events[3]),
        b"\x89PNG\r\n\x1a\n from python"
    );
    assert_eq!(session.revision, 4);
    let mut expected = written_state();
    expected.extend(object(
        json!({"app:theme": "light", "user:seen": 2, "py": "yes"}),
    ));
    assert_eq!(session.state, expected);
    assert_eq!(appended.state, expected);
}

/// A SQLite file in a fresh directory, as ADK Python names it and as adk-rs opens it.
fn sqlite_file() -> (tempfile::TempDir, String, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let url = format!("sqlite+aiosqlite:///{}", path.display());
    (dir, url, path)
}

async fn open_sqlite(path: &Path) -> Box<dyn SessionService> {
    Box::new(SqliteSessionService::open(path).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_python_writes_rust_appends_python_reads_back() {
    let (_dir, url, path) = sqlite_file();
    python_first(&url, "-", async || open_sqlite(&path).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_rust_writes_python_appends_rust_reads_back() {
    let (_dir, url, path) = sqlite_file();
    rust_first(&url, "-", async || open_sqlite(&path).await).await;
}

/// A fresh schema of `$ADK_POSTGRES_URL`: an admin pool, adk-rs's options, ADK Python's URL (the
/// same database through asyncpg) and the schema's name.
async fn postgres_schema(name: &str) -> Option<(PgPool, PgConnectOptions, String, String)> {
    let (admin, options, schema) = fixtures::fresh_schema(name).await?;
    let python_url = fixtures::postgres_url()?
        .replacen("postgres://", "postgresql+asyncpg://", 1)
        .replacen("postgresql://", "postgresql+asyncpg://", 1);
    Some((admin, options, python_url, schema))
}

async fn open_postgres(options: &PgConnectOptions) -> Box<dyn SessionService> {
    Box::new(
        PostgresSessionService::connect_with(options.clone())
            .await
            .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_python_writes_rust_appends_python_reads_back() {
    let Some((admin, options, url, schema)) = postgres_schema("adk_interop_py").await else {
        return;
    };
    let open = async || open_postgres(&options).await;
    python_first(&url, &schema, open).await;
    fixtures::drop_schema(admin, &schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rust_writes_python_appends_rust_reads_back() {
    let Some((admin, options, url, schema)) = postgres_schema("adk_interop_rs").await else {
        return;
    };
    let open = async || open_postgres(&options).await;
    rust_first(&url, &schema, open).await;
    fixtures::drop_schema(admin, &schema).await;
}
