//! Per-call overhead of the adapters against a loopback mock, next to a bare reqwest call that
//! sends the same request body and reads the same answer. The ratio adapter / bare is what the
//! adapter adds (request building, response parsing, the stream plumbing).
//!
//! Run with `cargo bench -p adk-model --bench overhead`.

use std::sync::LazyLock;

use adk_core::{Content, Llm, LlmRequest};
use adk_model::{OpenAi, RetryPolicy};
use adk_test::{MockResponse, MockServer};
use futures::StreamExt as _;
use serde_json::json;

fn main() {
    divan::main();
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    unary: Endpoint,
    stream: Endpoint,
    client: reqwest::Client,
}

struct Endpoint {
    /// Kept alive for the benchmark's duration (dropping it stops the server), and asked for the
    /// request the adapter sent.
    server: MockServer,
    url: String,
    model: OpenAi,
}

fn request() -> LlmRequest {
    let mut request = LlmRequest::new(
        "gpt-4o-mini",
        vec![Content::user("What is the capital of France?")],
    );
    request.append_instructions(["You are a helpful assistant."]);
    request.config.temperature = Some(0.0);
    request
}

/// The body the adapter sends for `request()`, written out for the bare client.
fn body(stream: bool) -> Vec<u8> {
    let mut body = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the capital of France?"}
        ],
        "temperature": 0.0
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    serde_json::to_vec(&body).expect("JSON")
}

fn unary_answer() -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "The capital of France is Paris.", "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 24, "completion_tokens": 8, "total_tokens": 32}
        }),
    )
}

fn stream_answer() -> MockResponse {
    let mut body = String::new();
    for word in ["The", " capital", " of", " France", " is", " Paris", "."] {
        body.push_str(&format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": null}]})
        ));
    }
    body.push_str(&format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 24, "completion_tokens": 7, "total_tokens": 31}})
    ));
    MockResponse::sse(&body)
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let endpoint = |answer: MockResponse| {
        let server = runtime.block_on(MockServer::repeating(answer));
        let base = format!("{}/v1", server.base_url());
        let model = OpenAi::builder("gpt-4o-mini")
            .api_key("bench-key")
            .base_url(&base)
            .retry(RetryPolicy::none())
            .build()
            .expect("a model");
        Endpoint {
            server,
            url: format!("{base}/chat/completions"),
            model,
        }
    };
    let unary = endpoint(unary_answer());
    let stream = endpoint(stream_answer());
    // The bare client must send what the adapter sends, or the comparison means nothing.
    for (endpoint, streaming) in [(&unary, false), (&stream, true)] {
        let sent = runtime.block_on(async {
            let _: Vec<_> = endpoint
                .model
                .generate(request(), mode(streaming))
                .collect()
                .await;
            endpoint.server.requests().pop().expect("a request").json()
        });
        let bare: serde_json::Value = serde_json::from_slice(&body(streaming)).expect("JSON");
        assert_eq!(sent, bare, "the bare body differs from the adapter's");
    }
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("a client");
    Setup {
        runtime,
        unary,
        stream,
        client,
    }
});

fn adapter_call(endpoint: &Endpoint, stream: bool) -> usize {
    SETUP.runtime.block_on(async {
        let responses: Vec<_> = endpoint
            .model
            .generate(request(), mode(stream))
            .collect()
            .await;
        assert!(responses.iter().all(Result::is_ok));
        responses.len()
    })
}

fn bare_call(endpoint: &Endpoint, body: &[u8], stream: bool) -> usize {
    SETUP.runtime.block_on(async {
        let response = SETUP
            .client
            .post(&endpoint.url)
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

#[divan::bench]
fn unary_adapter() -> usize {
    adapter_call(&SETUP.unary, false)
}

#[divan::bench]
fn unary_bare_reqwest(bencher: divan::Bencher<'_, '_>) {
    let body = body(false);
    bencher.bench(|| bare_call(&SETUP.unary, &body, false));
}

#[divan::bench]
fn stream_adapter() -> usize {
    adapter_call(&SETUP.stream, true)
}

#[divan::bench]
fn stream_bare_reqwest(bencher: divan::Bencher<'_, '_>) {
    let body = body(true);
    bencher.bench(|| bare_call(&SETUP.stream, &body, true));
}

/// The streaming mode a test's `stream` flag asks for.
fn mode(stream: bool) -> adk_core::StreamingMode {
    if stream {
        adk_core::StreamingMode::Sse
    } else {
        adk_core::StreamingMode::None
    }
}
