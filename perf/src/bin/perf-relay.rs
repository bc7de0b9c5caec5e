//! The server benchmark's floor: a bare axum server with no agent, no session store and no
//! runner, that answers `/run_sse` by making the turn's two Gemini calls (streamed) and relaying
//! what the model streams as server-sent events in ADK's event shape, with the tool's response
//! computed in between. Session creation answers a new id and stores nothing. Prints `listening
//! <port>`, serves until killed. `--model-url URL` is the mock's base URL up to the API version.
//! See the crate docs.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use adk_perf::serve::drain_events;
use adk_perf::{MODEL, weather};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The mock's URL and the client every turn shares.
struct Relay {
    url: String,
    client: reqwest::Client,
    ids: AtomicU64,
}

/// The tool declaration both requests carry, as an adapter sends it.
fn tools() -> Value {
    json!([{"functionDeclarations": [{
        "name": "get_weather",
        "description": "Returns the sky and the temperature in a city.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING",
            "description": "The city to report on, for example \"Paris\"."}}, "required": ["city"]},
    }]}])
}

async fn create_session(
    State(relay): State<Arc<Relay>>,
    Path((app, user)): Path<(String, String)>,
) -> axum::Json<Value> {
    let id = relay.ids.fetch_add(1, Ordering::Relaxed);
    axum::Json(
        json!({"id": format!("s{id}"), "appName": app, "userId": user, "state": {},
        "events": [], "lastUpdateTime": 0.0}),
    )
}

/// Writes `event` as one SSE frame; false once the client is gone.
async fn send(events: &mpsc::Sender<Result<Bytes, Infallible>>, event: &Value) -> bool {
    let frame = format!("data: {event}\n\n");
    events.send(Ok(Bytes::from(frame))).await.is_ok()
}

/// Streams one model call, relaying each chunk as a partial event; returns the parts of the
/// whole answer, or `None` when the call or the client failed.
async fn relay_call(
    relay: &Relay,
    body: &Value,
    events: &mpsc::Sender<Result<Bytes, Infallible>>,
) -> Option<Vec<Value>> {
    let response = relay
        .client
        .post(&relay.url)
        .header("x-goog-api-key", "perf-key")
        .json(body)
        .send()
        .await
        .ok()?;
    let mut parts: Vec<Value> = Vec::new();
    let mut buffer = Vec::new();
    let mut bytes = response.bytes_stream();
    while let Some(chunk) = bytes.next().await {
        buffer.extend_from_slice(&chunk.ok()?);
        for data in drain_events(&mut buffer) {
            let chunk: Value = serde_json::from_slice(&data).ok()?;
            let content = &chunk["candidates"][0]["content"];
            let text = content["parts"][0]["text"].is_string();
            if text
                && !send(
                    events,
                    &json!({"author": "weather_agent", "partial": true,
                "content": content}),
                )
                .await
            {
                return None;
            }
            parts.extend(content["parts"].as_array().into_iter().flatten().cloned());
        }
    }
    Some(parts)
}

/// The turn: the call for the tool, the tool's response, the answer.
async fn turn(relay: Arc<Relay>, question: Value, events: mpsc::Sender<Result<Bytes, Infallible>>) {
    let system = json!({"parts": [{"text": "You answer questions about the weather."}]});
    let first = json!({"contents": [question], "systemInstruction": system, "tools": tools()});
    let Some(call_parts) = relay_call(&relay, &first, &events).await else {
        return;
    };
    let call = json!({"role": "model", "parts": call_parts});
    if !send(
        &events,
        &json!({"author": "weather_agent", "content": call}),
    )
    .await
    {
        return;
    }
    let function_call = &call["parts"][0]["functionCall"];
    let city = function_call["args"]["city"].as_str().unwrap_or_default();
    let answer = json!({"role": "user", "parts": [{"functionResponse": {
        "name": function_call["name"], "response": weather(city)}}]});
    if !send(
        &events,
        &json!({"author": "weather_agent", "content": answer}),
    )
    .await
    {
        return;
    }
    let second = json!({"contents": [question, call, answer], "systemInstruction": system,
        "tools": tools()});
    let Some(parts) = relay_call(&relay, &second, &events).await else {
        return;
    };
    let text: String = parts
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect();
    send(
        &events,
        &json!({"author": "weather_agent",
        "content": {"role": "model", "parts": [{"text": text}]}}),
    )
    .await;
}

async fn run_sse(
    State(relay): State<Arc<Relay>>,
    axum::Json(request): axum::Json<Value>,
) -> Response {
    let question = request["newMessage"].clone();
    let (sender, receiver) = mpsc::channel(4);
    tokio::spawn(turn(relay, question, sender));
    let body = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|frame| (frame, receiver))
    });
    (
        [(CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(body),
    )
        .into_response()
}

#[tokio::main]
async fn main() {
    let mut words = std::env::args().skip(1);
    let model_url = match (words.next().as_deref(), words.next()) {
        (Some("--model-url"), Some(url)) => url,
        _ => panic!("usage: perf-relay --model-url URL"),
    };
    let relay = Arc::new(Relay {
        url: format!("{model_url}/models/{MODEL}:streamGenerateContent?alt=sse"),
        client: reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .expect("a client"),
        ids: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .route(
            "/apps/{app}/users/{user}/sessions",
            axum::routing::post(create_session),
        )
        .route("/run_sse", axum::routing::post(run_sse))
        .route(
            "/list-apps",
            axum::routing::get(|| async { "[\"quickstart\"]" }),
        )
        .with_state(relay);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("an address").port();
    // The port is the program's output, read by `cargo xtask bench --serve`.
    #[allow(clippy::print_stdout)]
    {
        println!("listening {port}");
    }
    axum::serve(listener, app).await.expect("serving");
}
