//! [`ModelFallbackPlugin`]: when a model call fails because the provider is rate limiting, busy
//! or failing (429, 5xx, Anthropic's 529 "overloaded"), sends the same request to the next model of
//! a list, whatever its provider, and answers with the first that succeeds.

use std::sync::Arc;

use adk_core::{CallbackContext, Error, Llm, LlmRequest, LlmResponse, Result};
use adk_flow::Plugin;
use async_trait::async_trait;
use futures::StreamExt as _;

/// Tries the next model when a call fails in a way another model may not: a rate limit (429), a
/// provider failure (5xx, Anthropic's 529), an overloaded or unavailable provider, a connection
/// that could not be made. Errors of the request itself (400, 401, 404, a context overflow) are
/// left as they are, since another model would refuse the same request.
///
/// The fallbacks are any [`Llm`]s, so a Claude model can stand in for a Gemini one: the request's
/// history is the provider-neutral `Content` list, and each adapter sends only what its provider
/// accepts. A fallback's answer is used whole (not streamed), as the recovered response of the
/// failed call.
///
/// ```no_run
/// # fn main() -> Result<(), adk_model::Error> {
/// use std::sync::Arc;
/// use adk_runner::plugins::ModelFallbackPlugin;
///
/// let fallback = ModelFallbackPlugin::new([
///     Arc::new(adk_model::Anthropic::new("claude-sonnet-4-5")?) as Arc<dyn adk_core::Llm>,
/// ]);
/// # let _ = fallback; Ok(()) }
/// ```
pub struct ModelFallbackPlugin {
    fallbacks: Vec<Arc<dyn Llm>>,
}

impl std::fmt::Debug for ModelFallbackPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.fallbacks.iter().map(|model| model.name()).collect();
        f.debug_struct("ModelFallbackPlugin")
            .field("fallbacks", &names)
            .finish()
    }
}

impl ModelFallbackPlugin {
    /// A plugin that tries `fallbacks` in order after the agent's own model fails.
    pub fn new(fallbacks: impl IntoIterator<Item = Arc<dyn Llm>>) -> Self {
        Self {
            fallbacks: fallbacks.into_iter().collect(),
        }
    }
}

/// Whether another model may succeed where this error's failed: the provider, not the request,
/// is the problem.
pub(crate) fn worth_another_model(error: &Error) -> bool {
    let Some(model_error) = error.downcast_source::<adk_model::Error>() else {
        return false;
    };
    if model_error.is_retryable() {
        return true;
    }
    model_error.provider_status().is_some_and(|status| {
        matches!(
            status,
            "overloaded_error"
                | "rate_limit_error"
                | "api_error"
                | "UNAVAILABLE"
                | "RESOURCE_EXHAUSTED"
                | "INTERNAL"
                | "server_error"
                | "rate_limit_exceeded"
        )
    })
}

#[async_trait]
impl Plugin for ModelFallbackPlugin {
    fn name(&self) -> &str {
        "model_fallback"
    }

    async fn on_model_error(
        &self,
        _ctx: &CallbackContext,
        request: &LlmRequest,
        error: &Error,
    ) -> Result<Option<LlmResponse>> {
        if !worth_another_model(error) {
            return Ok(None);
        }
        let mut last_error = None;
        for fallback in &self.fallbacks {
            let mut request = request.clone();
            request.model = fallback.name().to_owned();
            let mut responses = fallback.generate(request, false);
            let mut answer = None;
            while let Some(item) = responses.next().await {
                match item {
                    Ok(response) if !response.is_partial() => answer = Some(response),
                    Ok(_) => {}
                    Err(error) => {
                        answer = None;
                        last_error = Some(error);
                        break;
                    }
                }
            }
            if let Some(answer) = answer {
                tracing::warn!(
                    fallback = fallback.name(),
                    "the model call failed ({error}); answered by the fallback model"
                );
                return Ok(Some(answer));
            }
            if last_error
                .as_ref()
                .is_some_and(|error| !worth_another_model(error))
            {
                break;
            }
        }
        match last_error {
            // Every fallback failed too: the last failure says the most about why.
            Some(last) if !self.fallbacks.is_empty() => Err(last),
            _ => Ok(None),
        }
    }
}
