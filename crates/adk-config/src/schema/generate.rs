//! `generate_content_config`: the sampling and output settings of every model call an `LlmAgent`
//! makes, with the keys of ADK Python's `GenerateContentConfig` that adk-rs's adapters honour.
//!
//! Keys are written in snake_case, as ADK Python's documentation writes them. A key that adk-rs
//! would have to drop is an error, never ignored.

use serde::Deserialize;

use schemars::JsonSchema;

use super::section::{self, Section};

/// Sampling and output settings of every model call.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GenerateContentSettings {
    /// Randomness of sampling, usually from 0 to 2.
    #[serde(default)]
    pub(crate) temperature: Option<f32>,
    /// Nucleus sampling: the probability mass of the tokens considered.
    #[serde(default)]
    pub(crate) top_p: Option<f32>,
    /// Top-k sampling: how many of the likeliest tokens are considered.
    #[serde(default)]
    pub(crate) top_k: Option<u32>,
    /// The most tokens an answer may have.
    #[serde(default)]
    pub(crate) max_output_tokens: Option<u32>,
    /// Strings that end an answer.
    #[serde(default)]
    pub(crate) stop_sequences: Option<Vec<String>>,
    /// How many answers to generate.
    #[serde(default)]
    pub(crate) candidate_count: Option<u32>,
    /// A seed, for sampling that repeats itself.
    #[serde(default)]
    pub(crate) seed: Option<i64>,
    /// A penalty on tokens already present in the answer.
    #[serde(default)]
    pub(crate) presence_penalty: Option<f32>,
    /// A penalty that grows with how often a token appeared.
    #[serde(default)]
    pub(crate) frequency_penalty: Option<f32>,
    /// The MIME type of the answer, for example `application/json`.
    #[serde(default)]
    pub(crate) response_mime_type: Option<String>,
    /// How the model reasons before answering.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) thinking_config: Option<ThinkingSettings>,
    /// How the model may call functions.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) tool_config: Option<ToolCallSettings>,
    /// Content-safety thresholds (Gemini).
    #[serde(default, deserialize_with = "section::optional_list")]
    pub(crate) safety_settings: Option<Vec<SafetySettingEntry>>,
}

impl Section for GenerateContentSettings {
    const WHAT: &'static str = "generate_content_config";
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "system_instruction",
            "the agent's `instruction` is its system instruction; move the text there",
        ),
        (
            "tools",
            "an agent's tools are listed under the agent's own `tools`; move them there",
        ),
        (
            "response_schema",
            "an agent's answer schema is its output schema, which adk-rs sets in Rust \
             (LlmAgentBuilder::output_schema), not from YAML",
        ),
        (
            "response_json_schema",
            "an agent's answer schema is its output schema, which adk-rs sets in Rust \
             (LlmAgentBuilder::output_schema), not from YAML",
        ),
        (
            "http_options",
            "transport settings belong to the model, which the model resolver builds; drop \
             the key",
        ),
    ];
}

/// How the model reasons before answering.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThinkingSettings {
    /// Whether the answer includes the model's thoughts.
    #[serde(default)]
    pub(crate) include_thoughts: Option<bool>,
    /// The most tokens to spend reasoning: 0 turns reasoning off, -1 lets the model decide.
    #[serde(default)]
    pub(crate) thinking_budget: Option<i32>,
    /// A coarse reasoning level, for models that take one instead of a budget.
    #[serde(default)]
    pub(crate) thinking_level: Option<ThinkingLevelSetting>,
}

impl Section for ThinkingSettings {
    const WHAT: &'static str = "thinking_config";
}

/// A coarse reasoning level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum ThinkingLevelSetting {
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
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCallSettings {
    /// The function-calling mode and the functions allowed.
    #[serde(deserialize_with = "section::required")]
    pub(crate) function_calling_config: FunctionCallingSettings,
}

impl Section for ToolCallSettings {
    const WHAT: &'static str = "tool_config";
    const REQUIRED: &'static [&'static str] = &["function_calling_config"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "retrieval_config",
        "adk-rs's adapters send no retrieval settings; drop the key",
    )];
}

/// The function-calling mode and the functions allowed.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FunctionCallingSettings {
    /// Whether and how the model calls functions; the provider's default when absent.
    #[serde(default)]
    pub(crate) mode: Option<FunctionCallingModeSetting>,
    /// With mode ANY: the only functions the model may call.
    #[serde(default)]
    pub(crate) allowed_function_names: Option<Vec<String>>,
}

impl Section for FunctionCallingSettings {
    const WHAT: &'static str = "function_calling_config";
}

/// Whether and how the model calls functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum FunctionCallingModeSetting {
    /// The model chooses between text and function calls.
    Auto,
    /// The model must call a function.
    Any,
    /// The model must not call functions.
    None,
    /// Like AUTO, with calls checked against the declared schemas.
    Validated,
}

/// One content-safety threshold, with Gemini's names (`HARM_CATEGORY_HARASSMENT`,
/// `BLOCK_ONLY_HIGH`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SafetySettingEntry {
    /// The harm category, for example `HARM_CATEGORY_HARASSMENT`.
    pub(crate) category: String,
    /// The blocking threshold, for example `BLOCK_ONLY_HIGH`.
    pub(crate) threshold: String,
}

impl Section for SafetySettingEntry {
    const WHAT: &'static str = "a safety setting";
    const REQUIRED: &'static [&'static str] = &["category", "threshold"];
}
