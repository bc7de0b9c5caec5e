//! A Responses API `response` object (a whole answer, or the one a stream's terminal event
//! carries) read into an [`LlmResponse`]: output items into parts, the status into a finish
//! reason, the usage into Gemini's counts.

use adk_core::{Content, FinishReason, FunctionCall, LlmResponse, Part, Role, UsageMetadata};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::request::reasoning_part;
use crate::error::{Error, ErrorKind};
use crate::parts::streamed_arguments;
use crate::provider_data::OPENAI_ITEM_ID;

#[derive(Deserialize)]
pub(super) struct Response {
    model: Option<String>,
    status: Option<String>,
    #[serde(default)]
    pub(super) output: Vec<Value>,
    usage: Option<Usage>,
    incomplete_details: Option<IncompleteDetails>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct ErrorBody {
    pub(super) code: Option<String>,
    pub(super) message: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    total_tokens: Option<u32>,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    cached_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct OutputDetails {
    reasoning_tokens: Option<u32>,
}

impl Usage {
    /// The counts in Gemini's terms: candidates exclude reasoning tokens, which are the thoughts.
    fn into_metadata(self) -> UsageMetadata {
        let reasoning = self
            .output_tokens_details
            .and_then(|details| details.reasoning_tokens);
        let mut usage = UsageMetadata::default();
        usage.prompt_token_count = self.input_tokens;
        usage.candidates_token_count = self
            .output_tokens
            .map(|output| output.saturating_sub(reasoning.unwrap_or(0)));
        usage.thoughts_token_count = reasoning.filter(|&tokens| tokens > 0);
        usage.cached_content_token_count = self
            .input_tokens_details
            .and_then(|details| details.cached_tokens)
            .filter(|&tokens| tokens > 0);
        usage.total_token_count = self.total_tokens;
        usage
    }
}

/// Reads a whole answer.
pub(super) fn parse(text: &str) -> Result<LlmResponse, Error> {
    let response: Response = serde_json::from_str(text)
        .map_err(|error| Error::decode("a Responses API response", error, text))?;
    response.into_llm_response(None, text)
}

impl Response {
    /// The response as adk-core sees it, from its own output items or, when it carries none (a
    /// stream's terminal event may leave them out), from `streamed` ones. A failed response is
    /// an [`ErrorKind::Provider`] error; a function call whose arguments are not a whole JSON
    /// object (cut off at the token limit) is an [`ErrorKind::Decode`] error, so that it never
    /// reaches a tool.
    pub(super) fn into_llm_response(
        self,
        streamed: Option<Vec<Value>>,
        text: &str,
    ) -> Result<LlmResponse, Error> {
        if self.status.as_deref() == Some("failed") || self.error.is_some() {
            let error = self.error.unwrap_or(ErrorBody {
                code: None,
                message: None,
            });
            return Err(failed(error, text));
        }
        let output = match streamed {
            Some(items) if self.output.is_empty() => items,
            _ => self.output,
        };
        let mut parts = Vec::new();
        let mut refusal = None;
        for item in &output {
            match item["type"].as_str() {
                Some("message") => {
                    for content in item["content"].as_array().into_iter().flatten() {
                        match content["type"].as_str() {
                            Some("output_text") => {
                                let text = content["text"].as_str().unwrap_or_default();
                                if !text.is_empty() {
                                    parts.push(Part::text(text));
                                }
                            }
                            Some("refusal") => {
                                refusal = content["refusal"].as_str().map(str::to_owned);
                            }
                            _ => {}
                        }
                    }
                }
                Some("function_call") => parts.push(function_call(item)?),
                Some("reasoning") => parts.push(reasoning_part(item)),
                _ => {}
            }
        }
        // Adjacent text parts (several output_text contents) read as one.
        let mut merged: Vec<Part> = Vec::with_capacity(parts.len());
        for part in parts {
            if let (Some(last), Some(text)) = (merged.last_mut(), part.as_text())
                && !last.thought
                && !part.thought
                && let adk_core::PartData::Text(previous) = &mut last.data
            {
                previous.push_str(text);
                continue;
            }
            merged.push(part);
        }
        let mut response = LlmResponse::default();
        if !merged.is_empty() {
            response.content = Some(Content::new(Role::Model, merged));
        }
        let reason = self.incomplete_details.and_then(|details| details.reason);
        response.finish_reason = match self.status.as_deref() {
            Some("incomplete") => Some(match reason.as_deref() {
                Some("max_output_tokens") => FinishReason::MaxTokens,
                Some("content_filter") => FinishReason::Safety,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Unspecified,
            }),
            Some(_) | None => Some(FinishReason::Stop),
        };
        if let Some(reason) = &response.finish_reason
            && *reason != FinishReason::Stop
        {
            response.error_code = Some(reason.as_str().to_owned());
            response.error_message = Some(format!(
                "the response is incomplete: {}",
                incomplete_reason(reason)
            ));
        }
        if let Some(refusal) = refusal {
            response.error_code = Some("REFUSAL".to_owned());
            response.error_message = Some(refusal);
        }
        response.usage_metadata = self.usage.map(Usage::into_metadata);
        response.model_version = self.model;
        Ok(response)
    }
}

fn incomplete_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::MaxTokens => "it reached max_output_tokens",
        FinishReason::Safety => "the content filter stopped it",
        other => other.as_str(),
    }
}

/// The function call an output item holds, with the call id as the call's id and the item id
/// kept to go back with it.
fn function_call(item: &Value) -> Result<Part, Error> {
    let name = item["name"].as_str().unwrap_or_default();
    let raw = item["arguments"].as_str().unwrap_or_default();
    let args = if item["status"] == "incomplete" {
        None
    } else {
        streamed_arguments(raw).or_else(|| {
            // A model may write arguments that are not an object; they go to the tool as the raw
            // text, as the Chat Completions adapter does.
            serde_json::from_str::<Value>(raw).is_ok().then(|| {
                Map::from_iter([(
                    crate::RAW_ARGUMENTS_KEY.to_owned(),
                    Value::String(raw.to_owned()),
                )])
            })
        })
    };
    let Some(args) = args else {
        return Err(Error::new(
            ErrorKind::Decode,
            format!(
                "the model's call of `{name}` ended mid-arguments, so it was not made: {raw}; raise max_output_tokens or retry"
            ),
        ));
    };
    let mut call = FunctionCall::new(name, Value::Object(args));
    if let Some(id) = item["call_id"].as_str() {
        call = call.with_id(id);
    }
    let mut part = Part::function_call(call);
    if let Some(id) = item.get("id").filter(|id| id.is_string()) {
        part.extra.insert(OPENAI_ITEM_ID.into(), id.clone());
    }
    Ok(part)
}

/// The error of a failed response.
pub(super) fn failed(error: ErrorBody, text: &str) -> Error {
    let code = error.code.unwrap_or_else(|| "failed".to_owned());
    Error::new(
        ErrorKind::Provider,
        format!(
            "the Responses API reported a failure: {code}: {}; retry the call",
            error.message.as_deref().unwrap_or("(no message)")
        ),
    )
    .with_body(text.to_owned())
    .with_provider_status(Some(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider_data::OPENAI_REASONING;

    #[test]
    fn reads_reasoning_calls_text_and_usage() {
        let response = parse(r#"{"model":"gpt-5","status":"completed","output":[
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAA"},
            {"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}","status":"completed"},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"},{"type":"output_text","text":" there"}]}],
            "usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":40}}"#).unwrap();
        let content = response.content.unwrap();
        assert!(content.parts[0].thought);
        assert_eq!(content.parts[0].as_text(), Some("Plan."));
        assert_eq!(
            content.parts[0].extra[OPENAI_REASONING]["encrypted_content"],
            "gAAA"
        );
        let call = content.function_calls().next().unwrap();
        assert_eq!(call.id.as_ref().unwrap().as_str(), "call_1");
        assert_eq!(content.parts[1].extra[OPENAI_ITEM_ID], "fc_1");
        assert_eq!(content.text().as_deref(), Some("Hi there"));
        let usage = response.usage_metadata.unwrap();
        assert_eq!(
            (
                usage.candidates_token_count,
                usage.thoughts_token_count,
                usage.cached_content_token_count
            ),
            (Some(10), Some(20), Some(4))
        );
    }

    #[test]
    fn incomplete_failed_and_cut_calls() {
        let cut = parse(r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
            "output":[{"type":"message","content":[{"type":"output_text","text":"Once"}],"status":"incomplete"}]}"#).unwrap();
        assert_eq!(cut.finish_reason, Some(FinishReason::MaxTokens));
        assert_eq!(cut.error_code.as_deref(), Some("MAX_TOKENS"));
        let failed = parse(
            r#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#,
        )
        .unwrap_err();
        assert_eq!(
            (failed.kind(), failed.provider_status()),
            (ErrorKind::Provider, Some("server_error"))
        );
        let call = parse(r#"{"status":"incomplete","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":","status":"incomplete"}]}"#)
            .unwrap_err();
        assert_eq!(call.kind(), ErrorKind::Decode);
        let raw = parse(r#"{"status":"completed","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"[1,2]"}]}"#).unwrap();
        let call = raw
            .content
            .unwrap()
            .function_calls()
            .next()
            .unwrap()
            .clone();
        assert_eq!(call.args[crate::RAW_ARGUMENTS_KEY], "[1,2]");
    }
}
