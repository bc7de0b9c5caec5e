//! A loopback HTTP server that answers with recorded or scripted responses, in order, and keeps
//! the requests it received so tests can compare them with the recording.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::serve::ListenerExt as _;
use bytes::Bytes;
use parking_lot::Mutex;

use crate::Exchange;

/// How a response body ended on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyEnd {
    /// Every chunk was handed to the connection.
    Finished,
    /// The server dropped the body before its last chunk: the client closed the connection.
    Dropped,
}

/// Lets a test hold a response body after its first chunk until it says so, and see how many
/// chunks the server sent and how the body ended: tests of streaming assert order and causality
/// with it ("the rest was not sent yet when the first delta arrived", "dropping the stream closed
/// the connection") instead of wall-clock bounds.
#[derive(Debug, Clone)]
pub struct ChunkGate {
    inner: Arc<GateInner>,
}

#[derive(Debug)]
struct GateInner {
    opened: tokio::sync::watch::Sender<bool>,
    sent: std::sync::atomic::AtomicUsize,
    end: tokio::sync::watch::Sender<Option<BodyEnd>>,
}

impl Default for ChunkGate {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkGate {
    /// A closed gate.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(GateInner {
                opened: tokio::sync::watch::Sender::new(false),
                sent: std::sync::atomic::AtomicUsize::new(0),
                end: tokio::sync::watch::Sender::new(None),
            }),
        }
    }

    /// Lets the held chunks go.
    pub fn open(&self) {
        self.inner.opened.send_replace(true);
    }

    /// How many chunks of the body the server has handed to the connection so far.
    pub fn sent_chunks(&self) -> usize {
        self.inner.sent.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until the server is done with the body, and says how it ended.
    pub async fn ended(&self) -> BodyEnd {
        let mut end = self.inner.end.subscribe();
        match end.wait_for(Option::is_some).await {
            Ok(end) => end.unwrap_or(BodyEnd::Dropped),
            // The sender lives in `self`, so it cannot be gone while we wait.
            Err(_) => BodyEnd::Dropped,
        }
    }

    async fn wait_open(&self) {
        let mut opened = self.inner.opened.subscribe();
        let _ = opened.wait_for(|open| *open).await;
    }
}

/// Tells the gate how the body ended when the server drops it.
struct BodyGuard {
    gate: Option<ChunkGate>,
    finished: std::cell::Cell<bool>,
}

impl Drop for BodyGuard {
    fn drop(&mut self) {
        if let Some(gate) = &self.gate {
            let end = if self.finished.get() {
                BodyEnd::Finished
            } else {
                BodyEnd::Dropped
            };
            gate.inner.end.send_replace(Some(end));
        }
    }
}

/// One scripted response: status, headers, and a body written in chunks, optionally slowly, held
/// at a gate, or cut off mid-way.
#[derive(Debug, Clone)]
pub struct MockResponse {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: Vec<Bytes>,
    delay_before_headers: Duration,
    delay_between_chunks: Duration,
    cut_after_chunks: bool,
    gate: Option<ChunkGate>,
}

impl MockResponse {
    /// A response of `status` whose body is written in one piece.
    pub fn new(status: u16, body: impl Into<Bytes>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            chunks: vec![body.into()],
            delay_before_headers: Duration::ZERO,
            delay_between_chunks: Duration::ZERO,
            cut_after_chunks: false,
            gate: None,
        }
    }

    /// A JSON response.
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::new(status, body.to_string()).header("content-type", "application/json")
    }

    /// An SSE response whose body is `body`, written and flushed one event at a time.
    pub fn sse(body: &str) -> Self {
        Self::new(200, Bytes::new())
            .header("content-type", "text/event-stream")
            .with_chunks(split_events(body))
    }

    /// The recorded response of `exchange`; an SSE body is written one event at a time.
    pub fn from_exchange(exchange: &Exchange) -> Self {
        let is_sse = exchange
            .response_header("content-type")
            .is_some_and(|kind| kind.contains("event-stream"));
        let mut response = Self::new(exchange.status, exchange.response_body.clone());
        if is_sse {
            response = response.with_chunks(split_events(&exchange.response_text()));
        }
        response.headers = exchange.response_headers.clone();
        response
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces the body with `chunks`, each written and flushed separately.
    pub fn with_chunks(mut self, chunks: impl IntoIterator<Item = impl Into<Bytes>>) -> Self {
        self.chunks = chunks.into_iter().map(Into::into).collect();
        self
    }

    /// Waits `delay` before sending the status line.
    pub fn delay_headers(mut self, delay: Duration) -> Self {
        self.delay_before_headers = delay;
        self
    }

    /// Waits `delay` before each body chunk after the first.
    pub fn delay_chunks(mut self, delay: Duration) -> Self {
        self.delay_between_chunks = delay;
        self
    }

    /// Sends the first body chunk, then holds the rest until `gate` opens; the gate also counts
    /// the chunks sent and sees how the body ended.
    pub fn hold_after_first_chunk(mut self, gate: &ChunkGate) -> Self {
        self.gate = Some(gate.clone());
        self
    }

    /// Aborts the connection after the last chunk instead of ending the body cleanly.
    pub fn cut(mut self) -> Self {
        self.cut_after_chunks = true;
        self
    }

    fn into_response(self) -> Response {
        let Self {
            status,
            headers,
            chunks,
            delay_between_chunks,
            cut_after_chunks,
            gate,
            ..
        } = self;
        let guard = BodyGuard {
            gate,
            finished: std::cell::Cell::new(false),
        };
        let body = futures::stream::unfold(
            (chunks.into_iter(), true, false, guard),
            move |(mut chunks, first, done, guard)| async move {
                if done {
                    guard.finished.set(true);
                    return None;
                }
                match chunks.next() {
                    Some(chunk) => {
                        if !first {
                            if let Some(gate) = &guard.gate {
                                gate.wait_open().await;
                            }
                            if !delay_between_chunks.is_zero() {
                                tokio::time::sleep(delay_between_chunks).await;
                            }
                        }
                        if let Some(gate) = &guard.gate {
                            gate.inner
                                .sent
                                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        Some((
                            Ok::<_, std::io::Error>(chunk),
                            (chunks, false, false, guard),
                        ))
                    }
                    None if cut_after_chunks => Some((
                        Err(std::io::Error::other("mock server cut the stream")),
                        (chunks, false, true, guard),
                    )),
                    None => {
                        guard.finished.set(true);
                        None
                    }
                }
            },
        );
        let mut response = Response::new(Body::from_stream(body));
        *response.status_mut() =
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        for (name, value) in headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                response.headers_mut().append(name, value);
            }
        }
        response
    }
}

/// Splits an SSE body after each blank line (LF or CRLF), keeping every byte.
fn split_events(body: &str) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let bytes = body.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let end = if bytes[index..].starts_with(b"\r\n\r\n") {
            Some(index + 4)
        } else if bytes[index..].starts_with(b"\n\n") {
            Some(index + 2)
        } else {
            None
        };
        match end {
            Some(end) => {
                chunks.push(Bytes::copy_from_slice(&bytes[start..end]));
                start = end;
                index = end;
            }
            None => index += 1,
        }
    }
    if start < bytes.len() {
        chunks.push(Bytes::copy_from_slice(&bytes[start..]));
    }
    chunks
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    /// The HTTP method.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string without `?`, empty when there is none.
    pub query: String,
    /// The headers, names lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl ReceivedRequest {
    /// The body parsed as JSON.
    ///
    /// # Panics
    ///
    /// When the body is not JSON, showing it.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "request body is not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A check of each request before it is answered: `Some(response)` answers it instead of the
/// queue, as a real server answers a request it rejects.
type RequestCheck = Box<dyn Fn(&ReceivedRequest) -> Option<MockResponse> + Send + Sync>;

struct Shared {
    check: Option<RequestCheck>,
    queue: Mutex<VecDeque<MockResponse>>,
    /// Responses answered in turn, forever, once the queue is empty.
    repeat: Vec<MockResponse>,
    repeated: std::sync::atomic::AtomicUsize,
    received: Mutex<Vec<ReceivedRequest>>,
}

/// A loopback HTTP/1.1 server that answers each request with the next queued response, whatever
/// its path, and records what it received. It stops when dropped.
///
/// When the queue is empty it answers `599` with a message saying so, which a test notices.
pub struct MockServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Starts a server that answers with `responses` in order. Needs a running tokio runtime.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start(responses: impl IntoIterator<Item = MockResponse>) -> Self {
        Self::start_with(responses.into_iter().collect(), Vec::new(), None).await
    }

    /// Starts a server that answers with `responses` in order, except the requests `check`
    /// answers itself (a fake of an API's other routes, say), which use up no queued response.
    pub async fn start_checked(
        responses: impl IntoIterator<Item = MockResponse>,
        check: impl Fn(&ReceivedRequest) -> Option<MockResponse> + Send + Sync + 'static,
    ) -> Self {
        Self::start_with(
            responses.into_iter().collect(),
            Vec::new(),
            Some(Box::new(check)),
        )
        .await
    }

    /// Starts a server that replays the recorded responses of `exchanges` in order, answering a
    /// request that `check` rejects with the response it gives instead (without using up a
    /// recorded one), as a real provider answers a malformed request.
    pub async fn replay_checked(
        exchanges: &[Exchange],
        check: impl Fn(&ReceivedRequest) -> Option<MockResponse> + Send + Sync + 'static,
    ) -> Self {
        let responses = exchanges.iter().map(MockResponse::from_exchange).collect();
        Self::start_with(responses, Vec::new(), Some(Box::new(check))).await
    }

    /// Starts a server that replays the recorded responses of `exchanges` in order.
    pub async fn replay(exchanges: &[Exchange]) -> Self {
        Self::start(exchanges.iter().map(MockResponse::from_exchange)).await
    }

    /// Starts a server that answers every request with `response` (for benchmarks); it keeps only
    /// the latest request, so that memory stays flat over millions of calls.
    pub async fn repeating(response: MockResponse) -> Self {
        Self::start_with(VecDeque::new(), vec![response], None).await
    }

    /// Starts a server that answers with `responses` in turn, starting over after the last (for
    /// benchmarks of conversations: a tool call, then the answer); like
    /// [`repeating`](Self::repeating) it keeps only the latest request.
    pub async fn cycling(responses: Vec<MockResponse>) -> Self {
        Self::start_with(VecDeque::new(), responses, None).await
    }

    async fn start_with(
        queue: VecDeque<MockResponse>,
        repeat: Vec<MockResponse>,
        check: Option<RequestCheck>,
    ) -> Self {
        let shared = Arc::new(Shared {
            check,
            queue: Mutex::new(queue),
            repeat,
            repeated: std::sync::atomic::AtomicUsize::new(0),
            received: Mutex::new(Vec::new()),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("binding a loopback port for the mock server");
        let address = listener.local_addr().expect("the mock server's address");
        let listener = listener.tap_io(|stream| {
            // Without TCP_NODELAY each small SSE write waits for the client's delayed ACK.
            let _ = stream.set_nodelay(true);
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            address,
            shared,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.shared.received.lock().clone()
    }

    /// How many queued responses were not asked for.
    pub fn remaining(&self) -> usize {
        self.shared.queue.lock().len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let request = ReceivedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    let rejection = shared.check.as_ref().and_then(|check| check(&request));
    {
        let mut received = shared.received.lock();
        if !shared.repeat.is_empty() {
            received.clear();
        }
        received.push(request);
    }
    if let Some(rejection) = rejection {
        return rejection.into_response();
    }
    let next = shared.queue.lock().pop_front().or_else(|| {
        let turn = shared
            .repeated
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shared
            .repeat
            .get(turn % shared.repeat.len().max(1))
            .cloned()
    });
    match next {
        Some(response) => {
            if !response.delay_before_headers.is_zero() {
                tokio::time::sleep(response.delay_before_headers).await;
            }
            response.into_response()
        }
        None => {
            MockResponse::new(599, "mock server: no response left in the queue").into_response()
        }
    }
}

/// OpenAI's rule for Chat Completions requests, for [`MockServer::replay_checked`]: every
/// assistant message with `tool_calls` must be followed by one `tool` message per call id before
/// any other message. A request that breaks it gets the HTTP 400 OpenAI answers, with OpenAI's
/// error envelope.
pub fn openai_tool_calls_answered(request: &ReceivedRequest) -> Option<MockResponse> {
    let body: serde_json::Value = serde_json::from_slice(&request.body).ok()?;
    let messages = body.get("messages")?.as_array()?;
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        index += 1;
        let Some(calls) = message.get("tool_calls").and_then(|calls| calls.as_array()) else {
            continue;
        };
        let mut unanswered: Vec<&str> = calls
            .iter()
            .filter_map(|call| call.get("id").and_then(|id| id.as_str()))
            .collect();
        while let Some(next) = messages.get(index).filter(|next| next["role"] == "tool") {
            let answered = next["tool_call_id"].as_str().unwrap_or_default();
            unanswered.retain(|id| *id != answered);
            index += 1;
        }
        if !unanswered.is_empty() {
            let message = format!(
                "An assistant message with 'tool_calls' must be followed by tool messages \
                 responding to each 'tool_call_id'. The following tool_call_ids did not have \
                 response messages: {}",
                unanswered.join(", ")
            );
            return Some(MockResponse::json(
                400,
                &serde_json::json!({"error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": null,
                }}),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: serde_json::Value) -> ReceivedRequest {
        ReceivedRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            query: String::new(),
            headers: Vec::new(),
            body: Bytes::from(body.to_string()),
        }
    }

    #[test]
    fn unanswered_tool_calls_are_rejected_as_openai_does() {
        let call = |id: &str| serde_json::json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}});
        let answered = request(serde_json::json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "b", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "2"},
            {"role": "user", "content": "next"},
        ]}));
        assert!(openai_tool_calls_answered(&answered).is_none());
        let dangling = request(serde_json::json!({"messages": [
            {"role": "assistant", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "2"},
            {"role": "user", "content": "next"},
        ]}));
        let rejection = openai_tool_calls_answered(&dangling).expect("rejected");
        assert_eq!(rejection.status, 400);
    }

    #[test]
    fn sse_bodies_split_after_each_blank_line() {
        let chunks = split_events(": c\n\ndata: 1\r\n\r\ndata: 2\n\ntail");
        let chunks: Vec<_> = chunks.iter().map(|chunk| chunk.as_ref()).collect();
        assert_eq!(
            chunks,
            [&b": c\n\n"[..], b"data: 1\r\n\r\n", b"data: 2\n\n", b"tail"]
        );
    }
}
