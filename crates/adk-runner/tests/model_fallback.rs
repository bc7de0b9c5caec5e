//! The model-fallback plugin across providers: a Gemini model that is rate limited or overloaded
//! hands the call to a Claude model (and a Claude one to an OpenAI one), on real adapters against
//! loopback servers speaking each provider's wire; a request the provider refuses is not retried
//! elsewhere.

mod support;

use std::sync::Arc;

use adk_core::{Agent, Llm};
use adk_flow::LlmAgent;
use adk_model::{Anthropic, GeminiModel, OpenAiResponses, RetryPolicy};
use adk_runner::plugins::ModelFallbackPlugin;
use adk_test::MockServer;
use adk_test::model_conformance::{Answer, AnthropicWire, GeminiWire, ResponsesWire, Wire};
use support::{run, runner};

fn answer(text: &str) -> Answer {
    Answer {
        text: vec![text.to_owned()],
        calls: Vec::new(),
        usage: (5, 3),
    }
}

fn gemini(server: &MockServer) -> Arc<dyn Llm> {
    Arc::new(
        GeminiModel::builder("gemini-test")
            .api_key("k")
            .base_url(server.base_url())
            .retry(RetryPolicy::none())
            .build()
            .unwrap(),
    )
}

fn claude(server: &MockServer) -> Arc<dyn Llm> {
    Arc::new(
        Anthropic::builder("claude-test")
            .api_key("k")
            .base_url(server.base_url())
            .retry(RetryPolicy::none())
            .build()
            .unwrap(),
    )
}

fn agent(model: Arc<dyn Llm>) -> Arc<dyn Agent> {
    Arc::new(LlmAgent::builder("helper").model(model).build().unwrap())
}

/// The text of the run's last event.
fn last_text(outcome: &adk_test::RunOutcome) -> String {
    outcome.last().text().unwrap_or_default()
}

#[tokio::test]
async fn a_rate_limited_gemini_call_is_answered_by_claude() {
    let primary =
        MockServer::start([GeminiWire.error(429, "RESOURCE_EXHAUSTED", "quota exceeded")]).await;
    let fallback = MockServer::start([AnthropicWire.answer(&answer("Claude here."))]).await;
    let runner = runner(agent(gemini(&primary)))
        .plugin(Arc::new(ModelFallbackPlugin::new([claude(&fallback)])))
        .build()
        .unwrap();
    let outcome = run(&runner, "hello").await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(last_text(&outcome), "Claude here.");
    let sent = fallback.requests()[0].json();
    assert_eq!(sent["model"], "claude-test");
    assert_eq!(sent["messages"][0]["content"][0]["text"], "hello");
}

#[tokio::test]
async fn an_overloaded_claude_falls_through_to_the_next_model() {
    let primary = MockServer::start([GeminiWire.error(503, "UNAVAILABLE", "try later")]).await;
    let overloaded =
        MockServer::start([AnthropicWire.error(529, "overloaded_error", "Overloaded")]).await;
    let last = MockServer::start([ResponsesWire.answer(&answer("Responses here."))]).await;
    let responses: Arc<dyn Llm> = Arc::new(
        OpenAiResponses::builder("gpt-test")
            .api_key("k")
            .base_url(last.base_url())
            .retry(RetryPolicy::none())
            .build()
            .unwrap(),
    );
    let runner = runner(agent(gemini(&primary)))
        .plugin(Arc::new(ModelFallbackPlugin::new([
            claude(&overloaded),
            responses,
        ])))
        .build()
        .unwrap();
    let outcome = run(&runner, "hello").await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(last_text(&outcome), "Responses here.");
    assert_eq!(overloaded.requests().len(), 1);
}

#[tokio::test]
async fn a_request_the_provider_refuses_is_not_sent_elsewhere() {
    let primary =
        MockServer::start([GeminiWire.error(400, "INVALID_ARGUMENT", "bad request")]).await;
    let fallback = MockServer::start([AnthropicWire.answer(&answer("never"))]).await;
    let runner = runner(agent(gemini(&primary)))
        .plugin(Arc::new(ModelFallbackPlugin::new([claude(&fallback)])))
        .build()
        .unwrap();
    let outcome = run(&runner, "hello").await;
    let error = outcome.error.expect("the 400 ends the run");
    assert!(error.to_string().contains("bad request"), "{error}");
    assert!(fallback.requests().is_empty());
}
