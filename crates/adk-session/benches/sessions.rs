//! Session backend benchmarks: appends per second to one session and to many sessions, the
//! effect journal's cost per tool call, and the latency of loading a session of 100, 1,000 and
//! 10,000 events, on SQLite (WAL,
//! `synchronous = NORMAL`, a file in a temporary directory) and PostgreSQL (`$ADK_POSTGRES_URL`,
//! a schema of its own; skipped with a notice when unset).
//!
//! Run with `cargo bench -p adk-session`; numbers go in `docs/sessions.md`.

mod support;

use std::sync::Arc;

use adk_core::{
    Content, CreateSessionRequest, Event, EventActions, FunctionResponse, GetSessionRequest, IdGen,
    InvocationId, Part, Role, Session, SessionService, ToolIntent, UuidIdGen,
};
use adk_session::{PostgresSessionService, SqliteSessionService};
use divan::Bencher;
use divan::counter::ItemsCount;
use serde_json::json;
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool};

use support::RUNTIME;

/// Tasks that append concurrently, each to its own session, in the many-sessions benchmark.
const WRITERS: usize = 4;
/// Appends each writer makes per iteration of the many-sessions benchmark.
const APPENDS_PER_WRITER: usize = 25;

fn main() {
    divan::main();
}

/// Where a benchmark's sessions live, kept until it ends.
enum Storage {
    Sqlite { _dir: tempfile::TempDir },
    Postgres { admin: PgPool, schema: String },
}

impl Storage {
    fn drop_now(self) {
        if let Self::Postgres { admin, schema } = self {
            RUNTIME.block_on(async {
                sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                    .execute(&admin)
                    .await
                    .expect("dropping the benchmark schema");
            });
        }
    }
}

/// A fresh service of `backend`, or `None` for PostgreSQL without `$ADK_POSTGRES_URL`.
fn open(backend: &str) -> Option<(Arc<dyn SessionService>, Storage)> {
    RUNTIME.block_on(async {
        match backend {
            "sqlite" => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let service = SqliteSessionService::open(dir.path().join("bench.db"))
                    .await
                    .expect("open SQLite");
                Some((
                    Arc::new(service) as Arc<dyn SessionService>,
                    Storage::Sqlite { _dir: dir },
                ))
            }
            _ => {
                let Ok(url) = std::env::var("ADK_POSTGRES_URL") else {
                    eprintln!(
                        "*** NOT RUN: PostgreSQL benchmark skipped: ADK_POSTGRES_URL is not set ***"
                    );
                    return None;
                };
                let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
                let admin = PgPool::connect_with(options.clone())
                    .await
                    .expect("connect");
                let schema = format!("adk_bench_{}", UuidIdGen.new_uuid().replace('-', ""));
                sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
                    .execute(&admin)
                    .await
                    .expect("create schema");
                let service = PostgresSessionService::connect_with(
                    options.options([("search_path", schema.as_str())]),
                )
                .await
                .expect("connect the service");
                Some((
                    Arc::new(service) as Arc<dyn SessionService>,
                    Storage::Postgres { admin, schema },
                ))
            }
        }
    })
}

/// A typical event: a sentence of model text and a small state delta.
fn event(n: usize) -> Event {
    let mut actions = EventActions::default();
    actions.state_delta.insert("turn".into(), json!(n));
    Event::new(InvocationId::from("e-bench"), "agent")
        .with_content(Content::model(format!(
            "Turn {n}: the weather in Paris is sunny with a light breeze from the west."
        )))
        .with_actions(actions)
}

async fn new_session(service: &dyn SessionService) -> Session {
    service
        .create_session(CreateSessionRequest::new("bench", "ada"))
        .await
        .expect("create")
}

/// Appends to one session, one event per iteration.
#[divan::bench(args = ["sqlite", "postgres"], max_time = 3)]
fn append_one_session(bencher: Bencher<'_, '_>, backend: &str) {
    let Some((service, storage)) = open(backend) else {
        return;
    };
    let mut session = RUNTIME.block_on(new_session(&*service));
    let mut n = 0;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        n += 1;
        RUNTIME.block_on(async {
            service
                .append_event(&mut session, event(n))
                .await
                .expect("append");
        });
        session.events.clear();
    });
    storage.drop_now();
}

/// One tool call's storage, the way the flow stores it: with `journaled`, the intent recorded
/// before the tool runs, then the event holding its function response (whose append also
/// completes the journal entry); without, the event alone. The difference is the journal's cost
/// per call.
#[divan::bench(args = [("sqlite", false), ("sqlite", true), ("postgres", false), ("postgres", true)], max_time = 3)]
fn tool_call(bencher: Bencher<'_, '_>, (backend, journaled): (&str, bool)) {
    let Some((service, storage)) = open(backend) else {
        return;
    };
    let mut session = RUNTIME.block_on(new_session(&*service));
    let key = session.key();
    let invocation = InvocationId::from("e-bench");
    let mut n = 0;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        n += 1;
        let call_id = format!("adk-call-{n}");
        RUNTIME.block_on(async {
            if journaled {
                let intent = ToolIntent::new(
                    invocation.clone(),
                    call_id.clone().into(),
                    "pay",
                    "0".repeat(64),
                );
                service
                    .record_tool_intent(&key, &intent)
                    .await
                    .expect("record the intent");
            }
            let response = FunctionResponse::new("pay", json!({"paid": n})).with_id(call_id);
            let answered = Event::new(invocation.clone(), "agent").with_content(Content::new(
                Role::User,
                [Part::function_response(response)],
            ));
            service
                .append_event(&mut session, answered)
                .await
                .expect("append");
        });
        session.events.clear();
    });
    storage.drop_now();
}

/// Appends from several tasks at once, each to its own session.
#[divan::bench(args = ["sqlite", "postgres"], max_time = 3)]
fn append_many_sessions(bencher: Bencher<'_, '_>, backend: &str) {
    let Some((service, storage)) = open(backend) else {
        return;
    };
    let sessions: Vec<Session> = RUNTIME.block_on(async {
        let mut sessions = Vec::new();
        for _ in 0..WRITERS {
            sessions.push(new_session(&*service).await);
        }
        sessions
    });
    let sessions: Vec<Arc<tokio::sync::Mutex<Session>>> = sessions
        .into_iter()
        .map(|session| Arc::new(tokio::sync::Mutex::new(session)))
        .collect();
    bencher
        .counter(ItemsCount::new(WRITERS * APPENDS_PER_WRITER))
        .bench_local(|| {
            RUNTIME.block_on(async {
                let writers = sessions.iter().map(|session| {
                    let service = Arc::clone(&service);
                    let session = Arc::clone(session);
                    tokio::spawn(async move {
                        let mut session = session.lock().await;
                        for n in 0..APPENDS_PER_WRITER {
                            service
                                .append_event(&mut session, event(n))
                                .await
                                .expect("append");
                            session.events.clear();
                        }
                    })
                });
                for writer in futures::future::join_all(writers).await {
                    writer.expect("a writer task");
                }
            });
        });
    storage.drop_now();
}

/// Loads a whole session of `events` events.
#[divan::bench(
    consts = [100, 1_000, 10_000],
    args = ["sqlite", "postgres"],
    max_time = 3,
)]
fn get_session<const EVENTS: usize>(bencher: Bencher<'_, '_>, backend: &str) {
    let Some((service, storage)) = open(backend) else {
        return;
    };
    let key = RUNTIME.block_on(async {
        let mut session = new_session(&*service).await;
        for n in 0..EVENTS {
            service
                .append_event(&mut session, event(n))
                .await
                .expect("append");
            session.events.clear();
        }
        session.key()
    });
    bencher.bench_local(|| {
        let session = RUNTIME.block_on(service.get_session(GetSessionRequest::new(key.clone())));
        assert_eq!(session.expect("get").expect("exists").events.len(), EVENTS);
    });
    storage.drop_now();
}
