//! [`ModelSpec`]: the `model:` of an agent config, read into the adapter it picks.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

use super::scalar::parse_string;

/// The model an agent config names: which adapter serves it and the provider's name for it.
///
/// | `model:` | adapter |
/// |---|---|
/// | `gemini-*` (for example `gemini-2.5-flash`) | the Gemini adapter (on Vertex AI when `GOOGLE_GENAI_USE_VERTEXAI` is set) |
/// | `vertex_ai/<name>` (for example `vertex_ai/gemini-2.5-flash`) | the Gemini adapter on Vertex AI |
/// | `claude-*` or `anthropic/<name>` | the Anthropic adapter |
/// | `openai/<name>` (for example `openai/gpt-4o-mini`) | the OpenAI Chat Completions adapter, at OpenAI or the OpenAI-compatible server `OPENAI_BASE_URL` names |
/// | `openai/responses/<name>` | the OpenAI Responses adapter |
/// | `local` | the local model the launcher serves |
///
/// The prefixes are those of ADK Python's LiteLLM route.
///
/// ```
/// use adk_config::ModelSpec;
///
/// let spec: ModelSpec = "openai/gpt-4o-mini".parse().unwrap();
/// assert_eq!(spec, ModelSpec::OpenAi("gpt-4o-mini".to_owned()));
/// assert_eq!(spec.to_string(), "openai/gpt-4o-mini");
/// assert!("gpt-4o".parse::<ModelSpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ModelSpec {
    /// A Gemini model, by its full name (`gemini-2.5-flash`).
    Gemini(String),
    /// A Gemini model on Vertex AI, by the name after `vertex_ai/`.
    Vertex(String),
    /// A Claude model, by its name (`claude-sonnet-4-5`, the name after `anthropic/`).
    Anthropic(String),
    /// A model of OpenAI or of an OpenAI-compatible server, by the name after `openai/`.
    OpenAi(String),
    /// A model behind OpenAI's Responses API, by the name after `openai/responses/`.
    OpenAiResponses(String),
    /// The local model (SmolLM2 served by llama.cpp), which the launcher starts.
    Local,
}

/// The prefix of an OpenAI model name.
const OPENAI_PREFIX: &str = "openai/";

/// The prefix of a model behind OpenAI's Responses API, after [`OPENAI_PREFIX`].
const RESPONSES_PREFIX: &str = "responses/";

/// The prefix of an Anthropic model name.
const ANTHROPIC_PREFIX: &str = "anthropic/";

/// The prefix of a model on Vertex AI.
const VERTEX_PREFIX: &str = "vertex_ai/";

/// What a model name may look like, for messages and the JSON Schema.
const MODEL_FORMS: &str = "`gemini-<name>` (Gemini), `vertex_ai/<name>` (Gemini on Vertex AI), \
    `claude-<name>` or `anthropic/<name>` (Anthropic), `openai/<name>` (OpenAI Chat Completions or \
    the OpenAI-compatible server at OPENAI_BASE_URL), `openai/responses/<name>` (OpenAI's \
    Responses API) or `local` (the local model)";

impl FromStr for ModelSpec {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        if name == "local" {
            return Ok(Self::Local);
        }
        if name.starts_with("gemini-") && name.len() > "gemini-".len() {
            return Ok(Self::Gemini(name.to_owned()));
        }
        if name.starts_with("claude-") && name.len() > "claude-".len() {
            return Ok(Self::Anthropic(name.to_owned()));
        }
        let after = |prefix: &str| name.strip_prefix(prefix).filter(|model| !model.is_empty());
        if let Some(model) = after(ANTHROPIC_PREFIX) {
            return Ok(Self::Anthropic(model.to_owned()));
        }
        if let Some(model) = after(VERTEX_PREFIX) {
            if !model.starts_with("gemini") {
                return Err(format!(
                    "the model `{name}` is not a Gemini model; only Gemini is served on Vertex AI, as `vertex_ai/gemini-<name>`"
                ));
            }
            return Ok(Self::Vertex(model.to_owned()));
        }
        if let Some(model) = after(OPENAI_PREFIX) {
            if let Some(model) = model.strip_prefix(RESPONSES_PREFIX) {
                if !model.is_empty() {
                    return Ok(Self::OpenAiResponses(model.to_owned()));
                }
            } else {
                return Ok(Self::OpenAi(model.to_owned()));
            }
        }
        Err(format!(
            "unknown model `{name}`; the model picks its adapter by name: {MODEL_FORMS}"
        ))
    }
}

impl fmt::Display for ModelSpec {
    /// The name as a config writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gemini(name) => f.write_str(name),
            Self::Vertex(name) => write!(f, "{VERTEX_PREFIX}{name}"),
            Self::Anthropic(name) if name.starts_with("claude-") => f.write_str(name),
            Self::Anthropic(name) => write!(f, "{ANTHROPIC_PREFIX}{name}"),
            Self::OpenAi(name) => write!(f, "{OPENAI_PREFIX}{name}"),
            Self::OpenAiResponses(name) => write!(f, "{OPENAI_PREFIX}{RESPONSES_PREFIX}{name}"),
            Self::Local => f.write_str("local"),
        }
    }
}

impl<'de> Deserialize<'de> for ModelSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(deserializer, "a model name", str::parse)
    }
}

impl JsonSchema for ModelSpec {
    fn schema_name() -> Cow<'static, str> {
        "ModelSpec".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^(gemini-.+|vertex_ai/gemini.+|claude-.+|anthropic/.+|openai/.+|local)$",
            "description": format!(
                "The model, which picks its adapter by name: {}. When absent, the agent uses \
                 the model of the nearest LlmAgent above it, or the model resolver's default.",
                MODEL_FORMS.replace('`', "")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_pick_their_adapter() {
        assert_eq!(
            "gemini-2.5-flash".parse(),
            Ok(ModelSpec::Gemini("gemini-2.5-flash".to_owned()))
        );
        assert_eq!(
            "openai/qwen2.5:0.5b".parse(),
            Ok(ModelSpec::OpenAi("qwen2.5:0.5b".to_owned()))
        );
        assert_eq!("local".parse(), Ok(ModelSpec::Local));
        for (name, spec) in [
            (
                "claude-sonnet-4-5",
                ModelSpec::Anthropic("claude-sonnet-4-5".to_owned()),
            ),
            (
                "anthropic/claude-haiku-4-5",
                ModelSpec::Anthropic("claude-haiku-4-5".to_owned()),
            ),
            (
                "vertex_ai/gemini-2.5-flash",
                ModelSpec::Vertex("gemini-2.5-flash".to_owned()),
            ),
            (
                "openai/responses/gpt-5-mini",
                ModelSpec::OpenAiResponses("gpt-5-mini".to_owned()),
            ),
        ] {
            assert_eq!(name.parse(), Ok(spec.clone()), "{name}");
            let shown = spec.to_string();
            assert_eq!(shown.parse(), Ok(spec), "{shown} reads back");
        }
        assert_eq!(
            ModelSpec::Anthropic("claude-haiku-4-5".to_owned()).to_string(),
            "claude-haiku-4-5"
        );
        assert!("vertex_ai/claude-sonnet-4-5".parse::<ModelSpec>().is_err());
    }

    #[test]
    fn other_names_are_refused_with_the_forms_allowed() {
        for name in [
            "gpt-4o",
            "gemini-",
            "openai/",
            "claude-",
            "anthropic/",
            "Local",
            "",
        ] {
            let error = name.parse::<ModelSpec>().unwrap_err();
            assert!(
                error.starts_with(&format!("unknown model `{name}`;")),
                "{error}"
            );
            assert!(error.contains("`openai/<name>`"), "{error}");
        }
    }
}
