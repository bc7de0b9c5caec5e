//! [`GenerateContentConfig`]: the sampling, output, reasoning, tool-calling and safety settings
//! of a model call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Sampling and output settings of a model call. Every field is optional; an adapter that cannot
/// honour a set field fails the call rather than drop it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GenerateContentConfig {
    /// Randomness of sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling mass.
    #[serde(default, alias = "top_p", skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Top-k sampling.
    #[serde(default, alias = "top_k", skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// The most tokens to generate.
    #[serde(
        default,
        alias = "max_output_tokens",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_output_tokens: Option<u32>,
    /// Strings that end generation.
    #[serde(
        default,
        alias = "stop_sequences",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub stop_sequences: Vec<String>,
    /// How many candidates to generate.
    #[serde(
        default,
        alias = "candidate_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub candidate_count: Option<u32>,
    /// Seed for reproducible sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Penalty on tokens already present.
    #[serde(
        default,
        alias = "presence_penalty",
        skip_serializing_if = "Option::is_none"
    )]
    pub presence_penalty: Option<f32>,
    /// Penalty proportional to how often tokens appeared.
    #[serde(
        default,
        alias = "frequency_penalty",
        skip_serializing_if = "Option::is_none"
    )]
    pub frequency_penalty: Option<f32>,
    /// The MIME type of the answer, for example `application/json`.
    #[serde(
        default,
        alias = "response_mime_type",
        skip_serializing_if = "Option::is_none"
    )]
    pub response_mime_type: Option<String>,
    /// JSON Schema the answer must follow.
    #[serde(
        default,
        alias = "response_schema",
        skip_serializing_if = "Option::is_none"
    )]
    pub response_schema: Option<Value>,
    /// How the model reasons before answering.
    #[serde(
        default,
        alias = "thinking_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinking_config: Option<ThinkingConfig>,
    /// How the model may call functions.
    #[serde(
        default,
        alias = "tool_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_config: Option<ToolConfig>,
    /// Content-safety thresholds.
    #[serde(
        default,
        alias = "safety_settings",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub safety_settings: Vec<SafetySetting>,
}

/// How the model reasons before answering.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ThinkingConfig {
    /// Whether thought parts are returned.
    #[serde(
        default,
        alias = "include_thoughts",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_thoughts: Option<bool>,
    /// The most tokens to spend reasoning (`0` turns it off, `-1` lets the model decide).
    #[serde(
        default,
        alias = "thinking_budget",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinking_budget: Option<i32>,
    /// A coarse reasoning level, for models that take one instead of a budget.
    #[serde(
        default,
        alias = "thinking_level",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinking_level: Option<ThinkingLevel>,
}

/// A coarse reasoning level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ThinkingLevel {
    /// As little reasoning as the model allows.
    Minimal,
    /// Little reasoning.
    Low,
    /// Some reasoning.
    Medium,
    /// Much reasoning.
    High,
}

/// How the model may call functions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolConfig {
    /// The function-calling mode and the functions allowed.
    #[serde(
        default,
        alias = "function_calling_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_calling_config: Option<FunctionCallingConfig>,
}

/// The function-calling mode and the functions allowed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FunctionCallingConfig {
    /// The mode; the provider's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FunctionCallingMode>,
    /// With [`FunctionCallingMode::Any`]: the only functions the model may call.
    #[serde(
        default,
        alias = "allowed_function_names",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub allowed_function_names: Vec<String>,
}

impl FunctionCallingConfig {
    /// A config with `mode` and no restriction on names.
    pub fn new(mode: FunctionCallingMode) -> Self {
        Self {
            mode: Some(mode),
            allowed_function_names: Vec::new(),
        }
    }
}

/// Whether and how the model calls functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum FunctionCallingMode {
    /// The model chooses between text and function calls.
    Auto,
    /// The model must call a function.
    Any,
    /// The model must not call functions.
    None,
    /// Like `Auto`, with calls checked against the declared schemas.
    Validated,
}

/// One content-safety threshold, with Gemini's category and threshold names
/// (`HARM_CATEGORY_HARASSMENT`, `BLOCK_ONLY_HIGH`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SafetySetting {
    /// The harm category.
    pub category: String,
    /// The blocking threshold.
    pub threshold: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_reads_snake_case_and_writes_camel_case() {
        let config: GenerateContentConfig = serde_json::from_value(json!({
            "max_output_tokens": 10,
            "thinking_config": {"include_thoughts": true, "thinking_budget": 128},
            "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}}
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            json!({
                "maxOutputTokens": 10,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 128},
                "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}}
            })
        );
    }
}
