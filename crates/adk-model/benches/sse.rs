//! SSE parsing throughput: `sse_data` over recorded Gemini (CRLF) and OpenAI (LF) stream bodies
//! and over a long synthetic OpenAI stream, fed in 4 KiB chunks as a network would.
//!
//! Run with `cargo bench -p adk-model --bench sse`.

use std::sync::LazyLock;

use divan::counter::BytesCount;
use futures::StreamExt as _;

fn main() {
    divan::main();
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime")
});

/// The SSE body of the first exchange of a recording in the shared folder.
fn recorded(name: &str) -> Vec<u8> {
    let path = adk_test::shared_dir().join("fixtures/recorded").join(name);
    let exchanges = adk_test::load_recording(path).unwrap_or_else(|error| panic!("{error}"));
    exchanges[0].response_body.clone()
}

static GEMINI: LazyLock<Vec<u8>> = LazyLock::new(|| {
    recorded("gemini/adk-go__agent_llmagent__TestLLMAgentStreamingModeSSE.httprr")
});
static OPENAI: LazyLock<Vec<u8>> = LazyLock::new(|| {
    recorded(
        "openai/rig__openai_refusal_matrix__chat_control_non_refusing_stream_is_unchanged.yaml",
    )
});
static SYNTHETIC: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut body = String::new();
    for index in 0..5_000 {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"gpt-4o\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"token {index} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
});

/// Counts the events of `body` fed in 4 KiB chunks.
fn count_events(body: &'static [u8]) -> usize {
    let chunks = futures::stream::iter(body.chunks(4096).map(Ok::<_, std::io::Error>));
    RUNTIME.block_on(
        adk_model::sse_data(chunks, 16 * 1024 * 1024)
            .filter(|event| std::future::ready(event.is_ok()))
            .count(),
    )
}

#[divan::bench(name = "gemini_recorded_19_events")]
fn gemini_recorded(bencher: divan::Bencher<'_, '_>) {
    let body: &'static [u8] = &GEMINI;
    bencher
        .counter(BytesCount::of_slice(body))
        .bench(|| count_events(body));
}

#[divan::bench(name = "openai_recorded_115_events")]
fn openai_recorded(bencher: divan::Bencher<'_, '_>) {
    let body: &'static [u8] = &OPENAI;
    bencher
        .counter(BytesCount::of_slice(body))
        .bench(|| count_events(body));
}

#[divan::bench(name = "openai_synthetic_5000_events")]
fn openai_synthetic(bencher: divan::Bencher<'_, '_>) {
    let body: &'static [u8] = &SYNTHETIC;
    bencher
        .counter(BytesCount::of_slice(body))
        .bench(|| count_events(body));
}
