//! A whole invocation through the runner — two model calls and one tool call — against a loopback
//! mock of the OpenAI Chat Completions API, with in-memory and with SQLite sessions, next to a bare
//! reqwest client that sends the same two request bodies and reads the same two answers. The
//! difference is what adk-rs adds per invocation: session load and creation, storing the user's
//! event and the four agent events, the flow's request building, the adapter, the tool call.
//!
//! Run with `cargo bench -p adk-runner --bench invocation`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use adk_core::SessionService;
use adk_flow::LlmAgent;
use adk_model::{OpenAi, RetryPolicy};
use adk_runner::Runner;
use adk_session::{InMemorySessionService, SqliteSessionService};
use adk_test::{ClosureTool, MockResponse, MockServer};
use futures::StreamExt as _;
use serde_json::json;

fn main() {
    divan::main();
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    /// Kept alive for the benchmark's duration: dropping it stops the server.
    _server: MockServer,
    url: String,
    in_memory: Runner,
    sqlite: Runner,
    /// Kept alive for the benchmark's duration: it holds the SQLite file.
    _dir: tempfile::TempDir,
    client: reqwest::Client,
    /// The two request bodies the adapter sends in one invocation, for the bare client.
    bodies: [Vec<u8>; 2],
    sessions: AtomicU64,
}

fn tool_call_answer() -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 60, "completion_tokens": 12, "total_tokens": 72}
        }),
    )
}

fn text_answer() -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "It is sunny in Paris.", "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 8, "total_tokens": 98}
        }),
    )
}

fn runner(base_url: &str, sessions: Arc<dyn SessionService>) -> Runner {
    let model = OpenAi::builder("gpt-4o-mini")
        .api_key("bench-key")
        .base_url(base_url)
        .retry(RetryPolicy::none())
        .build()
        .expect("a model");
    let weather = ClosureTool::shared("get_weather", |_, args| {
        Ok(json!({"city": args["city"], "weather": "sunny"}))
    });
    let agent = LlmAgent::builder("assistant")
        .model(model)
        .instruction("You answer questions about the weather.")
        .tool(weather)
        .build()
        .expect("an agent");
    Runner::builder("bench", agent, sessions)
        .auto_create_session(true)
        .build()
        .expect("a runner")
}

/// One invocation in a fresh session; returns the number of events.
async fn invocation(runner: &Runner, session: u64) -> usize {
    let events: Vec<_> = runner
        .run(
            "user",
            format!("s-{session}"),
            "What is the weather in Paris?",
        )
        .collect()
        .await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(events.len(), 3);
    events.len()
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Record the two bodies of one invocation for the bare client.
    let bodies = runtime.block_on(async {
        let recorder = MockServer::start([tool_call_answer(), text_answer()]).await;
        let runner = runner(
            &format!("{}/v1", recorder.base_url()),
            Arc::new(InMemorySessionService::new()),
        );
        invocation(&runner, 0).await;
        let requests = recorder.requests();
        assert_eq!(requests.len(), 2);
        [requests[0].body.to_vec(), requests[1].body.to_vec()]
    });
    let server = runtime.block_on(MockServer::cycling(vec![tool_call_answer(), text_answer()]));
    let base = format!("{}/v1", server.base_url());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sqlite: Arc<dyn SessionService> = Arc::new(
        runtime
            .block_on(SqliteSessionService::open(dir.path().join("sessions.db")))
            .expect("a SQLite session store"),
    );
    Setup {
        in_memory: runner(&base, Arc::new(InMemorySessionService::new())),
        sqlite: runner(&base, sqlite),
        url: format!("{base}/chat/completions"),
        _server: server,
        _dir: dir,
        client: reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .expect("a client"),
        bodies,
        sessions: AtomicU64::new(1),
        runtime,
    }
});

fn run_invocation(runner: &Runner) -> usize {
    let session = SETUP.sessions.fetch_add(1, Ordering::Relaxed);
    SETUP.runtime.block_on(invocation(runner, session))
}

#[divan::bench]
fn invocation_in_memory_sessions() -> usize {
    run_invocation(&SETUP.in_memory)
}

#[divan::bench]
fn invocation_sqlite_sessions() -> usize {
    run_invocation(&SETUP.sqlite)
}

#[divan::bench]
fn bare_reqwest_two_calls() -> usize {
    SETUP.runtime.block_on(async {
        let mut bytes = 0;
        for body in &SETUP.bodies {
            let response = SETUP
                .client
                .post(&SETUP.url)
                .bearer_auth("bench-key")
                .header("content-type", "application/json")
                .body(body.clone())
                .send()
                .await
                .expect("a response");
            bytes += response.bytes().await.expect("a body").len();
        }
        bytes
    })
}
