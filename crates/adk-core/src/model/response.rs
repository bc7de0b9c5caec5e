//! [`LlmResponse`]: what a model returned, with its [`UsageMetadata`] and [`FinishReason`].

use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::Content;

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
}
