//! The model contract: [`LlmRequest`] in, a stream of [`LlmResponse`]s out, through the [`Llm`] trait.
//!
//! These types name no provider. Adapters (in `adk-model`) translate them to a provider's wire format
//! and must reject, not drop, a setting they cannot honour.

use std::fmt;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{Content, Result, StreamingMode};

/// A stream of model responses: partial ones first when streaming, then the final one.
pub type LlmResponseStream = BoxStream<'static, Result<LlmResponse>>;

/// A language model that adk-rs can call.
///
/// `generate` returns at once; the work happens as the stream is polled, and dropping the stream
/// cancels it. With [`StreamingMode::Sse`] the adapter yields partial responses (`partial: Some(true)`)
/// holding text deltas as they arrive, then one aggregated final response with the finish reason
/// and usage. Otherwise it yields one final response.
pub trait Llm: Send + Sync {
    /// The model name, for example `gemini-2.5-flash`.
    fn name(&self) -> &str;

    /// Sends `request` to the model. With [`StreamingMode::Sse`] the stream yields partial
    /// responses with text deltas as they arrive, then the aggregated response; otherwise one
    /// response.
    fn generate(&self, request: LlmRequest, mode: StreamingMode) -> LlmResponseStream;
}

impl fmt::Debug for dyn Llm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llm").field("name", &self.name()).finish()
    }
}

/// Everything sent to a model for one call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LlmRequest {
    /// The model to call; adapters fall back to their own model when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The conversation so far. Shared, so that building a request does not copy the history:
    /// change it with `Arc::make_mut`, which copies only when another request still holds it.
    #[serde(default)]
    pub contents: Arc<Vec<Content>>,
    /// Sampling and output settings.
    #[serde(default)]
    pub config: GenerateContentConfig,
    /// The system instruction, paragraphs joined by blank lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<String>,
    /// The functions the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionDeclaration>,
    /// Tools the provider runs itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builtin_tools: Vec<BuiltinTool>,
}

impl LlmRequest {
    /// A request to `model` with `contents`.
    pub fn new(model: impl Into<String>, contents: Vec<Content>) -> Self {
        Self {
            model: model.into(),
            contents: Arc::new(contents),
            ..Self::default()
        }
    }

    /// Appends paragraphs to the system instruction, separated from what is there by a blank line.
    pub fn append_instructions<I, S>(&mut self, instructions: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for instruction in instructions {
            let instruction = instruction.as_ref();
            match &mut self.system_instruction {
                Some(existing) if !existing.is_empty() => {
                    existing.push_str("\n\n");
                    existing.push_str(instruction);
                }
                _ => self.system_instruction = Some(instruction.to_owned()),
            }
        }
    }

    /// Adds function declarations, replacing any of the same name.
    pub fn append_tools(&mut self, declarations: impl IntoIterator<Item = FunctionDeclaration>) {
        for declaration in declarations {
            self.tools
                .retain(|existing| existing.name != declaration.name);
            self.tools.push(declaration);
        }
    }
}

/// A function the model may call: its name, what it does, and JSON schemas of its arguments and result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object; `None` for a function without arguments. Shared, so
    /// that a tool declares itself to every request without copying its schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Arc<Value>>,
    /// JSON Schema of the result, when known; shared like `parameters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Arc<Value>>,
    /// Whether the provider must make the arguments follow `parameters` exactly (OpenAI's
    /// `strict` function calling); `None` leaves it to the adapter's default. Only adapters with
    /// such a mode read it: Gemini has none and sends the declaration as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl FunctionDeclaration {
    /// A declaration of `name` described by `description`, without arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: None,
            response: None,
            strict: None,
        }
    }

    /// Sets the JSON Schema of the arguments.
    pub fn with_parameters(mut self, schema: impl Into<Arc<Value>>) -> Self {
        self.parameters = Some(schema.into());
        self
    }

    /// Sets the JSON Schema of the result.
    pub fn with_response(mut self, schema: impl Into<Arc<Value>>) -> Self {
        self.response = Some(schema.into());
        self
    }

    /// Asks for strict arguments (or not) for this function alone, whatever the adapter's default.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }
}

/// A tool the provider runs on its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum BuiltinTool {
    /// The provider runs code the model writes (Gemini's code execution).
    CodeExecution,
    /// The provider searches the web (Gemini's Google Search grounding).
    GoogleSearch,
    /// The provider reads the web pages whose URLs the prompt names (Gemini's URL context).
    UrlContext,
}

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

/// What a model returned: one streamed chunk (`partial`) or the final answer of a call.
///
/// JSON keys are camelCase; input also accepts snake_case. Reading is hand-written, field by field,
/// so that an [`Event`](crate::Event), whose JSON holds these fields at its top level, reads them
/// straight from the input instead of through an intermediate buffer.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LlmResponse {
    /// The model version that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
    /// The content; absent on an error or an empty answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// Grounding sources, as the provider sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding_metadata: Option<Value>,
    /// Whether this is a streamed chunk that a final response will follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<bool>,
    /// Whether the model's turn is complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_complete: Option<bool>,
    /// Why generation stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// A provider error code, when the call failed in a way the response reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// A provider error message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Whether the user interrupted the model (live streaming).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
    /// Metadata a callback or the caller attached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_metadata: Option<Map<String, Value>>,
    /// Token counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// The average log-probability of the candidate's tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_logprobs: Option<f64>,
    /// Log-probabilities, as the provider sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs_result: Option<Value>,
    /// Citations, as the provider sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation_metadata: Option<Value>,
}

impl LlmResponse {
    /// Reads the value of `key` from `map` into the field it names (camelCase or snake_case), and
    /// says whether `key` was one of this type's fields. A JSON `null` reads as `None`.
    pub(crate) fn read_field<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> std::result::Result<bool, A::Error> {
        match key {
            "modelVersion" | "model_version" => self.model_version = map.next_value()?,
            "content" => self.content = map.next_value()?,
            "groundingMetadata" | "grounding_metadata" => {
                self.grounding_metadata = map.next_value()?
            }
            "partial" => self.partial = map.next_value()?,
            "turnComplete" | "turn_complete" => self.turn_complete = map.next_value()?,
            "finishReason" | "finish_reason" => self.finish_reason = map.next_value()?,
            "errorCode" | "error_code" => self.error_code = map.next_value()?,
            "errorMessage" | "error_message" => self.error_message = map.next_value()?,
            "interrupted" => self.interrupted = map.next_value()?,
            "customMetadata" | "custom_metadata" => self.custom_metadata = map.next_value()?,
            "usageMetadata" | "usage_metadata" => self.usage_metadata = map.next_value()?,
            "avgLogprobs" | "avg_logprobs" => self.avg_logprobs = map.next_value()?,
            "logprobsResult" | "logprobs_result" => self.logprobs_result = map.next_value()?,
            "citationMetadata" | "citation_metadata" => {
                self.citation_metadata = map.next_value()?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A response holding `content`.
    pub fn new(content: Content) -> Self {
        Self {
            content: Some(content),
            ..Self::default()
        }
    }

    /// Whether this is a streamed chunk (`partial: true`).
    pub fn is_partial(&self) -> bool {
        self.partial == Some(true)
    }
}

impl<'de> Deserialize<'de> for LlmResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct ResponseVisitor;

        impl<'de> Visitor<'de> for ResponseVisitor {
            type Value = LlmResponse;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model response object")
            }

            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<LlmResponse, A::Error> {
                let mut response = LlmResponse::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if !response.read_field(&key, &mut map)? {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(response)
            }
        }

        deserializer.deserialize_map(ResponseVisitor)
    }
}

/// Token counts of a model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UsageMetadata {
    /// Tokens in the prompt.
    #[serde(
        default,
        alias = "prompt_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompt_token_count: Option<u32>,
    /// Tokens in the answer.
    #[serde(
        default,
        alias = "candidates_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub candidates_token_count: Option<u32>,
    /// Tokens spent reasoning.
    #[serde(
        default,
        alias = "thoughts_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub thoughts_token_count: Option<u32>,
    /// Prompt tokens served from a cache.
    #[serde(
        default,
        alias = "cached_content_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub cached_content_token_count: Option<u32>,
    /// Tokens in the results of provider-run tools.
    #[serde(
        default,
        alias = "tool_use_prompt_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_use_prompt_token_count: Option<u32>,
    /// All tokens of the call.
    #[serde(
        default,
        alias = "total_token_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_token_count: Option<u32>,
}

impl UsageMetadata {
    /// Counts of `prompt` and `candidates` tokens, with their total.
    pub fn new(prompt: u32, candidates: u32) -> Self {
        Self {
            prompt_token_count: Some(prompt),
            candidates_token_count: Some(candidates),
            total_token_count: Some(prompt + candidates),
            ..Self::default()
        }
    }
}

/// Why the model stopped generating, with Gemini's names. Reasons this version does not know are
/// kept as [`FinishReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural stop or a stop sequence.
    Stop,
    /// The token limit was reached.
    MaxTokens,
    /// Stopped for safety.
    Safety,
    /// Stopped for reciting training data.
    Recitation,
    /// Stopped for an unsupported language.
    Language,
    /// Stopped for blocked terms.
    Blocklist,
    /// Stopped for prohibited content.
    ProhibitedContent,
    /// Stopped for sensitive personal information.
    Spii,
    /// The model produced a function call that could not be parsed.
    MalformedFunctionCall,
    /// Stopped for another, unspecified reason (`OTHER`, `FINISH_REASON_UNSPECIFIED`).
    Unspecified,
    /// A reason this version does not know, as the provider spelled it.
    Other(String),
}

impl FinishReason {
    const NAMES: [(&'static str, FinishReason); 10] = [
        ("STOP", Self::Stop),
        ("MAX_TOKENS", Self::MaxTokens),
        ("SAFETY", Self::Safety),
        ("RECITATION", Self::Recitation),
        ("LANGUAGE", Self::Language),
        ("BLOCKLIST", Self::Blocklist),
        ("PROHIBITED_CONTENT", Self::ProhibitedContent),
        ("SPII", Self::Spii),
        ("MALFORMED_FUNCTION_CALL", Self::MalformedFunctionCall),
        ("OTHER", Self::Unspecified),
    ];

    /// The reason as Gemini spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => Self::NAMES
                .iter()
                .find(|(_, reason)| reason == known)
                .map_or("OTHER", |(name, _)| name),
        }
    }
}

impl From<&str> for FinishReason {
    fn from(name: &str) -> Self {
        if name == "FINISH_REASON_UNSPECIFIED" {
            return Self::Unspecified;
        }
        Self::NAMES
            .iter()
            .find(|(known, _)| *known == name)
            .map_or_else(
                || Self::Other(name.to_owned()),
                |(_, reason)| reason.clone(),
            )
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FinishReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::from(name.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finish_reasons_round_trip_known_and_unknown() {
        for name in [
            "STOP",
            "MAX_TOKENS",
            "MALFORMED_FUNCTION_CALL",
            "IMAGE_SAFETY",
        ] {
            let reason: FinishReason = serde_json::from_value(json!(name)).unwrap();
            assert_eq!(serde_json::to_value(&reason).unwrap(), json!(name));
        }
        assert_eq!(
            FinishReason::from("IMAGE_SAFETY"),
            FinishReason::Other("IMAGE_SAFETY".into())
        );
    }

    #[test]
    fn instructions_are_joined_by_blank_lines() {
        let mut request = LlmRequest::default();
        request.append_instructions(["You are helpful."]);
        request.append_instructions(["Answer briefly.", "Use metric units."]);
        assert_eq!(
            request.system_instruction.as_deref(),
            Some("You are helpful.\n\nAnswer briefly.\n\nUse metric units.")
        );
    }

    #[test]
    fn appended_tools_replace_same_name() {
        let mut request = LlmRequest::default();
        request.append_tools([FunctionDeclaration::new("f", "old")]);
        request.append_tools([
            FunctionDeclaration::new("f", "new"),
            FunctionDeclaration::new("g", ""),
        ]);
        let names: Vec<_> = request
            .tools
            .iter()
            .map(|tool| tool.description.as_str())
            .collect();
        assert_eq!(names, ["new", ""]);
    }

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
