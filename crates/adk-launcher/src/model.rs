//! Choosing the model from the flags and the environment: a model named by `--model` (its name
//! picks the adapter: Gemini, Vertex AI, Anthropic, OpenAI Chat Completions or Responses), else
//! the provider `--provider` or the environment configures, else the local SmolLM2 model served by
//! llama.cpp on loopback. Hosted models are built by the YAML loader's [`EnvModelResolver`], so a
//! name means the same adapter on the command line and in a config.

use std::sync::Arc;

use adk_config::{EnvModelResolver, ModelResolver as _, ModelSpec};
use adk_core::Llm;
use adk_local_model::{LocalModel, LocalModelConfig, LocalServer, TerminalProgress};
use adk_model::OpenAi;

use crate::args::{ModelArgs, Provider};
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";
const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// What to set when no model is configured and the local model is turned off.
pub(crate) const NOTHING_CONFIGURED: &str = "no model is configured. Set GOOGLE_API_KEY (or \
    GEMINI_API_KEY) for Gemini, GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT for \
    Gemini on Vertex AI, ANTHROPIC_API_KEY for Claude, or OPENAI_API_KEY and/or OPENAI_BASE_URL \
    for OpenAI or an OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenRouter); pick the \
    model with --model or ADK_MODEL (`claude-sonnet-4-5`, `openai/responses/gpt-5-mini`, ...); or \
    drop --no-local-model to use the local SmolLM2 model";

/// The model a session talks to, and the local server that serves it, if any (stopped on drop).
pub(crate) struct ChosenModel {
    pub(crate) llm: Arc<dyn Llm>,
    _local_server: Option<LocalServer>,
}

impl ChosenModel {
    /// Whether this is the local model, served by its own server.
    pub(crate) fn is_local(&self) -> bool {
        self._local_server.is_some()
    }
}

/// The model the flags and the environment ask for; the local model when none is configured.
pub(crate) async fn choose(args: &ModelArgs) -> Result<ChosenModel, LaunchError> {
    let spec = flagged_spec(args).unwrap_or_else(|| EnvModelResolver::new().default_model());
    match spec {
        ModelSpec::Local if args.no_local_model => {
            Err(LaunchError::new(LaunchErrorKind::Model, NOTHING_CONFIGURED))
        }
        ModelSpec::Local => local().await,
        spec => {
            let llm = EnvModelResolver::new()
                .resolve(&spec)
                .await
                .context(LaunchErrorKind::Model, || {
                    format!("cannot set up the model {spec}")
                })?;
            Ok(ChosenModel {
                llm,
                _local_server: None,
            })
        }
    }
}

/// The local model, as [`choose`] starts it when nothing else is configured.
pub(crate) async fn local_model() -> Result<ChosenModel, LaunchError> {
    local().await
}

/// The model the flags name, when they name one: `--model` with a name that picks its adapter,
/// or `--provider` with `--model`'s bare name (else the provider's usual model); a bare `--model`
/// alone goes to the provider the environment configures.
pub(crate) fn flagged_spec(args: &ModelArgs) -> Option<ModelSpec> {
    let name = args
        .model
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty());
    if args.provider.is_none()
        && let Some(spec) = name.and_then(|name| name.parse::<ModelSpec>().ok())
    {
        return Some(spec);
    }
    let provider = args.provider.or_else(|| {
        // A bare name for the provider the environment configures.
        name?;
        match EnvModelResolver::new().default_model() {
            ModelSpec::Gemini(_) => Some(Provider::Gemini),
            ModelSpec::Anthropic(_) => Some(Provider::Anthropic),
            ModelSpec::OpenAi(_) => Some(Provider::Openai),
            _ => None,
        }
    })?;
    let named = |default: &str| name.map_or_else(|| default.to_owned(), str::to_owned);
    Some(match provider {
        Provider::Gemini => ModelSpec::Gemini(named(DEFAULT_GEMINI_MODEL)),
        Provider::Vertex => ModelSpec::Vertex(named(DEFAULT_GEMINI_MODEL)),
        Provider::Anthropic => ModelSpec::Anthropic(
            name.map(str::to_owned)
                .or_else(|| non_empty_env("ANTHROPIC_MODEL"))
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_owned()),
        ),
        Provider::Openai | Provider::OpenaiResponses => {
            let name = name
                .map(str::to_owned)
                .or_else(|| non_empty_env("OPENAI_MODEL"))
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
            if provider == Provider::Openai {
                ModelSpec::OpenAi(name)
            } else {
                ModelSpec::OpenAiResponses(name)
            }
        }
    })
}

/// Starts the local model: downloads and builds it on first use, then serves it on loopback and
/// talks to it through the OpenAI-compatible adapter with prompted tool calling (SmolLM2 has no
/// native tool calls; the server constrains its answers to a JSON schema instead), with the loop
/// guard on.
async fn local() -> Result<ChosenModel, LaunchError> {
    eprintln!(
        "no model key set (GOOGLE_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY): using the local \
         SmolLM2 model; the first start builds llama.cpp, ~15 min"
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
        _local_server: Some(server),
    })
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(provider: Option<Provider>, model: Option<&str>) -> ModelArgs {
        ModelArgs {
            provider,
            model: model.map(str::to_owned),
            no_local_model: false,
            max_repeated_tool_calls: adk_core::DEFAULT_MAX_REPEATED_TOOL_CALLS,
            no_overflow_compaction: false,
        }
    }

    #[test]
    fn a_model_name_picks_its_adapter() {
        for (name, spec) in [
            (
                "claude-haiku-4-5",
                ModelSpec::Anthropic("claude-haiku-4-5".into()),
            ),
            (
                "anthropic/claude-x",
                ModelSpec::Anthropic("claude-x".into()),
            ),
            (
                "openai/responses/gpt-5-mini",
                ModelSpec::OpenAiResponses("gpt-5-mini".into()),
            ),
            (
                "vertex_ai/gemini-2.5-pro",
                ModelSpec::Vertex("gemini-2.5-pro".into()),
            ),
            (
                "gemini-2.5-flash",
                ModelSpec::Gemini("gemini-2.5-flash".into()),
            ),
            ("local", ModelSpec::Local),
        ] {
            assert_eq!(flagged_spec(&args(None, Some(name))), Some(spec), "{name}");
        }
        assert_eq!(
            flagged_spec(&args(Some(Provider::OpenaiResponses), Some("gpt-5"))),
            Some(ModelSpec::OpenAiResponses("gpt-5".into()))
        );
        assert_eq!(
            flagged_spec(&args(Some(Provider::Vertex), None)),
            Some(ModelSpec::Vertex("gemini-2.5-flash".into()))
        );
    }
}
