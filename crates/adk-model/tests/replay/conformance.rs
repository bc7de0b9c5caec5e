//! The shared conformance suite (`adk_test::model_conformance`) run on every adapter: one row per
//! adapter, its wire and how it is built for the loopback server.

use std::sync::Arc;
use std::time::Duration;

use adk_core::Llm;
use adk_model::{
    Anthropic, GeminiModel, GoogleCredentials, OpenAiModel, OpenAiResponses, RetryPolicy,
};
use adk_test::model_conformance::{
    AdapterCase, AnthropicWire, ChatCompletionsWire, GeminiWire, ResponsesWire, Wire, check_adapter,
};
use adk_test::{MockResponse, MockServer};
use serde_json::json;

/// Retries quick enough for a test; the suite checks that a 429 is retried.
fn fast() -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(2)
        .initial_backoff(Duration::from_millis(1))
}

fn case(
    name: &'static str,
    wire: impl Wire + 'static,
    model: impl Fn(&str) -> Arc<dyn Llm> + Send + Sync + 'static,
) -> AdapterCase {
    AdapterCase {
        name,
        wire: Box::new(wire),
        model: Box::new(model),
    }
}

macro_rules! conformance {
    ($($name:ident => $case:expr;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                check_adapter(&$case).await;
            }
        )*
    };
}

conformance! {
    gemini => case("Gemini", GeminiWire, |base| {
        Arc::new(GeminiModel::builder("gemini-test").api_key("k").base_url(base).retry(fast()).build().unwrap())
    });
    openai_chat_completions => case("Chat Completions", ChatCompletionsWire, |base| {
        Arc::new(OpenAiModel::builder("gpt-test").api_key("k").base_url(base).retry(fast()).build().unwrap())
    });
    anthropic => case("Anthropic", AnthropicWire, |base| {
        Arc::new(Anthropic::builder("claude-test").api_key("k").base_url(base).retry(fast()).build().unwrap())
    });
    openai_responses => case("Responses", ResponsesWire, |base| {
        Arc::new(OpenAiResponses::builder("gpt-test").api_key("k").base_url(base).retry(fast()).build().unwrap())
    });
}

/// Gemini on Vertex AI: the same wire behind an access token from a loopback token endpoint.
#[tokio::test]
async fn gemini_on_vertex() {
    let tokens = MockServer::repeating(MockResponse::json(
        200,
        &json!({"access_token": "ya29.test", "expires_in": 3600, "token_type": "Bearer"}),
    ))
    .await;
    let key = json!({
        "type": "authorized_user", "client_id": "id", "client_secret": "secret",
        "refresh_token": "refresh", "token_uri": format!("{}/token", tokens.base_url()),
    });
    let credentials = GoogleCredentials::from_json(&key.to_string()).unwrap();
    check_adapter(&case("Vertex AI", GeminiWire, move |base| {
        Arc::new(
            GeminiModel::builder("gemini-test")
                .vertex("my-project", "us-central1")
                .credentials(credentials.clone())
                .base_url(base)
                .retry(fast())
                .build()
                .unwrap(),
        )
    }))
    .await;
}
