//! Context overflow: each provider's answer to a request too long for the model, served on the
//! loopback server as the provider sends it, becomes an `adk_core::Error` of kind
//! `ContextOverflow` that still downcasts to the adapter's error with the body as received; other
//! client errors stay `Model` errors.

use adk_core::{Content, ErrorKind, Llm, LlmRequest};
use adk_model::{Gemini, OpenAi, RetryPolicy};
use adk_test::{MockResponse, MockServer};
use serde_json::{Value, json};

use crate::common;

fn request() -> LlmRequest {
    LlmRequest::new("", vec![Content::user("a very long conversation")])
}

fn openai(server: &MockServer) -> OpenAi {
    OpenAi::builder("gpt-test")
        .api_key("test-key")
        .base_url(format!("{}/v1", server.base_url()))
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

fn gemini(server: &MockServer) -> Gemini {
    Gemini::builder("gemini-2.5-flash")
        .api_key("test-key")
        .base_url(format!("{}/v1beta", server.base_url()))
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

/// Serves `body` with `status` once and returns the error the call ended with, checking that it
/// keeps the adapter's error, with the body as sent, as its source.
async fn error_for(
    model: impl FnOnce(&MockServer) -> Box<dyn Llm>,
    status: u16,
    body: Value,
    stream: bool,
) -> adk_core::Error {
    let server = MockServer::start([MockResponse::json(status, &body)]).await;
    let outcome = common::run(model(&server).as_ref(), request(), stream).await;
    let error = outcome.error.expect("the call fails");
    let source = error
        .downcast_source::<adk_model::Error>()
        .expect("the adapter's error is kept");
    assert_eq!(source.status(), Some(status));
    assert_eq!(
        serde_json::from_str::<Value>(source.body().unwrap()).unwrap(),
        body
    );
    error
}

fn boxed_openai(server: &MockServer) -> Box<dyn Llm> {
    Box::new(openai(server))
}

fn boxed_gemini(server: &MockServer) -> Box<dyn Llm> {
    Box::new(gemini(server))
}

#[tokio::test]
async fn openai_context_length_exceeded_is_a_context_overflow() {
    let body = json!({"error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded"
    }});
    for stream in [false, true] {
        let error = error_for(boxed_openai, 400, body.clone(), stream).await;
        assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error}");
        assert!(error.is_context_overflow());
        assert!(
            error.message().contains("maximum context length"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn gemini_token_limit_400_is_a_context_overflow() {
    let body = json!({"error": {
        "code": 400,
        "message": "The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).",
        "status": "INVALID_ARGUMENT"
    }});
    for stream in [false, true] {
        let error = error_for(boxed_gemini, 400, body.clone(), stream).await;
        assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error}");
    }
}

#[tokio::test]
async fn llama_cpp_context_size_error_is_a_context_overflow() {
    // The body llama.cpp's server sends (`exceed_context_size_error`, with the token counts).
    let current = json!({"error": {
        "code": 400,
        "message": "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5000,
        "n_ctx": 4096
    }});
    // Servers from before that type said it in the message only.
    let older = json!({"error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing the context size or enable context shift",
        "type": "invalid_request_error"
    }});
    for body in [current, older] {
        let error = error_for(boxed_openai, 400, body, false).await;
        assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error}");
    }
}

#[tokio::test]
async fn other_client_errors_stay_model_errors() {
    let bad_temperature = json!({"error": {
        "message": "Invalid 'temperature': decimal above maximum value.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "decimal_above_max_value"
    }});
    let error = error_for(boxed_openai, 400, bad_temperature, false).await;
    assert_eq!(error.kind(), ErrorKind::Model);
    assert!(!error.is_context_overflow());

    let gemini_invalid = json!({"error": {
        "code": 400,
        "message": "Invalid JSON payload received. Unknown name \"foo\": Cannot find field.",
        "status": "INVALID_ARGUMENT"
    }});
    let error = error_for(boxed_gemini, 400, gemini_invalid, false).await;
    assert_eq!(error.kind(), ErrorKind::Model);
}
