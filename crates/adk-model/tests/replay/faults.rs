//! Fault tests on the loopback server: rate limits and overloads with `Retry-After`, repeated 5xx,
//! error events mid-stream, a stream cut mid-event, a malformed chunk, a slow server, an
//! unreachable server, and cancellation.

use std::time::{Duration, Instant};

use adk_core::{Content, Llm, LlmRequest};
use adk_model::{ErrorKind, OpenAiModel, RetryPolicy};
use adk_test::{BodyEnd, ChunkGate, MockResponse, MockServer};
use futures::StreamExt as _;
use serde_json::json;

use crate::common;

fn request() -> LlmRequest {
    LlmRequest::new("gpt-test", vec![Content::user("hi")])
}

fn model(server: &MockServer, retry: RetryPolicy, timeout: Duration) -> OpenAiModel {
    OpenAiModel::builder("gpt-test")
        .api_key("test-key")
        .base_url(format!("{}/v1", server.base_url()))
        .retry(retry)
        .timeout(Some(timeout))
        .build()
        .unwrap()
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(1))
}

fn completion(text: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
    )
}

fn chunk(text: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
    )
}

fn kind(outcome: &common::Outcome) -> ErrorKind {
    outcome.model_error().kind()
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let server = MockServer::start([
        MockResponse::json(
            429,
            &json!({"error": {"message": "slow down", "type": "rate_limit"}}),
        )
        .header("retry-after", "1"),
        completion("done"),
    ])
    .await;
    let started = Instant::now();
    let outcome = common::run(
        &model(&server, fast_retries(), Duration::from_secs(5)),
        request(),
        false,
    )
    .await;
    assert_eq!(
        outcome.last().content.as_ref().unwrap().text().as_deref(),
        Some("done")
    );
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "Retry-After was honoured: {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn three_server_errors_give_a_typed_error() {
    let failure = || {
        MockResponse::json(
            500,
            &json!({"error": {"message": "internal", "type": "server_error"}}),
        )
    };
    let server = MockServer::start([failure(), failure(), failure(), completion("never")]).await;
    let outcome = common::run(
        &model(&server, fast_retries(), Duration::from_secs(5)),
        request(),
        false,
    )
    .await;
    let error = outcome.model_error();
    assert_eq!(error.status(), Some(500));
    assert_eq!(
        error.body(),
        Some(r#"{"error":{"message":"internal","type":"server_error"}}"#)
    );
    assert!(
        error.to_string().contains("gave up after 3 attempts"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start([
        MockResponse::json(400, &json!({"error": {"message": "bad"}})),
        completion("never"),
    ])
    .await;
    let outcome = common::run(
        &model(&server, fast_retries(), Duration::from_secs(5)),
        request(),
        false,
    )
    .await;
    assert_eq!(outcome.model_error().status(), Some(400));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_mid_event_is_a_typed_error_and_not_retried() {
    let server = MockServer::start([
        MockResponse::sse("")
            .with_chunks([
                chunk("Hel"),
                "data: {\"choices\": [{\"index\": 0, \"del".to_owned(),
            ])
            .delay_chunks(Duration::from_millis(50))
            .cut(),
        MockResponse::sse(&chunk("never")),
    ])
    .await;
    let outcome = common::run(
        &model(&server, fast_retries(), Duration::from_secs(5)),
        request(),
        true,
    )
    .await;
    assert_eq!(
        outcome.partial_text(),
        "Hel",
        "data before the cut is delivered"
    );
    assert_eq!(kind(&outcome), ErrorKind::StreamCut, "{:?}", outcome.error);
    assert_eq!(
        server.requests().len(),
        1,
        "no retry after the stream yielded data"
    );
}

#[tokio::test]
async fn a_stream_ending_without_finish_reason_is_cut() {
    let server = MockServer::start([MockResponse::sse(&chunk("Hel"))]).await;
    let outcome = common::run(
        &model(&server, RetryPolicy::none(), Duration::from_secs(5)),
        request(),
        true,
    )
    .await;
    assert_eq!(kind(&outcome), ErrorKind::StreamCut);
}

#[tokio::test]
async fn a_malformed_chunk_is_a_decode_error() {
    let server = MockServer::start([MockResponse::sse(&format!(
        "{}data: {{not json}}\n\n",
        chunk("ok")
    ))])
    .await;
    let outcome = common::run(
        &model(&server, RetryPolicy::none(), Duration::from_secs(5)),
        request(),
        true,
    )
    .await;
    assert_eq!(kind(&outcome), ErrorKind::Decode);
    assert!(outcome.model_error().to_string().contains("{not json}"));
}

#[tokio::test]
async fn a_slow_server_hits_the_timeout() {
    // The server answers only after 3 s; with a 200 ms timeout the call must end as a timeout
    // before that answer (waiting for it would give the text "late" instead).
    let server =
        MockServer::start([completion("late").delay_headers(Duration::from_secs(3))]).await;
    let outcome = common::run(
        &model(&server, fast_retries(), Duration::from_millis(200)),
        request(),
        false,
    )
    .await;
    assert_eq!(kind(&outcome), ErrorKind::Timeout, "{:?}", outcome.error);
    assert_eq!(server.requests().len(), 1, "timeouts are not retried");
}

#[tokio::test]
async fn a_stream_stalling_mid_way_hits_the_timeout() {
    let server = MockServer::start([MockResponse::sse(&format!("{}{}", chunk("a"), chunk("b")))
        .delay_chunks(Duration::from_secs(3))])
    .await;
    let outcome = common::run(
        &model(&server, RetryPolicy::none(), Duration::from_millis(300)),
        request(),
        true,
    )
    .await;
    assert_eq!(outcome.partial_text(), "a");
    assert_eq!(kind(&outcome), ErrorKind::Timeout, "{:?}", outcome.error);
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let model = OpenAiModel::builder("gpt-test")
        .base_url(format!("http://{address}/v1"))
        .retry(fast_retries())
        .build()
        .unwrap();
    let outcome = common::run(&model, request(), false).await;
    assert_eq!(kind(&outcome), ErrorKind::Connect);
    assert!(
        outcome
            .model_error()
            .to_string()
            .contains("gave up after 3 attempts")
    );
}

#[tokio::test]
async fn the_first_delta_arrives_without_waiting_for_the_rest() {
    // The server sends the first event, then holds the rest until the test opens the gate: the
    // first delta can only arrive if the adapter does not wait for the rest. Many events follow,
    // so that a server writing to a closed connection notices it.
    let mut body = chunk("first");
    for n in 0..200 {
        body.push_str(&chunk(&format!(" more {n}")));
    }
    let gate = ChunkGate::new();
    let server = MockServer::start([MockResponse::sse(&body).hold_after_first_chunk(&gate)]).await;
    let model = model(&server, RetryPolicy::none(), Duration::from_secs(30));
    let mut stream = model.generate(request(), true);
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.content.unwrap().text().as_deref(), Some("first"));
    assert_eq!(gate.sent_chunks(), 1, "the rest was not sent yet");

    // Dropping the stream cancels the call and closes its connection: the server, let go, fails
    // to write the rest and drops the body unfinished.
    drop(stream);
    gate.open();
    assert_eq!(gate.ended().await, BodyEnd::Dropped);
    assert!(gate.sent_chunks() < 201, "not every event went out");
}

fn gemini(server: &MockServer) -> adk_model::GeminiModel {
    adk_model::GeminiModel::builder("gemini-test")
        .api_key("test-key")
        .base_url(server.base_url())
        .retry(fast_retries())
        .build()
        .unwrap()
}

#[tokio::test]
async fn gemini_retries_unavailable_then_streams() {
    let unavailable = || {
        MockResponse::json(
            503,
            &json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}),
        )
    };
    let events = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hi\"}], \"role\": \"model\"}, \"finishReason\": \"STOP\"}]}\r\n\r\n";
    let server = MockServer::start([unavailable(), unavailable(), MockResponse::sse(events)]).await;
    // An empty model name in the request falls back to the adapter's.
    let request = LlmRequest::new("", vec![Content::user("hi")]);
    let outcome = common::run(&gemini(&server), request, true).await;
    assert_eq!(
        outcome.last().content.as_ref().unwrap().text().as_deref(),
        Some("Hi")
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|request| request.path == "/models/gemini-test:streamGenerateContent")
    );
}

#[tokio::test]
async fn gemini_error_event_and_cut_stream_are_typed_errors() {
    let text = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hi\"}]}}]}\n\n";
    let error = "data: {\"error\": {\"code\": 500, \"message\": \"internal\", \"status\": \"INTERNAL\"}}\n\n";
    let server = MockServer::start([
        MockResponse::sse(&format!("{text}{error}")),
        MockResponse::sse(text),
    ])
    .await;
    let model = gemini(&server);
    let failed = common::run(&model, request(), true).await;
    assert_eq!(failed.partial_text(), "Hi");
    assert_eq!(kind(&failed), ErrorKind::Provider);
    assert_eq!(failed.model_error().provider_status(), Some("INTERNAL"));
    let cut = common::run(&model, request(), true).await;
    assert_eq!(
        kind(&cut),
        ErrorKind::StreamCut,
        "no finishReason before the end"
    );
}

#[tokio::test]
async fn model_debug_output_never_shows_the_key() {
    let server = MockServer::start([]).await;
    let openai = OpenAiModel::builder("m")
        .api_key("sk-secret-1")
        .base_url(server.base_url())
        .build()
        .unwrap();
    let gemini = adk_model::GeminiModel::builder("m")
        .api_key("secret-2")
        .build()
        .unwrap();
    let shown = format!(
        "{openai:?} {gemini:?} {:?}",
        adk_model::ApiKey::new("secret-3")
    );
    assert!(!shown.contains("secret"), "{shown}");
}

#[tokio::test]
async fn a_redirect_is_not_followed_so_the_key_stays_with_the_model_api() {
    // The redirect points back at the same server, so following it would be seen as a second
    // request carrying the key.
    let server = MockServer::start([
        MockResponse::new(307, "").header("location", "/v1/elsewhere"),
        completion("followed"),
    ])
    .await;
    let model = model(&server, fast_retries(), Duration::from_secs(10));
    let outcome = common::run(&model, request(), false).await;
    assert_eq!(kind(&outcome), ErrorKind::Http { status: 307 });
    assert_eq!(server.requests().len(), 1, "the redirect was not followed");
}

#[test]
fn a_malformed_base_url_fails_the_build_with_a_clear_error() {
    let error = OpenAiModel::builder("gpt-test")
        .api_key("test-key")
        .base_url("127.0.0.1:8080/v1")
        .build()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(error.to_string().contains("not a valid URL"), "{error}");
}

fn anthropic(server: &MockServer) -> adk_model::Anthropic {
    adk_model::Anthropic::builder("claude-test")
        .api_key("test-key")
        .base_url(server.base_url())
        .retry(fast_retries())
        .build()
        .unwrap()
}

fn anthropic_error(status: u16, kind: &str, message: &str) -> MockResponse {
    MockResponse::json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}),
    )
}

#[tokio::test]
async fn anthropic_529_and_429_are_retried_after_their_retry_after() {
    let answer = MockResponse::json(
        200,
        &json!({"type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}),
    );
    let server = MockServer::start([
        anthropic_error(529, "overloaded_error", "Overloaded").header("retry-after", "1"),
        anthropic_error(429, "rate_limit_error", "slow down").header("retry-after", "0"),
        answer,
    ])
    .await;
    let started = Instant::now();
    let outcome = common::run(&anthropic(&server), request(), false).await;
    assert_eq!(
        outcome.last().content.as_ref().unwrap().text().as_deref(),
        Some("done")
    );
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "the 529's retry-after was honoured: {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 3);

    let server = MockServer::start([
        anthropic_error(529, "overloaded_error", "Overloaded").header("retry-after", "0"),
        anthropic_error(529, "overloaded_error", "Overloaded").header("retry-after", "0"),
        anthropic_error(529, "overloaded_error", "Overloaded").header("retry-after", "0"),
    ])
    .await;
    let outcome = common::run(&anthropic(&server), request(), false).await;
    let error = outcome.model_error();
    assert_eq!(
        (error.status(), error.provider_status()),
        (Some(529), Some("overloaded_error"))
    );
    assert!(
        error.to_string().contains("gave up after 3 attempts"),
        "{error}"
    );
}

#[tokio::test]
async fn an_anthropic_error_event_mid_stream_ends_it_unretried() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-test\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Par\"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    let server = MockServer::start([MockResponse::sse(body), MockResponse::sse("")]).await;
    let outcome = common::run(&anthropic(&server), request(), true).await;
    assert_eq!(outcome.partial_text(), "Par");
    let error = outcome.model_error();
    assert_eq!(error.kind(), ErrorKind::Provider);
    assert_eq!(error.provider_status(), Some("overloaded_error"));
    assert_eq!(
        server.requests().len(),
        1,
        "nothing is retried once the stream began"
    );
}

#[tokio::test]
async fn a_failed_responses_stream_is_a_provider_error() {
    let body = concat!(
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-test\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hel\"}\n\n",
        "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed.\"},\"output\":[]}}\n\n",
    );
    let server = MockServer::start([MockResponse::sse(body)]).await;
    let model = adk_model::OpenAiResponses::builder("gpt-test")
        .api_key("test-key")
        .base_url(server.base_url())
        .retry(fast_retries())
        .build()
        .unwrap();
    let outcome = common::run(&model, request(), true).await;
    assert_eq!(outcome.partial_text(), "Hel");
    let error = outcome.model_error();
    assert_eq!(
        (error.kind(), error.provider_status()),
        (ErrorKind::Provider, Some("server_error"))
    );
    assert!(error.to_string().contains("The model failed."), "{error}");
}

#[tokio::test]
async fn new_adapters_never_show_their_keys() {
    let server = MockServer::start([]).await;
    let anthropic = adk_model::Anthropic::builder("m")
        .api_key("secret-anthropic")
        .header("x-proxy-token", "secret-proxy")
        .base_url(server.base_url());
    let responses = adk_model::OpenAiResponses::builder("m")
        .api_key("secret-openai")
        .base_url(server.base_url());
    let shown = format!("{anthropic:?} {responses:?}");
    let (anthropic, responses) = (anthropic.build().unwrap(), responses.build().unwrap());
    let shown = format!("{shown} {anthropic:?} {responses:?}");
    assert!(!shown.contains("secret"), "{shown}");
}
