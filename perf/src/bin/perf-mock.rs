//! A loopback Gemini API for the performance workload: a request whose last content holds no
//! function response is answered with a `get_weather` call, one that does with a sentence; unary
//! for `generateContent`, two SSE events for `streamGenerateContent`. Prints `listening <port>`,
//! serves until killed. `--latency-ms N` waits before each answer. See the crate docs.
//!
//! For the server benchmark, the mock can hold its answers: after `POST /control/hold` every
//! model call waits (counted by `GET /control/pending`) until `POST /control/release`, so that
//! the servers' streams stay open while their memory is read.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

fn candidate(parts: Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 8, "totalTokenCount": 48},
        "modelVersion": "gemini-2.5-flash",
    })
}

/// What every handler shares: the latency, and whether answers are held.
struct Mock {
    latency: Duration,
    /// `true` while model calls wait.
    hold: tokio::sync::watch::Sender<bool>,
    /// How many model calls are waiting.
    pending: AtomicUsize,
}

async fn answer(
    State(mock): State<Arc<Mock>>,
    Path(method): Path<String>,
    body: Bytes,
) -> Response {
    let mut held = mock.hold.subscribe();
    if *held.borrow_and_update() {
        mock.pending.fetch_add(1, Ordering::SeqCst);
        // The sender lives as long as the server, so waiting only ends on a release.
        let _ = held.wait_for(|hold| !hold).await;
        mock.pending.fetch_sub(1, Ordering::SeqCst);
    }
    if !mock.latency.is_zero() {
        tokio::time::sleep(mock.latency).await;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let answered = request["contents"]
        .as_array()
        .and_then(|contents| contents.last())
        .is_some_and(|last| last.to_string().contains("functionResponse"));
    let stream = method.ends_with(":streamGenerateContent");
    match (answered, stream) {
        (false, false) => axum::Json(candidate(
            json!([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]),
        ))
        .into_response(),
        (true, false) => axum::Json(candidate(
            json!([{"text": "It is sunny in Paris, 21 degrees."}]),
        ))
        .into_response(),
        (false, true) => sse(&[candidate(
            json!([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]),
        )]),
        (true, true) => sse(&[
            candidate(json!([{"text": "It is sunny "}])),
            candidate(json!([{"text": "in Paris, 21 degrees."}])),
        ]),
    }
}

fn sse(events: &[Value]) -> Response {
    let body: String = events
        .iter()
        .map(|event| format!("data: {event}\r\n\r\n"))
        .collect();
    ([(CONTENT_TYPE, "text/event-stream")], body).into_response()
}

#[tokio::main]
async fn main() {
    let mut latency = Duration::ZERO;
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match (
            word.as_str(),
            words.next().and_then(|value| value.parse::<u64>().ok()),
        ) {
            ("--latency-ms", Some(ms)) => latency = Duration::from_millis(ms),
            _ => panic!("usage: perf-mock [--latency-ms N]"),
        }
    }
    let (hold, _) = tokio::sync::watch::channel(false);
    let mock = Arc::new(Mock {
        latency,
        hold,
        pending: AtomicUsize::new(0),
    });
    let app = axum::Router::new()
        .route("/v1beta/models/{method}", axum::routing::post(answer))
        .route(
            "/control/hold",
            axum::routing::post(|State(mock): State<Arc<Mock>>| async move {
                mock.hold.send_replace(true);
            }),
        )
        .route(
            "/control/release",
            axum::routing::post(|State(mock): State<Arc<Mock>>| async move {
                mock.hold.send_replace(false);
            }),
        )
        .route(
            "/control/pending",
            axum::routing::get(|State(mock): State<Arc<Mock>>| async move {
                mock.pending.load(Ordering::SeqCst).to_string()
            }),
        )
        .with_state(mock);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("an address").port();
    // The port is the program's output, read by `cargo xtask bench`.
    #[allow(clippy::print_stdout)]
    {
        println!("listening {port}");
    }
    axum::serve(listener, app).await.expect("serving");
}
