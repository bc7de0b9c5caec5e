//! Bounded reads (review finding 9, and the threat model's bounded reads): a provider, or
//! whatever answers at its address, cannot make the adapters buffer without end. An oversized
//! whole answer, an SSE line that never ends, and a huge error body each stop at their limit with
//! a typed error.

use std::time::Duration;

use adk_core::{Content, LlmRequest};
use adk_model::{ErrorKind, Gemini, OpenAi, RetryPolicy};
use adk_test::{MockResponse, MockServer};
use bytes::Bytes;

use crate::common;

const LIMIT: usize = 256 * 1024;

fn openai(server: &MockServer) -> OpenAi {
    OpenAi::builder("gpt-test")
        .api_key("test-key")
        .base_url(format!("{}/v1", server.base_url()))
        .retry(RetryPolicy::none())
        .timeout(Some(Duration::from_secs(30)))
        .max_response_bytes(LIMIT)
        .max_event_bytes(LIMIT)
        .max_error_body_bytes(1024)
        .build()
        .unwrap()
}

fn request() -> LlmRequest {
    LlmRequest::new("gpt-test", vec![Content::user("hi")])
}

/// `count` chunks of `size` bytes of `byte`, after `prefix`.
fn flood(prefix: &str, byte: u8, size: usize, count: usize) -> Vec<Bytes> {
    let mut chunks = vec![Bytes::copy_from_slice(prefix.as_bytes())];
    chunks.extend((0..count).map(|_| Bytes::from(vec![byte; size])));
    chunks
}

#[tokio::test]
async fn review_09_an_oversized_whole_answer_is_refused() {
    // 2 MiB of JSON string, sent in chunks without a length, then again with one.
    let body = flood(
        r#"{"choices":[{"message":{"content":""#,
        b'a',
        64 * 1024,
        32,
    );
    let chunked = MockResponse::new(200, Bytes::new())
        .header("content-type", "application/json")
        .with_chunks(body);
    let sized = MockResponse::new(200, vec![b' '; 2 * LIMIT]);
    let server = MockServer::start([chunked, sized]).await;
    for _ in 0..2 {
        let outcome = common::run(&openai(&server), request(), false).await;
        let error = outcome.model_error();
        assert_eq!(error.kind(), ErrorKind::ResponseTooLarge { limit: LIMIT });
        assert!(error.to_string().contains("max_response_bytes"), "{error}");
    }

    let gemini_server = MockServer::start([MockResponse::new(200, vec![b' '; 2 * LIMIT])]).await;
    let gemini = Gemini::builder("gemini-test")
        .api_key("test-key")
        .base_url(gemini_server.base_url())
        .retry(RetryPolicy::none())
        .max_response_bytes(LIMIT)
        .build()
        .unwrap();
    let outcome = common::run(&gemini, request(), false).await;
    assert_eq!(
        outcome.model_error().kind(),
        ErrorKind::ResponseTooLarge { limit: LIMIT }
    );
}

#[tokio::test]
async fn review_09_an_endless_sse_line_ends_the_stream() {
    // One event whose data line never ends: 4 MiB of it, far past the limit.
    let body = flood("data: ", b'x', 64 * 1024, 64);
    let endless = MockResponse::new(200, Bytes::new())
        .header("content-type", "text/event-stream")
        .with_chunks(body);
    let server = MockServer::start([endless]).await;
    let outcome = common::run(&openai(&server), request(), true).await;
    let error = outcome.model_error();
    assert_eq!(error.kind(), ErrorKind::ResponseTooLarge { limit: LIMIT });
    assert!(error.to_string().contains("max_event_bytes"), "{error}");
    assert!(outcome.responses.is_empty());
}

#[tokio::test]
async fn review_09_a_huge_error_body_is_cut() {
    let mut body = br#"{"error":{"message":""#.to_vec();
    body.extend(vec![b'e'; 1024 * 1024]);
    body.extend(br#""}}"#);
    let server = MockServer::start([MockResponse::new(500, body)]).await;
    let outcome = common::run(&openai(&server), request(), false).await;
    let error = outcome.model_error();
    assert_eq!(error.kind(), ErrorKind::Http { status: 500 });
    let kept = error.body().unwrap();
    assert!(kept.len() < 1100, "{} bytes kept", kept.len());
    assert!(kept.ends_with("[cut at 1024 bytes]"), "{kept}");
    assert!(error.to_string().len() < 1500);
}
