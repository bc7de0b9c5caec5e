//! Keep-alive faults on a loopback HTTP/1.1 server written on raw sockets, so that each test
//! decides when a connection closes: a reused connection that the server closes or resets before
//! answering is retried, a connection cut mid-response is not, and the pool drops idle connections
//! before servers do.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adk_core::{Content, LlmRequest};
use adk_model::{ErrorKind, OpenAi, RetryPolicy};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::common;

/// What the server does with one request, once it has read all of it.
#[derive(Debug)]
enum Reply {
    /// Writes these bytes, a whole response, and keeps the connection for the next request.
    Answer(String),
    /// Closes the connection without answering and without `Connection: close` (a FIN): what a
    /// server's keep-alive timeout does to an idle connection just as the client reuses it.
    Close,
    /// Resets the connection without answering (an RST).
    Reset,
    /// Writes these bytes, a response cut short, then closes the connection.
    Cut(String),
}

/// The server: connection `n` (in the order accepted, from 1) follows the `n`th script, one reply
/// per request, then keeps the connection open until the client closes it.
struct RawServer {
    address: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl RawServer {
    async fn start(scripts: Vec<Vec<Reply>>) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let address = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = log.clone();
        tokio::spawn(async move {
            let mut scripts = scripts.into_iter();
            let mut connection = 0;
            while let Ok((socket, _)) = listener.accept().await {
                connection += 1;
                let script = scripts.next().unwrap_or_default();
                tokio::spawn(serve(socket, connection, script, shared.clone()));
            }
        });
        Self { address, log }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// What happened to each request, in order: `connection N request M: <reply>`.
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    connection: usize,
    script: Vec<Reply>,
    log: Arc<Mutex<Vec<String>>>,
) {
    let mut buffer = Vec::new();
    let mut request = 0;
    for reply in script {
        if !read_request(&mut socket, &mut buffer).await {
            return;
        }
        request += 1;
        let what = match &reply {
            Reply::Answer(_) => "answered",
            Reply::Close => "closed",
            Reply::Reset => "reset",
            Reply::Cut(_) => "cut",
        };
        log.lock()
            .unwrap()
            .push(format!("connection {connection} request {request}: {what}"));
        match reply {
            Reply::Answer(response) => socket.write_all(response.as_bytes()).await.unwrap(),
            Reply::Close => return,
            Reply::Reset => {
                socket.set_zero_linger().unwrap();
                return;
            }
            Reply::Cut(partial) => {
                socket.write_all(partial.as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
                return;
            }
        }
    }
    // Past its script the connection stays open, idle, until the client drops it; a request on
    // it is a mistake of the test and shows in the log.
    if read_request(&mut socket, &mut buffer).await {
        log.lock()
            .unwrap()
            .push(format!("connection {connection}: unscripted request"));
    }
}

/// Reads one whole request (head and `Content-Length` body) from `socket`, keeping any bytes past
/// it in `buffer`; `false` when the client closed the connection first.
async fn read_request(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
    loop {
        if let Some(head_end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().unwrap());
            let end = head_end + 4 + length;
            if buffer.len() >= end {
                buffer.drain(..end);
                return true;
            }
        }
        let mut chunk = [0; 4096];
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

/// A whole HTTP/1.1 response; without `Connection: close` it keeps the connection alive.
fn response(content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A Chat Completions answer of `text`.
fn completion(text: &str) -> Reply {
    let body = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    });
    Reply::Answer(response("application/json", &body.to_string()))
}

/// A streamed Chat Completions answer of `text`.
fn streamed(text: &str) -> Reply {
    let chunk =
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]});
    Reply::Answer(response(
        "text/event-stream",
        &format!("data: {chunk}\n\ndata: [DONE]\n\n"),
    ))
}

fn model(server: &RawServer) -> adk_model::OpenAi {
    OpenAi::builder("gpt-test")
        .base_url(server.base_url())
        .retry(
            RetryPolicy::default()
                .max_attempts(3)
                .initial_backoff(Duration::from_millis(1)),
        )
        .build()
        .unwrap()
}

fn request() -> LlmRequest {
    LlmRequest::new("gpt-test", vec![Content::user("hi")])
}

fn text(outcome: &common::Outcome) -> Option<String> {
    outcome.last().content.as_ref().and_then(Content::text)
}

#[tokio::test]
async fn a_reused_connection_closed_or_reset_before_the_answer_is_retried_once() {
    // A FIN reaches hyper as an incomplete message, an RST as an I/O error of kind
    // ConnectionReset; the streamed case shows that a retry happens before the stream starts.
    let cases = [
        (Reply::Close, "connection 1 request 2: closed", false),
        (Reply::Reset, "connection 1 request 2: reset", true),
    ];
    for (lost, lost_line, stream) in cases {
        let answer = if stream { streamed } else { completion };
        let server = RawServer::start(vec![vec![answer("one"), lost], vec![answer("two")]]).await;
        let model = model(&server);
        let first = common::run(&model, request(), stream).await;
        assert_eq!(text(&first).as_deref(), Some("one"));
        let second = common::run(&model, request(), stream).await;
        assert_eq!(text(&second).as_deref(), Some("two"), "{lost_line}");
        assert_eq!(
            server.log(),
            [
                "connection 1 request 1: answered",
                lost_line,
                "connection 2 request 1: answered",
            ]
        );
    }
}

#[tokio::test]
async fn a_connection_closed_before_every_answer_gives_up_with_a_typed_error() {
    let server = RawServer::start(vec![
        vec![completion("one"), Reply::Close],
        vec![Reply::Close],
        vec![Reply::Close],
    ])
    .await;
    let model = model(&server);
    common::run(&model, request(), false).await.last();
    let failed = common::run(&model, request(), false).await;
    let error = failed.model_error();
    assert_eq!(error.kind(), ErrorKind::ConnectionClosed, "{error}");
    assert!(error.is_retryable());
    for shown in [
        "connection closed before message completed",
        "gave up after 3 attempts",
    ] {
        assert!(error.to_string().contains(shown), "{error}");
    }
    assert_eq!(server.log().len(), 4, "{:?}", server.log());
}

#[tokio::test]
async fn a_response_cut_mid_body_is_a_typed_error_and_not_retried() {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n";
    let server = RawServer::start(vec![
        vec![Reply::Cut(format!("{head}{{\"choices\": ["))],
        vec![completion("never")],
    ])
    .await;
    let outcome = common::run(&model(&server), request(), false).await;
    assert_eq!(
        outcome.model_error().kind(),
        ErrorKind::StreamCut,
        "{:?}",
        outcome.error
    );
    assert_eq!(server.log(), ["connection 1 request 1: cut"]);
}

#[tokio::test]
async fn a_stream_cut_after_its_first_event_is_a_typed_error_and_not_retried() {
    let event = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]})
    );
    let partial = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
        event.len()
    );
    let server = RawServer::start(vec![
        vec![completion("warm-up"), Reply::Cut(partial)],
        vec![streamed("never")],
    ])
    .await;
    let model = model(&server);
    common::run(&model, request(), false).await.last();
    let outcome = common::run(&model, request(), true).await;
    assert_eq!(outcome.partial_text(), "Hel");
    assert_eq!(
        outcome.model_error().kind(),
        ErrorKind::StreamCut,
        "{:?}",
        outcome.error
    );
    assert_eq!(
        server.log(),
        [
            "connection 1 request 1: answered",
            "connection 1 request 2: cut",
        ]
    );
}

#[tokio::test]
async fn the_pool_drops_a_connection_idle_longer_than_its_timeout() {
    let idle = Duration::from_millis(300);
    for (timeout, expected) in [
        (
            Some(Duration::from_millis(50)),
            [
                "connection 1 request 1: answered",
                "connection 2 request 1: answered",
            ],
        ),
        (
            None,
            [
                "connection 1 request 1: answered",
                "connection 1 request 2: answered",
            ],
        ),
    ] {
        let server = RawServer::start(vec![
            vec![completion("one"), completion("two")],
            vec![completion("two")],
        ])
        .await;
        let model = OpenAi::builder("gpt-test")
            .base_url(server.base_url())
            .pool_idle_timeout(timeout)
            .build()
            .unwrap();
        common::run(&model, request(), false).await.last();
        tokio::time::sleep(idle).await;
        common::run(&model, request(), false).await.last();
        assert_eq!(server.log(), expected, "pool idle timeout {timeout:?}");
    }
}
