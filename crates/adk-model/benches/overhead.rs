//! Per-call overhead of the adapters against a loopback mock, on the same payload for every
//! provider (the same question with the same system instruction, the same seven-word answer, the
//! same usage), next to a bare reqwest call that sends the Chat Completions adapter's request body
//! and reads the same answer. Allocations per call are counted by divan's allocation profiler.
//!
//! Run with `cargo bench -p adk-model --bench overhead`. For instructions per call, run the bench
//! binary under callgrind with `ADK_OVERHEAD_CALLS=<adapter>:<unary|stream>:<calls>`: it then
//! makes that many calls and exits, and the difference between 101 calls and 1 call, over 100, is
//! one call's instructions (the loopback server runs in the same process, and is counted the same
//! for every adapter).

use std::sync::{Arc, LazyLock};

use adk_core::{Content, Llm, LlmRequest};
use adk_model::{Anthropic, GeminiModel, OpenAiModel, OpenAiResponses, RetryPolicy};
use adk_test::MockServer;
use adk_test::model_conformance::{
    Answer, AnthropicWire, ChatCompletionsWire, GeminiWire, ResponsesWire, Wire,
};
use futures::StreamExt as _;
use serde_json::json;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    if let Ok(spec) = std::env::var("ADK_OVERHEAD_CALLS") {
        count_calls(&spec);
        return;
    }
    divan::main();
}

/// The adapters measured, in the order of the table.
const ADAPTERS: [&str; 4] = ["gemini", "anthropic", "responses", "chat"];

struct Setup {
    runtime: tokio::runtime::Runtime,
    /// Per adapter, the unary and the streaming endpoint.
    endpoints: Vec<(&'static str, Endpoint, Endpoint)>,
    client: reqwest::Client,
}

struct Endpoint {
    /// Kept alive for the benchmark's duration (dropping it stops the server), and asked for the
    /// request the adapter sent.
    server: MockServer,
    model: Arc<dyn Llm>,
}

fn request() -> LlmRequest {
    let mut request = LlmRequest::new("", vec![Content::user("What is the capital of France?")]);
    request.append_instructions(["You are a helpful assistant."]);
    request.config.temperature = Some(0.0);
    request.config.max_output_tokens = Some(256);
    request
}

fn answer() -> Answer {
    Answer {
        text: ["The", " capital", " of", " France", " is", " Paris", "."]
            .map(str::to_owned)
            .to_vec(),
        calls: Vec::new(),
        usage: (24, 7),
    }
}

/// The wire and the adapter of `name`, built for the server at `base`.
fn adapter(name: &str, base: &str) -> (Box<dyn Wire>, Arc<dyn Llm>) {
    match name {
        "gemini" => (
            Box::new(GeminiWire),
            Arc::new(
                GeminiModel::builder("gemini-2.5-flash")
                    .api_key("bench-key")
                    .base_url(base)
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("a model"),
            ),
        ),
        "anthropic" => (
            Box::new(AnthropicWire),
            Arc::new(
                Anthropic::builder("claude-sonnet-4-5")
                    .api_key("bench-key")
                    .base_url(base)
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("a model"),
            ),
        ),
        "responses" => (
            Box::new(ResponsesWire),
            Arc::new(
                OpenAiResponses::builder("gpt-4o-mini")
                    .api_key("bench-key")
                    .base_url(base)
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("a model"),
            ),
        ),
        _ => (
            Box::new(ChatCompletionsWire),
            Arc::new(
                OpenAiModel::builder("gpt-4o-mini")
                    .api_key("bench-key")
                    .base_url(base)
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("a model"),
            ),
        ),
    }
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let endpoint = |name: &str, stream: bool| {
        // Building an adapter connects nowhere, so any address gives the wire.
        let (wire, _) = adapter(name, "http://127.0.0.1:9");
        let answer = if stream {
            wire.stream(&answer())
        } else {
            wire.answer(&answer())
        };
        let server = runtime.block_on(MockServer::repeating(answer));
        let (_, model) = adapter(name, &server.base_url());
        Endpoint { server, model }
    };
    let endpoints = ADAPTERS
        .iter()
        .map(|name| (*name, endpoint(name, false), endpoint(name, true)))
        .collect();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("a client");
    Setup {
        runtime,
        endpoints,
        client,
    }
});

fn endpoint(name: &str, stream: bool) -> &'static Endpoint {
    let (_, unary, streaming) = SETUP
        .endpoints
        .iter()
        .find(|(adapter, _, _)| *adapter == name)
        .expect("a known adapter");
    if stream { streaming } else { unary }
}

fn adapter_call(endpoint: &Endpoint, stream: bool) -> usize {
    SETUP.runtime.block_on(async {
        let responses: Vec<_> = endpoint.model.generate(request(), stream).collect().await;
        assert!(responses.iter().all(Result::is_ok));
        responses.len()
    })
}

/// The Chat Completions adapter's body, which the bare client sends; it checks once that the
/// adapter sends exactly that.
fn bare_body(stream: bool) -> Vec<u8> {
    let mut body = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the capital of France?"}
        ],
        "temperature": 0.0,
        "max_completion_tokens": 256
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    let chat = endpoint("chat", stream);
    adapter_call(chat, stream);
    let sent = chat.server.requests().pop().expect("a request").json();
    assert_eq!(sent, body, "the bare body differs from the adapter's");
    serde_json::to_vec(&body).expect("JSON")
}

fn bare_call(endpoint: &Endpoint, body: &[u8], stream: bool) -> usize {
    SETUP.runtime.block_on(async {
        let response = SETUP
            .client
            .post(format!("{}/chat/completions", endpoint.server.base_url()))
            .bearer_auth("bench-key")
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .expect("a response");
        if stream {
            let mut bytes = 0;
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                bytes += chunk.expect("a chunk").len();
            }
            bytes
        } else {
            response.bytes().await.expect("a body").len()
        }
    })
}

#[divan::bench(args = ADAPTERS)]
fn unary(name: &str) -> usize {
    adapter_call(endpoint(name, false), false)
}

#[divan::bench(args = ADAPTERS)]
fn stream(name: &str) -> usize {
    adapter_call(endpoint(name, true), true)
}

#[divan::bench]
fn unary_bare_reqwest(bencher: divan::Bencher<'_, '_>) {
    let body = bare_body(false);
    bencher.bench(|| bare_call(endpoint("chat", false), &body, false));
}

#[divan::bench]
fn stream_bare_reqwest(bencher: divan::Bencher<'_, '_>) {
    let body = bare_body(true);
    bencher.bench(|| bare_call(endpoint("chat", true), &body, true));
}

/// Makes the calls `spec` (`<adapter>:<unary|stream>:<calls>`) names, for counting instructions
/// under callgrind.
fn count_calls(spec: &str) {
    let mut parts = spec.split(':');
    let (Some(name), Some(kind), Some(calls)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("ADK_OVERHEAD_CALLS is <adapter>:<unary|stream>:<calls>, not {spec}");
    };
    let calls: usize = calls.parse().expect("a number of calls");
    let stream = kind == "stream";
    let endpoint = endpoint(name, stream);
    for _ in 0..calls {
        adapter_call(endpoint, stream);
    }
}
