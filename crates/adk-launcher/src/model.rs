//! Choosing the model from the flags and the environment: Gemini or an OpenAI-compatible server
//! when configured, else the local SmolLM2 model served by llama.cpp on loopback.

use std::sync::Arc;

use adk_core::Llm;
use adk_local_model::{LocalModel, LocalModelConfig, LocalServer, TerminalProgress};
use adk_model::{Gemini, OpenAi};

use crate::args::{ModelArgs, Provider};
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

const GEMINI_KEYS: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];
const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";
const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// What to set when no model is configured and the local model is turned off.
pub(crate) const NOTHING_CONFIGURED: &str = "no model is configured. Set GOOGLE_API_KEY (or \
    GEMINI_API_KEY) for Gemini, or OPENAI_API_KEY and/or OPENAI_BASE_URL for OpenAI or an \
    OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenRouter); pick the model with --model \
    or ADK_MODEL; or drop --no-local-model to use the local SmolLM2 model";

/// How many times an agent may run one tool with the same arguments in one turn on the local
/// model: SmolLM2 may call a tool again after each answer instead of answering the user.
const LOCAL_MAX_REPEATED_TOOL_CALLS: u32 = 2;

/// The model a session talks to, and the local server that serves it, if any (stopped on drop).
pub(crate) struct ChosenModel {
    pub(crate) llm: Arc<dyn Llm>,
    /// The loop guard the run config sets for this model (`RunConfig::max_repeated_tool_calls`).
    pub(crate) max_repeated_tool_calls: Option<u32>,
    _local_server: Option<LocalServer>,
}

/// The model the flags and the environment ask for; the local model when none is configured.
pub(crate) async fn choose(args: &ModelArgs) -> Result<ChosenModel, LaunchError> {
    let provider = args.provider.or_else(provider_from_env);
    let llm = match provider {
        Some(provider) => remote(provider, args)?,
        None if args.no_local_model => {
            return Err(LaunchError::new(LaunchErrorKind::Model, NOTHING_CONFIGURED));
        }
        None => return local().await,
    };
    Ok(ChosenModel {
        llm,
        max_repeated_tool_calls: None,
        _local_server: None,
    })
}

/// The local model, as [`choose`] starts it when nothing else is configured.
pub(crate) async fn local_model() -> Result<ChosenModel, LaunchError> {
    local().await
}

/// The model name a YAML config would write for what the flags choose, when they choose one.
pub(crate) fn flagged_spec(args: &ModelArgs) -> Option<adk_config::ModelSpec> {
    let provider = args.provider?;
    Some(match provider {
        Provider::Gemini => adk_config::ModelSpec::Gemini(
            args.model
                .clone()
                .unwrap_or_else(|| DEFAULT_GEMINI_MODEL.to_owned()),
        ),
        Provider::Openai => adk_config::ModelSpec::OpenAi(
            args.model
                .clone()
                .or_else(|| non_empty_env("OPENAI_MODEL"))
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned()),
        ),
    })
}

/// Starts the local model: downloads and builds it on first use, then serves it on loopback and
/// talks to it through the OpenAI-compatible adapter with prompted tool calling (SmolLM2 has no
/// native tool calls; the server constrains its answers to a JSON schema instead), with the loop
/// guard on.
async fn local() -> Result<ChosenModel, LaunchError> {
    eprintln!(
        "no GOOGLE_API_KEY/OPENAI_API_KEY set: using the local SmolLM2 model; \
         the first start builds llama.cpp, ~15 min"
    );
    let config = LocalModelConfig::from_env().context(LaunchErrorKind::Model, || {
        "the local model's settings are not valid".to_owned()
    })?;
    let model = LocalModel::ensure(config, &TerminalProgress::new())
        .await
        .context(LaunchErrorKind::Model, || {
            "cannot prepare the local model".to_owned()
        })?;
    let server = model.start().await.context(LaunchErrorKind::Model, || {
        "cannot start the local model".to_owned()
    })?;
    let llm = OpenAi::builder(model.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .prompted_tools(true)
        .build()
        .context(LaunchErrorKind::Model, || {
            "cannot talk to the local model".to_owned()
        })?;
    Ok(ChosenModel {
        llm: Arc::new(llm),
        max_repeated_tool_calls: Some(LOCAL_MAX_REPEATED_TOOL_CALLS),
        _local_server: Some(server),
    })
}

/// A hosted or configured model of `provider`.
fn remote(provider: Provider, args: &ModelArgs) -> Result<Arc<dyn Llm>, LaunchError> {
    let model: Arc<dyn Llm> = match provider {
        Provider::Gemini => {
            let name = args.model.as_deref().unwrap_or(DEFAULT_GEMINI_MODEL);
            Arc::new(
                Gemini::builder(name)
                    .build()
                    .context(LaunchErrorKind::Model, || {
                        format!("cannot set up the Gemini model {name}")
                    })?,
            )
        }
        Provider::Openai => {
            let name = args
                .model
                .clone()
                .or_else(|| non_empty_env("OPENAI_MODEL"))
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
            let model = OpenAi::builder(name.as_str())
                .build()
                .context(LaunchErrorKind::Model, || {
                    format!("cannot set up the OpenAI-compatible model {name}")
                })?;
            Arc::new(model)
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
