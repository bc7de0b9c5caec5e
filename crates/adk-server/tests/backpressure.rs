//! Backpressure, per-session serialisation and readiness, over real HTTP on loopback: a full
//! server answers 503 with `Retry-After`, a second run of a busy session waits for the first or
//! gets 409 with nothing stored, `/ready` turns 503 at a shutdown signal and when the session
//! store is gone, and runs are still served during the drain delay.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_server::ServerConfig;
use adk_session::{LocalSessionLocks, PostgresSettings};
use adk_test::{ScriptedModel, postgres_url};
use serde_json::json;
use support::{TestServer, eventually, run_body, status_and_json};

/// Long enough never to run out on a loaded machine: it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(120);

/// A server with `config` whose model first calls `wait_forever`, then answers; sessions `s` and
/// `t` exist.
async fn blocking_server(config: ServerConfig) -> TestServer {
    let model = ScriptedModel::new("scripted")
        .then_call("wait_forever", json!({}))
        .then_text("done");
    let server = TestServer::start_with(model, config).await;
    server.create_session("s").await;
    server.create_session("t").await;
    server
}

/// Starts `POST /run_sse` in `session` and waits until its tool is blocking.
async fn start_blocking_run(server: &TestServer, session: &str) -> tokio::task::JoinHandle<()> {
    let request = server
        .client
        .post(server.url("/run_sse"))
        .json(&run_body(session, "wait"))
        .send();
    let client = tokio::spawn(async move {
        let response = request.await.unwrap();
        // Reading the body keeps the run going until the test aborts this task.
        let _ = response.text().await;
    });
    eventually(server.tool_started.notified(), "the tool starting").await;
    client
}

#[tokio::test]
async fn a_full_server_answers_503_with_retry_after() {
    let server = blocking_server(
        ServerConfig::default()
            .max_concurrent_runs(1)
            .retry_after(Duration::from_millis(1500)),
    )
    .await;
    let client = start_blocking_run(&server, "s").await;
    let response = server
        .client
        .post(server.url("/run"))
        .json(&run_body("t", "hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["retry-after"], "2");
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"], "too_many_runs", "{body}");
    // The refused run stored nothing.
    assert!(server.stored("t").await.events.is_empty());

    // Once the first run is gone its place is free again.
    client.abort();
    eventually(server.tool_cancelled.notified(), "the run's cancellation").await;
    let mut status = 503;
    for _ in 0..1200 {
        (status, _) = server.post("/run", run_body("t", "hello")).await;
        if status != 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_second_run_of_a_busy_session_gets_409_and_stores_nothing() {
    let server = blocking_server(
        ServerConfig::default()
            .session_locks(Arc::new(LocalSessionLocks::new(Duration::from_millis(50)))),
    )
    .await;
    let client = start_blocking_run(&server, "s").await;
    let before = server.stored("s").await.events.len();
    let (status, body) = server.post("/run", run_body("s", "me too")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "session_busy");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("session s is busy"),
        "{body}"
    );
    assert_eq!(server.stored("s").await.events.len(), before);
    // Another session runs meanwhile.
    let (status, body) = server.post("/run", run_body("t", "hello")).await;
    assert_eq!(status, 200, "{body}");
    client.abort();
}

#[tokio::test]
async fn a_second_run_of_a_session_waits_for_the_first_and_sees_its_events() {
    let server = blocking_server(ServerConfig::default()).await;
    let first = start_blocking_run(&server, "s").await;
    let second = tokio::spawn({
        let request = server
            .client
            .post(server.url("/run"))
            .json(&run_body("s", "after you"))
            .send();
        async move { status_and_json(request.await.unwrap()).await }
    });
    // The second run is parked on the session's lock: its message is not stored while the first
    // run holds the session.
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!second.is_finished());
    }
    let during = server.stored("s").await;
    assert!(
        !during
            .events
            .iter()
            .any(|event| event.text().is_some_and(|text| text == "after you")),
        "the second run started while the first held the session"
    );
    first.abort();
    let (status, body) = tokio::time::timeout(PATIENCE, second)
        .await
        .expect("the second run is served")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    // The second run's events come after every event of the first.
    let stored = server.stored("s").await;
    let position = stored
        .events
        .iter()
        .position(|event| event.text().is_some_and(|text| text == "after you"))
        .unwrap();
    assert!(
        position >= during.events.len(),
        "{position} < {}",
        during.events.len()
    );
}

#[tokio::test]
async fn ready_turns_503_at_a_shutdown_signal_while_runs_are_still_served() {
    let model = ScriptedModel::new("scripted").then_text("still here");
    let mut server =
        TestServer::start_with(model, ServerConfig::default().drain_delay(PATIENCE)).await;
    server.create_session("s").await;
    let (status, body) = server.get("/ready").await;
    assert_eq!((status, body), (200, json!({"status": "ready"})));

    server.signal_shutdown();
    let mut ready = server
        .client
        .get(server.url("/ready"))
        .send()
        .await
        .unwrap();
    for _ in 0..1200 {
        if ready.status() == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        ready = server
            .client
            .get(server.url("/ready"))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(ready.headers()["retry-after"], "1");
    let (status, body) = status_and_json(ready).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"], "draining");
    // Live, and still serving runs during the drain delay.
    assert_eq!(server.get("/health").await.0, 200);
    let (status, events) = server.post("/run", run_body("s", "hello")).await;
    assert_eq!(status, 200, "{events}");
    assert_eq!(events[0]["content"]["parts"][0]["text"], "still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_turns_503_when_the_session_store_is_gone() {
    let Some(url) = postgres_url() else {
        return;
    };
    let locks = PostgresSettings::new(url)
        .connect_locks(4, PATIENCE)
        .await
        .unwrap();
    let server = TestServer::start_with(
        ScriptedModel::new("scripted").then_text("hi"),
        ServerConfig::default().session_locks(Arc::new(locks.clone())),
    )
    .await;
    server.create_session("s").await;
    assert_eq!(server.get("/ready").await.0, 200);
    let (status, _) = server.post("/run", run_body("s", "hello")).await;
    assert_eq!(status, 200);

    locks.close().await;
    let (status, body) = server.get("/ready").await;
    assert_eq!(status, 503);
    assert_eq!(body["error"], "session_store_unavailable", "{body}");
    let (status, body) = server.post("/run", run_body("s", "hello")).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"], "session_store_unavailable", "{body}");
}
