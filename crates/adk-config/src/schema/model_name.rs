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
/// | `gemini-*` (for example `gemini-2.5-flash`) | the Gemini adapter |
/// | `openai/<name>` (for example `openai/gpt-4o-mini`) | the OpenAI adapter, at OpenAI or the OpenAI-compatible server `OPENAI_BASE_URL` names |
/// | `local` | the local model the launcher serves |
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
    /// A model of OpenAI or of an OpenAI-compatible server, by the name after `openai/`.
    OpenAi(String),
    /// The local model (SmolLM2 served by llama.cpp), which the launcher starts.
    Local,
}

/// The prefix of an OpenAI model name.
const OPENAI_PREFIX: &str = "openai/";

/// What a model name may look like, for messages and the JSON Schema.
const MODEL_FORMS: &str = "`gemini-<name>` (Gemini), `openai/<name>` (OpenAI or the \
    OpenAI-compatible server at OPENAI_BASE_URL) or `local` (the local model)";

impl FromStr for ModelSpec {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        if name == "local" {
            return Ok(Self::Local);
        }
        if name.starts_with("gemini-") && name.len() > "gemini-".len() {
            return Ok(Self::Gemini(name.to_owned()));
        }
        if let Some(model) = name.strip_prefix(OPENAI_PREFIX)
            && !model.is_empty()
        {
            return Ok(Self::OpenAi(model.to_owned()));
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
            Self::OpenAi(name) => write!(f, "{OPENAI_PREFIX}{name}"),
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
            "pattern": "^(gemini-.+|openai/.+|local)$",
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
    }

    #[test]
    fn other_names_are_refused_with_the_forms_allowed() {
        for name in ["gpt-4o", "gemini-", "openai/", "Local", ""] {
            let error = name.parse::<ModelSpec>().unwrap_err();
            assert!(
                error.starts_with(&format!("unknown model `{name}`;")),
                "{error}"
            );
            assert!(error.contains("`openai/<name>`"), "{error}");
        }
    }
}
