//! What A2A adds to a turn: converting an event to an A2A message and back, and one
//! `message/send` through our server and client on loopback (JSON-RPC, the task store, the task
//! driver, a session of the context, a model that answers at once) next to a run of the same
//! agent through the runner alone.
//!
//! Run with `cargo bench -p adk-a2a --bench a2a`.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use adk_a2a::convert::{event_to_message, message_to_content};
use adk_a2a::types::{Message, MessageSendParams, Part, Role};
use adk_a2a::{A2aClient, A2aServer, ClientConfig};
use adk_core::{
    Content, Event, FunctionCall, FunctionResponse, InvocationId, Llm, LlmRequest, LlmResponse,
    LlmResponseStream, Part as AdkPart, StreamingMode,
};
use adk_flow::LlmAgent;
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use futures::StreamExt as _;
use serde_json::json;

fn main() {
    divan::main();
}

/// A model that answers every call with the same short text.
#[derive(Debug)]
struct Instant;

impl Llm for Instant {
    fn name(&self) -> &str {
        "instant"
    }

    fn generate(&self, _request: LlmRequest, _mode: StreamingMode) -> LlmResponseStream {
        futures::stream::iter([Ok(LlmResponse::new(Content::model(
            "It is sunny in Paris.",
        )))])
        .boxed()
    }
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    client: A2aClient,
    runner: Runner,
    sessions: AtomicU64,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let runner = || {
        let agent = LlmAgent::builder("weather").model(Instant).build().unwrap();
        Runner::builder("weather", agent, InMemorySessionService::new())
            .auto_create_session(true)
            .build()
            .unwrap()
    };
    let client = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = A2aServer::builder(runner()).build().unwrap();
        tokio::spawn(adk_a2a::serve_listener(
            server,
            listener,
            std::future::pending(),
        ));
        A2aClient::new(url, ClientConfig::default()).unwrap()
    });
    Setup {
        runtime,
        client,
        runner: runner(),
        sessions: AtomicU64::new(0),
    }
});

fn event() -> Event {
    let mut parts = Vec::new();
    for index in 0..5 {
        parts.push(AdkPart::text(format!("Paragraph {index} of the answer.")));
        parts.push(AdkPart::function_call(
            FunctionCall::new("get_weather", json!({"city": "Paris", "day": index}))
                .with_id(format!("c{index}")),
        ));
        parts.push(AdkPart::function_response(
            FunctionResponse::new("get_weather", json!({"forecast": "sunny", "high": 24}))
                .with_id(format!("c{index}")),
        ));
        parts.push(AdkPart::inline_data("image/png", vec![7u8; 256]));
    }
    Event::new(InvocationId::from("e-1"), "weather")
        .with_content(Content::new(adk_core::Role::Model, parts))
}

/// A 20-part event (text, calls, responses, bytes) to an A2A message and back.
#[divan::bench]
fn event_to_message_and_back(bencher: divan::Bencher<'_, '_>) {
    let event = event();
    bencher.bench(|| {
        let message = event_to_message(divan::black_box(&event)).unwrap();
        message_to_content(&message)
    });
}

/// One `message/send` over loopback: a new context (session) and task each time.
#[divan::bench(sample_count = 200)]
fn message_send_over_loopback() {
    let setup = &*SETUP;
    setup.runtime.block_on(async {
        let message = Message::new(Role::User, vec![Part::text("Weather in Paris?")]);
        setup
            .client
            .send_message(MessageSendParams::new(message))
            .await
            .unwrap()
    });
}

/// The same turn through the runner alone, in a new session each time.
#[divan::bench(sample_count = 200)]
fn runner_alone() {
    let setup = &*SETUP;
    let session = setup.sessions.fetch_add(1, Ordering::Relaxed).to_string();
    setup.runtime.block_on(async {
        let mut events = Box::pin(setup.runner.run("ada", session, "Weather in Paris?"));
        while let Some(event) = events.next().await {
            event.unwrap();
        }
    });
}
