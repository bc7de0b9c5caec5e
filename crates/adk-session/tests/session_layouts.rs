//! Opening databases of every layout the session services meet: adk-rs's first layout (the sqlx
//! migrations `0001` and `0002`, kept as fixtures) is upgraded with nothing lost, events holding
//! U+0000 or the six characters `\u0000` included; PostgreSQL's version 1 of adk-rs's additions
//! is upgraded; a database of ADK Python's legacy v0 schema is refused clearly. And PostgreSQL,
//! whose `jsonb` cannot hold U+0000, stores it and the text `\u0000` safely.

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

/// The texts of the two legacy events: plain ones, and ones holding U+0000 and the six characters
/// `\u0000` (both written `\u0000` in JSON text, once escaped: the upgrade must tell them apart).
const PLAIN: [&str; 2] = ["hi", "hello"];
const NUL_AND_ESCAPE: [&str; 2] = ["a \0 b", "c \\u0000 d \0"];

/// Two events saying `texts` as the first layout stored them: their wire JSON as text.
fn legacy_events(texts: [&str; 2]) -> [Event; 2] {
    let mut first =
        Event::new(InvocationId::from("e-1"), "user").with_content(Content::user(texts[0]));
    first.timestamp = 1_700_000_000.25;
    let mut second =
        Event::new(InvocationId::from("e-1"), "agent").with_content(Content::model(texts[1]));
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
    let loaded = load(service, key).await;
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

/// The session at `key`, which must exist.
async fn load(service: &dyn SessionService, key: SessionKey) -> adk_core::Session {
    service
        .get_session(GetSessionRequest::new(key))
        .await
        .unwrap()
        .expect("the session exists")
}

/// What ADK Python adds to a database of the first layout when it opens it (its metadata table
/// with `schema_version` 1 and its events index), as the issue measured it doing.
const PYTHON_OPENED: &str = "CREATE TABLE adk_internal_metadata (key VARCHAR(128) NOT NULL PRIMARY KEY, \
     value VARCHAR(256) NOT NULL); \
     INSERT INTO adk_internal_metadata (key, value) VALUES ('schema_version', '1'); \
     CREATE INDEX idx_events_app_user_session_ts_id \
     ON events (app_name, user_id, session_id, timestamp DESC, id DESC);";

/// The first layout's cases: as adk-rs left it or after ADK Python opened it, with plain events or
/// events holding U+0000 and the text `\u0000`.
const FIRST_LAYOUTS: [(bool, [&str; 2]); 3] =
    [(false, PLAIN), (true, PLAIN), (false, NUL_AND_ESCAPE)];

#[tokio::test]
async fn sqlite_first_layout_is_upgraded_with_nothing_lost() {
    for (opened_by_python, texts) in FIRST_LAYOUTS {
        sqlite_first_layout_upgrade(opened_by_python, texts).await;
    }
}

async fn sqlite_first_layout_upgrade(opened_by_python: bool, texts: [&str; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let events = legacy_events(texts);
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
    let session = load(&service, SessionKey::new("app", "ada", "s")).await;
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
            ("adk_rs_schema_version".to_owned(), "2".to_owned()),
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
    // Asked once, so that a run without PostgreSQL reports this test skipped once.
    if fixtures::postgres_url().is_none() {
        return;
    }
    for (opened_by_python, texts) in FIRST_LAYOUTS {
        postgres_first_layout_upgrade(opened_by_python, texts).await;
    }
}

async fn postgres_first_layout_upgrade(opened_by_python: bool, texts: [&str; 2]) {
    let Some((admin, options, schema)) = fixtures::fresh_schema("adk_legacy").await else {
        return;
    };
    let events = legacy_events(texts);
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
    let session = load(&again, SessionKey::new("app", "ada", "s")).await;
    assert_eq!(session.revision, 3);
    again.close().await;
    fixtures::drop_schema(admin, &schema).await;
}

/// An event holding U+0000, the six characters `\u0000`, and both; state holding both.
fn nul_event() -> Event {
    let content = Content::model("nul \0, text \\u0000, escaped nul \\\0, end")
        .with_part(adk_core::Part::text("\0\0\\u0000\0"));
    let mut actions = adk_core::EventActions::default();
    actions.state_delta = json!({
        "text": "\\u0000", "nul": "a\0b", "app:text": "\\u0000", "user:nul": "\0"
    })
    .as_object()
    .unwrap()
    .clone();
    Event::new(InvocationId::from("e-1"), "agent")
        .with_content(content)
        .with_actions(actions)
}

/// A PostgreSQL service in a fresh schema named `{prefix}_{pid}`, its admin pool and the schema.
async fn postgres(prefix: &str) -> Option<(PostgresSessionService, PgPool, String)> {
    let (admin, options, schema) = fixtures::fresh_schema(prefix).await?;
    let service = PostgresSessionService::connect_with(options).await.unwrap();
    Some((service, admin, schema))
}

/// What ADK Python reads of the last event's first text part: `event_data`, the `jsonb` copy.
async fn python_view_of_text(admin: &PgPool, schema: &str) -> String {
    sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT event_data #>> '{{content,parts,0,text}}' FROM {schema}.events ORDER BY seq DESC LIMIT 1"
    )))
    .fetch_one(admin)
    .await
    .unwrap()
}

#[tokio::test]
async fn postgres_stores_u0000_safely() {
    let Some((service, admin, schema)) = postgres("adk_nul").await else {
        return;
    };
    let mut session = service
        .create_session(
            adk_core::CreateSessionRequest::new("app", "ada")
                .with_state(json!({"made": "\\u0000 \0"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let stored = service
        .append_event(&mut session, nul_event())
        .await
        .unwrap();
    let loaded = load(&service, session.key()).await;
    assert_eq!(
        loaded.events,
        [stored],
        "adk-rs reads the event back exactly"
    );
    assert_eq!(loaded.revision, 1);
    // `jsonb` state cannot hold U+0000: it is stored as U+FFFD; the text `\u0000` is kept.
    assert_eq!(
        Value::Object(loaded.state),
        json!({
            "made": "\\u0000 \u{fffd}", "text": "\\u0000", "nul": "a\u{fffd}b",
            "app:text": "\\u0000", "user:nul": "\u{fffd}"
        })
    );
    assert_eq!(
        python_view_of_text(&admin, &schema).await,
        "nul \u{fffd}, text \\u0000, escaped nul \\\u{fffd}, end",
        "ADK Python reads a valid event, U+FFFD in place of U+0000"
    );

    service.close().await;
    fixtures::drop_schema(admin, &schema).await;
}

/// The six characters `\u0000` (no U+0000 anywhere) are text like any other: stored as they are,
/// for ADK Python too, in events and state.
#[tokio::test]
async fn postgres_accepts_the_text_backslash_u0000() {
    let Some((service, admin, schema)) = postgres("adk_escape").await else {
        return;
    };
    let mut session = service
        .create_session(adk_core::CreateSessionRequest::new("app", "ada"))
        .await
        .unwrap();
    let mut text = Event::new(InvocationId::from("e-1"), "agent")
        .with_content(Content::model("\\u0000 and \\\\u0000"));
    text.actions.state_delta = json!({"text": "\\u0000", "user:text": "a\\u0000b"})
        .as_object()
        .unwrap()
        .clone();
    let stored = service.append_event(&mut session, text).await.unwrap();
    assert_eq!(
        python_view_of_text(&admin, &schema).await,
        "\\u0000 and \\\\u0000"
    );
    let loaded = load(&service, session.key()).await;
    assert_eq!(loaded.events, [stored]);
    assert_eq!(
        Value::Object(loaded.state),
        json!({"text": "\\u0000", "user:text": "a\\u0000b"})
    );
    service.close().await;
    fixtures::drop_schema(admin, &schema).await;
}

#[tokio::test]
async fn postgres_refuses_u0000_in_ids_and_writes_nothing() {
    let Some((service, admin, schema)) = postgres("adk_nul_ids").await else {
        return;
    };
    let error = service
        .create_session(adk_core::CreateSessionRequest::new("app", "a\0da"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    assert!(error.to_string().contains("U+0000"), "{error}");
    let mut session = service
        .create_session(adk_core::CreateSessionRequest::new("app", "ada"))
        .await
        .unwrap();
    let mut event = Event::new(InvocationId::from("e-\0"), "agent");
    event.response.content = Some(Content::model("hi"));
    let error = service.append_event(&mut session, event).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    let loaded = load(&service, session.key()).await;
    assert!(loaded.events.is_empty());
    assert_eq!(loaded.revision, 0);
    service.close().await;
    fixtures::drop_schema(admin, &schema).await;
}

/// A database at version 1 of adk-rs's additions (which refused U+0000) is upgraded when a
/// service connects, and then stores U+0000.
#[tokio::test]
async fn postgres_version_1_is_upgraded() {
    let Some((admin, options, schema)) = fixtures::fresh_schema("adk_v1").await else {
        return;
    };
    let service = PostgresSessionService::connect_with(options.clone())
        .await
        .unwrap();
    let mut session = service
        .create_session(adk_core::CreateSessionRequest::new("app", "ada"))
        .await
        .unwrap();
    let first = Event::new(InvocationId::from("e-1"), "user").with_content(Content::user("hi"));
    let first = service.append_event(&mut session, first).await.unwrap();
    service.close().await;
    // Back to version 1: what version 2 added taken away.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "SET search_path TO {schema}; \
         ALTER TABLE events DROP COLUMN exact_event_data; \
         DROP FUNCTION adk_exact_json(text); DROP FUNCTION adk_jsonb_text(text); \
         UPDATE adk_internal_metadata SET value = '1' WHERE key = 'adk_rs_schema_version'"
    )))
    .execute(&admin)
    .await
    .unwrap();

    let service = PostgresSessionService::connect_with(options).await.unwrap();
    let stored = service
        .append_event(&mut session, nul_event())
        .await
        .unwrap();
    let loaded = load(&service, session.key()).await;
    assert_eq!(loaded.events, [first, stored]);
    let version: String = sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT value FROM {schema}.adk_internal_metadata WHERE key = 'adk_rs_schema_version'"
    )))
    .fetch_one(&admin)
    .await
    .unwrap();
    assert_eq!(version, "3");
    service.close().await;
    fixtures::drop_schema(admin, &schema).await;
}
