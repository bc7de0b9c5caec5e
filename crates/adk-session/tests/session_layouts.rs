//! Opening databases of every layout the session services meet: adk-rs's first layout (the sqlx
//! migrations `0001` and `0002`, kept as fixtures) is upgraded with nothing lost, a database of
//! ADK Python's legacy v0 schema is refused clearly, and PostgreSQL refuses U+0000 up front.

#[allow(dead_code)]
#[path = "conformance/fixtures.rs"]
mod fixtures;

use std::path::PathBuf;

use adk_core::{
    Content, ErrorKind, Event, GetSessionRequest, InvocationId, SessionKey, SessionService,
};
use adk_session::{PostgresSessionService, SqliteSessionService};
use serde_json::{Value, json};
use sqlx::migrate::Migrator;
use sqlx::{AssertSqlSafe, Executor, PgPool, SqlitePool};

/// The first layout's migrations of `backend` (`sqlite` or `postgres`).
fn legacy_migrations(backend: &str) -> PathBuf {
    adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/adk_rs_0002/{backend}"))
}

/// Creates the first layout in `$pool` with its migrations of `$backend` and writes
/// [`legacy_rows`] (a macro: sqlx's migrator is generic over the database in
/// ways a function would have to spell out).
macro_rules! write_first_layout {
    ($pool:expr, $backend:expr, $events:expr) => {{
        let pool = $pool;
        Migrator::new(legacy_migrations($backend).as_path())
            .await
            .unwrap()
            .run(pool)
            .await
            .unwrap();
        for row in legacy_rows($events) {
            pool.execute(AssertSqlSafe(row)).await.unwrap();
        }
    }};
}

/// Two events as the first layout stored them: their wire JSON as text.
fn legacy_events() -> [Event; 2] {
    let mut first = Event::new(InvocationId::from("e-1"), "user").with_content(Content::user("hi"));
    first.timestamp = 1_700_000_000.25;
    let mut second =
        Event::new(InvocationId::from("e-1"), "agent").with_content(Content::model("hello"));
    second.timestamp = 1_700_000_001.5;
    second.actions.state_delta = json!({"mood": "glad", "app:n": 2, "user:name": "Ada"})
        .as_object()
        .unwrap()
        .clone();
    [first, second]
}

/// Rows of a session at revision 2 with both events, its three state scopes, and a deleted
/// session at revision 7, written with the first layout's columns. `$n` placeholders work on
/// both backends.
fn legacy_rows(events: &[Event; 2]) -> Vec<String> {
    let text = |event: &Event| serde_json::to_string(event).unwrap().replace('\'', "''");
    let mut rows = vec![
        "INSERT INTO sessions (app_name, user_id, id, state, revision, create_time, update_time) \
         VALUES ('app', 'ada', 's', '{\"mood\": \"glad\"}', 2, 1700000000.0, 1700000001.5)"
            .to_owned(),
        "INSERT INTO app_states (app_name, state, update_time) VALUES ('app', '{\"n\": 2}', 1700000001.5)"
            .to_owned(),
        "INSERT INTO user_states (app_name, user_id, state, update_time) \
         VALUES ('app', 'ada', '{\"name\": \"Ada\"}', 1700000001.5)"
            .to_owned(),
        "INSERT INTO deleted_sessions (app_name, user_id, id, revision) VALUES ('app', 'ada', 'gone', 7)"
            .to_owned(),
    ];
    for (seq, event) in events.iter().enumerate() {
        rows.push(format!(
            "INSERT INTO events (app_name, user_id, session_id, seq, id, invocation_id, author, \
             timestamp, event_data) VALUES ('app', 'ada', 's', {}, '{}', 'e-1', '{}', {}, '{}')",
            seq + 1,
            event.id.as_str(),
            event.author,
            event.timestamp,
            text(event)
        ));
    }
    rows
}

/// What an upgraded database must show: the session, its events, state and revision as they
/// were; it takes an append at its revision; a re-created deleted session starts after its last
/// revision.
async fn assert_upgraded(service: &dyn SessionService, events: &[Event; 2]) {
    let key = SessionKey::new("app", "ada", "s");
    let mut session = service
        .get_session(GetSessionRequest::new(key.clone()))
        .await
        .unwrap()
        .expect("the session survives the upgrade");
    assert_eq!(session.events, events.as_slice());
    assert_eq!(session.revision, 2);
    assert_eq!(session.last_update_time, 1_700_000_001.5);
    assert_eq!(
        Value::Object(session.state.clone()),
        json!({"mood": "glad", "app:n": 2, "user:name": "Ada"})
    );
    let third = Event::new(InvocationId::from("e-2"), "user").with_content(Content::user("more"));
    service.append_event(&mut session, third).await.unwrap();
    let loaded = service
        .get_session(GetSessionRequest::new(key))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(loaded.events.len(), 3);
    assert_eq!(loaded.revision, 3);
    let recreated = service
        .create_session(adk_core::CreateSessionRequest::new("app", "ada").with_session_id("gone"))
        .await
        .unwrap();
    assert_eq!(
        recreated.revision, 8,
        "the deleted session's revision is remembered"
    );
}

/// What ADK Python adds to a database of the first layout when it opens it (its metadata table
/// with `schema_version` 1 and its events index), as the issue measured it doing.
const PYTHON_OPENED: &str = "CREATE TABLE adk_internal_metadata (key VARCHAR(128) NOT NULL PRIMARY KEY, \
     value VARCHAR(256) NOT NULL); \
     INSERT INTO adk_internal_metadata (key, value) VALUES ('schema_version', '1'); \
     CREATE INDEX idx_events_app_user_session_ts_id \
     ON events (app_name, user_id, session_id, timestamp DESC, id DESC);";

#[tokio::test]
async fn sqlite_first_layout_is_upgraded_with_nothing_lost() {
    for opened_by_python in [false, true] {
        sqlite_first_layout_upgrade(opened_by_python).await;
    }
}

async fn sqlite_first_layout_upgrade(opened_by_python: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let events = legacy_events();
    let pool = SqlitePool::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    write_first_layout!(&pool, "sqlite", &events);
    if opened_by_python {
        sqlx::raw_sql(PYTHON_OPENED).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let service = SqliteSessionService::open(&path).await.unwrap();
    assert_upgraded(&service, &events).await;
    service.close().await;
    drop(service);

    // Opening again finds the current layout and changes nothing.
    let service = SqliteSessionService::open(&path).await.unwrap();
    let session = service
        .get_session(GetSessionRequest::new(SessionKey::new("app", "ada", "s")))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.revision, 3);
    service.close().await;
    let pool = SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let versions: Vec<(String, String)> =
        sqlx::query_as("SELECT \"key\", value FROM adk_internal_metadata ORDER BY \"key\"")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        versions,
        [
            ("adk_rs_schema_version".to_owned(), "1".to_owned()),
            ("schema_version".to_owned(), "1".to_owned())
        ]
    );
    let leftovers: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_master WHERE name LIKE 'adk_rs_old_%' OR name = '_sqlx_migrations'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(leftovers, 0);
    pool.close().await;
}

#[tokio::test]
async fn sqlite_adk_python_v0_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v0.db");
    let pool = SqlitePool::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    // The v0 schema's tell: session tables, events with pickled `actions`, and no metadata table.
    pool.execute(
        "CREATE TABLE sessions (app_name TEXT, user_id TEXT, id TEXT, state TEXT); \
         CREATE TABLE events (id TEXT, actions BLOB);",
    )
    .await
    .unwrap();
    pool.close().await;
    let error = SqliteSessionService::open(&path).await.unwrap_err();
    assert_eq!(error.kind(), adk_core::ErrorKind::Session);
    let source = error.downcast_source::<adk_session::Error>().unwrap();
    assert_eq!(source.kind(), adk_session::ErrorKind::Corrupt);
    assert!(error.to_string().contains("adk migrate session"), "{error}");
}

#[tokio::test]
async fn postgres_first_layout_is_upgraded_with_nothing_lost() {
    for opened_by_python in [false, true] {
        postgres_first_layout_upgrade(opened_by_python).await;
    }
}

async fn postgres_first_layout_upgrade(opened_by_python: bool) {
    let Some((admin, options, schema)) = fixtures::fresh_schema("adk_legacy").await else {
        return;
    };
    let events = legacy_events();
    let pool = PgPool::connect_with(options.clone()).await.unwrap();
    write_first_layout!(&pool, "postgres", &events);
    if opened_by_python {
        sqlx::raw_sql(PYTHON_OPENED).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let service = PostgresSessionService::connect_with(options.clone())
        .await
        .unwrap();
    assert_upgraded(&service, &events).await;
    service.close().await;
    let again = PostgresSessionService::connect_with(options).await.unwrap();
    let session = again
        .get_session(GetSessionRequest::new(SessionKey::new("app", "ada", "s")))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.revision, 3);
    again.close().await;
    fixtures::drop_schema(admin, &schema).await;
}

#[tokio::test]
async fn postgres_refuses_u0000_in_an_event_and_writes_nothing() {
    let Some((admin, options, schema)) = fixtures::fresh_schema("adk_nul").await else {
        return;
    };
    let service = PostgresSessionService::connect_with(options).await.unwrap();
    let mut session = service
        .create_session(adk_core::CreateSessionRequest::new("app", "ada"))
        .await
        .unwrap();
    let event =
        Event::new(InvocationId::from("e-1"), "user").with_content(Content::user("a \u{0000} b"));
    let error = service.append_event(&mut session, event).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    assert!(error.to_string().contains("U+0000"), "{error}");
    let loaded = service
        .get_session(GetSessionRequest::new(session.key()))
        .await
        .unwrap()
        .unwrap();
    assert!(loaded.events.is_empty());
    assert_eq!(loaded.revision, 0);
    service.close().await;
    fixtures::drop_schema(admin, &schema).await;
}
