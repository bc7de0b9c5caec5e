//! Bounded by bytes and by time: a run takes its place before its body is read, bodies being read
//! share a byte budget, a body or a request head that trickles in is cut off, and an SSE client
//! that stops reading loses its run (cancelled, its session unlocked) after the write timeout.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_flow::LlmAgent;
use adk_runner::Runner;
use adk_server::gate::ConnectionLimits;
use adk_server::{Server, ServerConfig};
use adk_session::{InMemorySessionService, LocalSessionLocks};
use adk_test::{EndlessModel, ScriptedModel};
use serde_json::json;
use support::{APP, TestServer, USER, eventually, run_body};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

/// Opens a connection to `base` and sends a request head (and the start of a body), no more.
async fn start_request(base: &str, head: &str, body_start: &[u8]) -> TcpStream {
    let address = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body_start).await.unwrap();
    stream
}

/// The status of the answer on `stream`, reading its head.
async fn status_of(stream: &mut TcpStream) -> u16 {
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = stream.read(&mut byte).await.unwrap();
        assert_eq!(read, 1, "the connection closed before an answer");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    head.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Reads (and drops) what `stream` still delivers until the server closes it.
async fn until_closed(stream: &mut TcpStream) {
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn post_head(path: &str, host: &str, length: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

fn host_of(base: &str) -> &str {
    base.trim_start_matches("http://")
}

#[tokio::test]
async fn security_resource_bounds_a_run_is_refused_before_its_body_is_read_when_the_server_is_full()
{
    let model = ScriptedModel::new("scripted").then_call("wait_forever", json!({}));
    let server =
        TestServer::start_with(model, ServerConfig::default().max_concurrent_runs(1)).await;
    server.create_session("s").await;
    // The only run's place is taken.
    let running = server
        .client
        .post(server.url("/run_sse"))
        .json(&run_body("s", "wait"))
        .send()
        .await
        .unwrap();
    eventually(server.tool_started.notified(), "the first run started").await;

    // A second run sends its head and the start of a large body, and no more: it is refused at
    // once, not after its body arrived.
    let mut second = start_request(
        &server.base,
        &post_head("/run", host_of(&server.base), 1_000_000),
        b"{\"appName\": \"weather\", ",
    )
    .await;
    let status = tokio::time::timeout(PATIENCE, status_of(&mut second))
        .await
        .expect("the second run is answered before its body arrives");
    assert_eq!(status, 503);
    drop(running);
}

#[tokio::test]
async fn security_resource_bounds_parallel_large_bodies_beyond_the_budget_are_refused_at_once() {
    let server = TestServer::start(ScriptedModel::new("scripted")).await;
    // With the defaults (32 MiB a body, 128 MiB of bodies at once), ten clients each announce a
    // 20 MiB body and send only its start.
    let path = format!("/apps/{APP}/users/{USER}/sessions");
    let mut streams = Vec::new();
    for _ in 0..10 {
        streams.push(
            start_request(
                &server.base,
                &post_head(&path, host_of(&server.base), 20 * 1024 * 1024),
                b"{\"sessionId\": \"",
            )
            .await,
        );
    }
    // 128 MiB hold six bodies of 20 MiB: four are answered 503 without their bodies, while the
    // others wait for theirs.
    let (answers, mut answered) = tokio::sync::mpsc::unbounded_channel();
    let mut readers = Vec::new();
    for mut stream in streams {
        let answers = answers.clone();
        readers.push(tokio::spawn(async move {
            let _ = answers.send(status_of(&mut stream).await);
            // Keep the connection open until the test ends.
            std::future::pending::<()>().await;
        }));
    }
    for _ in 0..4 {
        let status = tokio::time::timeout(PATIENCE, answered.recv())
            .await
            .expect("bodies past the budget are refused at once")
            .unwrap();
        assert_eq!(status, 503);
    }
    for reader in readers {
        reader.abort();
    }
}

#[tokio::test]
async fn security_resource_bounds_a_body_that_trickles_in_is_cut_off() {
    let server = TestServer::start_with(
        ScriptedModel::new("scripted"),
        ServerConfig::default().body_read_timeout(Duration::from_millis(300)),
    )
    .await;
    let path = format!("/apps/{APP}/users/{USER}/sessions");
    let mut stream = start_request(
        &server.base,
        &post_head(&path, host_of(&server.base), 100),
        b"{",
    )
    .await;
    let status = tokio::time::timeout(PATIENCE, status_of(&mut stream))
        .await
        .expect("a stalled body is answered");
    assert_eq!(status, 408);
}

#[tokio::test]
async fn security_resource_bounds_a_request_head_that_never_ends_and_an_idle_connection_are_closed()
{
    let limits = ConnectionLimits::default()
        .header_read_timeout(Duration::from_millis(300))
        .idle_timeout(Duration::from_millis(300));
    let server = TestServer::start_with(
        ScriptedModel::new("scripted"),
        ServerConfig::default().connection_limits(limits),
    )
    .await;
    let mut slow = start_request(&server.base, "GET /health HTTP/1.1\r\nhost: 127", b"").await;
    tokio::time::timeout(PATIENCE, until_closed(&mut slow))
        .await
        .expect("a head that never ends is cut off");

    let mut idle = start_request(
        &server.base,
        &format!(
            "GET /health HTTP/1.1\r\nhost: {}\r\n\r\n",
            host_of(&server.base)
        ),
        b"",
    )
    .await;
    assert_eq!(status_of(&mut idle).await, 200);
    tokio::time::timeout(PATIENCE, until_closed(&mut idle))
        .await
        .expect("a kept-alive connection left idle is closed");
}

#[tokio::test]
async fn security_resource_bounds_an_sse_client_that_stops_reading_loses_its_run_and_its_session() {
    // A model that streams forever, each chunk 64 KiB.
    let model = EndlessModel::streaming_text(64 * 1024);
    let agent = LlmAgent::builder("talker")
        .description("Talks forever.")
        .model(Arc::new(model.clone()))
        .build()
        .unwrap();
    let runner = Runner::builder(APP, Arc::new(agent), InMemorySessionService::new())
        .auto_create_session(true)
        .build()
        .unwrap();
    let config = ServerConfig::default()
        .connection_limits(ConnectionLimits::default().write_timeout(Duration::from_millis(500)))
        .session_locks(Arc::new(LocalSessionLocks::new(Duration::from_secs(5))));
    let server = Server::builder()
        .app(runner)
        .config(config)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });

    let mut body = run_body("s", "talk");
    body["streaming"] = json!(true);
    let body = body.to_string();
    // The client reads the answer's head and then nothing.
    let mut reader = start_request(
        &base,
        &post_head("/run_sse", host_of(&base), body.len()),
        body.as_bytes(),
    )
    .await;
    assert_eq!(status_of(&mut reader).await, 200);

    tokio::time::timeout(PATIENCE, model.answer_dropped())
        .await
        .expect("the run nobody reads is cancelled");
    // The session is free again: another run of it starts at once instead of waiting for the
    // lock and being answered 409.
    let mut next = start_request(
        &base,
        &post_head("/run_sse", host_of(&base), body.len()),
        body.as_bytes(),
    )
    .await;
    let status = tokio::time::timeout(PATIENCE, status_of(&mut next))
        .await
        .expect("the next run is answered");
    assert_eq!(status, 200);
    drop(next);
    // And the client that stopped reading was cut off.
    tokio::time::timeout(PATIENCE, until_closed(&mut reader))
        .await
        .expect("the connection of the client that stopped reading is closed");
}
