//! A Gemini `GenerateContentResponse` (one unary answer or one SSE event) read into an
//! [`LlmResponse`].

use adk_core::{Content, FinishReason, LlmResponse, UsageMetadata};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, ErrorKind};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GenerateContentResponse {
    #[serde(default)]
    candidates: Vec<Candidate>,
    usage_metadata: Option<UsageMetadata>,
    model_version: Option<String>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<FinishReason>,
    finish_message: Option<String>,
    avg_logprobs: Option<f64>,
    grounding_metadata: Option<Value>,
    citation_metadata: Option<Value>,
    logprobs_result: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
    block_reason_message: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
    status: Option<String>,
}

/// Reads one response; an `{"error": ...}` object inside a successful HTTP response (as a stream
/// event, say) is an [`ErrorKind::Provider`] error.
pub(super) fn parse(text: &str) -> Result<GenerateContentResponse, Error> {
    let response: GenerateContentResponse = serde_json::from_str(text)
        .map_err(|error| Error::decode("a Gemini response", error, text))?;
    if let Some(error) = &response.error {
        return Err(Error::new(
            ErrorKind::Provider,
            format!(
                "Gemini reported an error mid-response: {} {}; retry the call",
                error.status.as_deref().unwrap_or("UNKNOWN"),
                error.message.as_deref().unwrap_or("(no message)")
            ),
        )
        .with_body(text.to_owned())
        .with_provider_status(error.status.clone()));
    }
    Ok(response)
}

impl GenerateContentResponse {
    /// The response as adk-core sees it: the first candidate, the usage, and the finish reason.
    /// A finish reason other than `STOP` is also reported as `error_code`, with the finish message,
    /// as ADK does; a blocked prompt is reported the same way with the block reason.
    pub(super) fn into_llm_response(self) -> LlmResponse {
        let mut response = LlmResponse::default();
        response.model_version = self.model_version;
        response.usage_metadata = self.usage_metadata;
        if let Some(candidate) = self.candidates.into_iter().next() {
            response.content = candidate.content;
            response.avg_logprobs = candidate.avg_logprobs;
            response.grounding_metadata = candidate.grounding_metadata;
            response.citation_metadata = candidate.citation_metadata;
            response.logprobs_result = candidate.logprobs_result;
            if let Some(reason) = &candidate.finish_reason
                && *reason != FinishReason::Stop
            {
                response.error_code = Some(reason.as_str().to_owned());
                response.error_message = candidate.finish_message;
            }
            response.finish_reason = candidate.finish_reason;
        } else if let Some(feedback) = self.prompt_feedback
            && let Some(reason) = feedback.block_reason
        {
            response.error_message = Some(feedback.block_reason_message.unwrap_or_else(|| {
                format!(
                    "the prompt was blocked ({reason}); rephrase it or change the safety settings"
                )
            }));
            response.error_code = Some(reason);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> LlmResponse {
        parse(&value.to_string()).unwrap().into_llm_response()
    }

    #[test]
    fn reads_parts_finish_reason_and_usage_with_thoughts() {
        let response = read(json!({
            "candidates": [{"content": {"parts": [
                {"text": "hmm", "thought": true},
                {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}, "thoughtSignature": "AAEC"}
            ], "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "thoughtsTokenCount": 7, "totalTokenCount": 12, "serviceTier": "standard"},
            "modelVersion": "gemini-x"
        }));
        let content = response.content.unwrap();
        assert!(content.parts[0].thought);
        let call = content.function_calls().next().unwrap();
        assert_eq!(
            (call.name.as_str(), call.id.as_ref().map(|id| id.as_str())),
            ("f", Some("c1"))
        );
        assert_eq!(
            content.parts[1].thought_signature.as_deref(),
            Some(&[0u8, 1, 2][..])
        );
        assert_eq!(response.finish_reason, Some(FinishReason::Stop));
        assert_eq!(response.error_code, None);
        let usage = response.usage_metadata.unwrap();
        assert_eq!(
            (usage.thoughts_token_count, usage.total_token_count),
            (Some(7), Some(12))
        );
    }

    #[test]
    fn unknown_finish_reasons_and_blocks_are_kept_without_panicking() {
        let response = read(
            json!({"candidates": [{"finishReason": "SOMETHING_NEW", "finishMessage": "why"}]}),
        );
        assert_eq!(
            response.finish_reason,
            Some(FinishReason::Other("SOMETHING_NEW".into()))
        );
        assert_eq!(response.error_code.as_deref(), Some("SOMETHING_NEW"));
        assert_eq!(response.error_message.as_deref(), Some("why"));
        let blocked = read(json!({"promptFeedback": {"blockReason": "SAFETY"}}));
        assert_eq!(blocked.error_code.as_deref(), Some("SAFETY"));
    }

    #[test]
    fn malformed_json_and_error_events_are_typed_errors() {
        assert_eq!(
            parse("{\"candidates\": [").err().unwrap().kind(),
            ErrorKind::Decode
        );
        let error = parse(r#"{"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}"#)
            .err()
            .unwrap();
        assert_eq!(error.kind(), ErrorKind::Provider);
        assert_eq!(error.provider_status(), Some("INTERNAL"));
    }
}
