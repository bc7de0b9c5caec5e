//! Crash safety of the SQLite session backend: a child process appends events in a loop and is
//! killed with SIGKILL at random moments, 60 times. After every kill the database must open, pass
//! `PRAGMA integrity_check`, and hold exactly the events whose append returned Ok.
//!
//! The child prints `begin <id>` before each append and `ok <id>` (flushed into the pipe, which
//! survives the kill) after it returned Ok. The rule checked after each kill: the stored events
//! are the stored events before the round, then every event acknowledged in the round in order,
//! then at most the one event that was begun but not acknowledged (its commit may or may not have
//! happened when the kill landed). Nothing is lost, doubled or reordered, and the session's
//! revision and the state written with each event (`count`, `last`) agree with the events.
//!
//! The test binary is its own child: with `ADK_CRASH_CHILD_DB` set it runs the writer loop. Without
//! libtest's harness, `adk_test::run_single_test` honours cargo's filters and prints libtest's lines.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use adk_core::{
    Content, CreateSessionRequest, Event, EventActions, GetSessionRequest, IdGen, InvocationId,
    SessionKey, SessionService, UuidIdGen,
};
use adk_session::SqliteSessionService;
use serde_json::json;
use sqlx::Connection;
use sqlx::sqlite::SqliteConnection;

const CHILD_ENV: &str = "ADK_CRASH_CHILD_DB";
const KILLS: usize = 60;

fn key() -> SessionKey {
    SessionKey::new("crash", "ada", "s")
}

/// The name the check goes by in filters and in libtest's lines.
const TEST_NAME: &str = "sqlite_survives_sigkill_at_random_moments";

fn main() -> ExitCode {
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
    };
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        runtime().block_on(child(PathBuf::from(path)));
        return ExitCode::SUCCESS;
    }
    let args = adk_test::TestArgs::parse(std::env::args().skip(1));
    adk_test::run_single_test(&args, TEST_NAME, || runtime().block_on(parent()))
}

/// Appends events forever, saying what it begins and what returned Ok.
async fn child(path: PathBuf) {
    let service = SqliteSessionService::open(&path).await.expect("open");
    let mut session = service
        // Only the revision is needed, not the events: load the last one.
        .get_session(GetSessionRequest::new(key()).recent(1))
        .await
        .expect("load")
        .expect("the session exists");
    let mut out = std::io::stdout().lock();
    loop {
        let id = UuidIdGen.new_uuid();
        let mut actions = EventActions::default();
        actions.state_delta.insert("last".into(), json!(id));
        actions
            .state_delta
            .insert("count".into(), json!(session.revision + 1));
        let mut event = Event::new(InvocationId::from("e-crash"), "writer")
            .with_content(Content::model("x".repeat(200)))
            .with_actions(actions);
        event.id = id.as_str().into();
        writeln!(out, "begin {id}")
            .and_then(|()| out.flush())
            .expect("stdout");
        service
            .append_event(&mut session, event)
            .await
            .expect("append");
        session.events.clear();
        writeln!(out, "ok {id}")
            .and_then(|()| out.flush())
            .expect("stdout");
    }
}

/// A small xorshift generator: the kill times need not be cryptographic, only varied.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

async fn parent() {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("crash.db");
    {
        let service = SqliteSessionService::open(&path).await.expect("open");
        service
            .create_session(CreateSessionRequest::new("crash", "ada").with_session_id("s"))
            .await
            .expect("create");
        service.close().await;
    }
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |elapsed| elapsed.as_nanos() as u64 | 1);
    eprintln!("crash_safety: seed {seed}");
    let mut rng = Rng(seed);
    let mut stored: Vec<String> = Vec::new();
    let mut in_flight_kept = 0;
    for round in 0..KILLS {
        let (acked, begun) = run_and_kill(&path, Duration::from_micros(rng.below(25_000)));
        let unacked = begun.filter(|id| !acked.contains(id));
        let now = check_database(&path).await;
        let mut expected = stored.clone();
        expected.extend(acked.iter().cloned());
        if now != expected {
            let mut with_in_flight = expected.clone();
            with_in_flight.extend(unacked.clone());
            assert_eq!(
                now, with_in_flight,
                "round {round}: stored events are not the acknowledged ones (+ the one in flight)"
            );
            in_flight_kept += 1;
        }
        stored = now;
    }
    eprintln!(
        "crash_safety: {KILLS} kills, {} events stored, {in_flight_kept} unacknowledged in-flight \
         appends found committed, {:.1?}",
        stored.len(),
        started.elapsed()
    );
}

/// Runs a child until it acknowledged one append, lets it go on for `delay`, kills it, and
/// returns the ids it acknowledged and the last id it began.
fn run_and_kill(path: &Path, delay: Duration) -> (Vec<String>, Option<String>) {
    let mut child = Command::new(std::env::current_exe().expect("this test binary"))
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawning the writer");
    let stdout = child.stdout.take().expect("piped stdout");
    let (first_ok, first_ok_seen) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut acked = Vec::new();
        let mut begun = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("reading the writer's output");
            if let Some(id) = line.strip_prefix("ok ") {
                if acked.is_empty() {
                    let _ = first_ok.send(());
                }
                acked.push(id.to_owned());
            } else if let Some(id) = line.strip_prefix("begin ") {
                begun = Some(id.to_owned());
            }
        }
        (acked, begun)
    });
    first_ok_seen
        .recv_timeout(Duration::from_secs(30))
        .expect("the writer appended nothing in 30 s");
    std::thread::sleep(delay);
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("waiting for the writer");
    assert!(!status.success(), "the writer was killed, not finished");
    reader.join().expect("the reader thread")
}

/// Opens the database after a kill, checks its integrity and consistency, and returns the ids of
/// its events in order.
async fn check_database(path: &Path) -> Vec<String> {
    let mut connection = SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("the database opens after a kill");
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut connection)
        .await
        .expect("integrity_check");
    assert_eq!(integrity, "ok");
    connection.close().await.expect("close");

    let service = SqliteSessionService::open(path).await.expect("open");
    let session = service
        .get_session(GetSessionRequest::new(key()))
        .await
        .expect("load")
        .expect("the session exists");
    service.close().await;
    let ids: Vec<String> = session
        .events
        .iter()
        .map(|event| event.id.as_str().to_owned())
        .collect();
    assert_eq!(session.revision, ids.len() as u64, "one revision per event");
    if let Some(last) = ids.last() {
        assert_eq!(
            session.state["last"],
            json!(last),
            "state written with its event"
        );
        assert_eq!(session.state["count"], json!(ids.len()));
    }
    ids
}
