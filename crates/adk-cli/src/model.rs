//! Choosing the model from the flags and the environment.

use std::sync::Arc;

use adk_core::Llm;
use adk_model::{GeminiModel, OpenAiModel};
use anyhow::Context as _;

use crate::args::{Provider, RunArgs};

const GEMINI_KEYS: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];
const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";
const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// What to set when no model is configured.
pub(crate) const NOTHING_CONFIGURED: &str = "no model is configured. Set GOOGLE_API_KEY (or \
    GEMINI_API_KEY) for Gemini, or OPENAI_API_KEY and/or OPENAI_BASE_URL for OpenAI or an \
    OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenRouter); pick the model with --model \
    or ADK_MODEL";

/// The model the flags and the environment ask for.
pub(crate) fn from_args(args: &RunArgs) -> anyhow::Result<Arc<dyn Llm>> {
    let provider = match args.provider {
        Some(provider) => provider,
        None => provider_from_env().context(NOTHING_CONFIGURED)?,
    };
    let model: Arc<dyn Llm> = match provider {
        Provider::Gemini => {
            let name = args.model.as_deref().unwrap_or(DEFAULT_GEMINI_MODEL);
            Arc::new(GeminiModel::builder(name).build()?)
        }
        Provider::Openai => {
            let name = args
                .model
                .clone()
                .or_else(|| non_empty_env("OPENAI_MODEL"))
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
            Arc::new(OpenAiModel::builder(name).build()?)
        }
    };
    Ok(model)
}

/// Gemini when a Google key is set, else OpenAI when its key or base URL is set.
fn provider_from_env() -> Option<Provider> {
    if GEMINI_KEYS.iter().any(|key| non_empty_env(key).is_some()) {
        return Some(Provider::Gemini);
    }
    if non_empty_env("OPENAI_API_KEY").is_some() || non_empty_env("OPENAI_BASE_URL").is_some() {
        return Some(Provider::Openai);
    }
    None
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}
