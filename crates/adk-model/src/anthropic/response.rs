//! An Anthropic `message` (a whole answer, or the blocks a stream assembled) read into an
//! [`LlmResponse`]: content blocks into parts, the stop reason into a finish reason, the usage
//! into Gemini's counts.

use adk_core::{
    Content, FinishReason, FunctionCall, LlmResponse, Part, PartData, Role, UsageMetadata,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};
use crate::provider_data::{ANTHROPIC_BLOCK, ANTHROPIC_REDACTED_THINKING, ANTHROPIC_SIGNATURE};

#[derive(Deserialize)]
pub(super) struct Message {
    pub(super) model: Option<String>,
    #[serde(default)]
    content: Vec<Value>,
    stop_reason: Option<String>,
    pub(super) usage: Option<Usage>,
}

/// Anthropic's token counts; `input_tokens` excludes the tokens read from or written to the
/// cache.
#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct Usage {
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    cache_creation_input_tokens: Option<u32>,
    cache_read_input_tokens: Option<u32>,
}

impl Usage {
    /// Takes the counts `later` carries (a stream's `message_delta` repeats some of them).
    pub(super) fn update(&mut self, later: Usage) {
        let keep = |old: &mut Option<u32>, new: Option<u32>| {
            if new.is_some() {
                *old = new;
            }
        };
        keep(&mut self.input_tokens, later.input_tokens);
        keep(&mut self.output_tokens, later.output_tokens);
        keep(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        keep(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
    }

    /// The counts in Gemini's terms: the prompt counts every input token, cached or not, and the
    /// tokens read from the cache are the cached content.
    pub(super) fn into_metadata(self) -> UsageMetadata {
        let prompt = self.input_tokens.unwrap_or(0)
            + self.cache_creation_input_tokens.unwrap_or(0)
            + self.cache_read_input_tokens.unwrap_or(0);
        let output = self.output_tokens.unwrap_or(0);
        let mut usage = UsageMetadata::new(prompt, output);
        usage.cached_content_token_count =
            self.cache_read_input_tokens.filter(|&tokens| tokens > 0);
        usage
    }
}

/// Reads a whole answer.
pub(super) fn parse(text: &str) -> Result<LlmResponse, Error> {
    let message: Message = serde_json::from_str(text)
        .map_err(|error| Error::decode("an Anthropic message", error, text))?;
    let parts = message
        .content
        .iter()
        .map(block_part)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(assemble(
        parts,
        message.stop_reason.as_deref(),
        message.usage,
        message.model,
    ))
}

/// The part a content block becomes. Blocks of kinds this adapter does not know (server tools'
/// blocks, say) are kept whole in the part's extra data, so nothing is lost.
pub(super) fn block_part(block: &Value) -> Result<Part, Error> {
    let text = |key: &str| block[key].as_str().unwrap_or_default().to_owned();
    Ok(match block["type"].as_str() {
        Some("text") => Part::text(text("text")),
        Some("thinking") => thinking_part(text("thinking"), text("signature")),
        Some("redacted_thinking") => redacted_thinking_part(text("data")),
        Some("tool_use") => {
            let input = match &block["input"] {
                Value::Object(input) => input.clone(),
                Value::Null => Map::new(),
                other => {
                    return Err(Error::new(
                        ErrorKind::Decode,
                        format!("an Anthropic tool_use block's input is not an object: {other}"),
                    ));
                }
            };
            tool_use_part(text("id"), text("name"), input)
        }
        _ => {
            let mut part = Part::new(PartData::Other);
            part.extra.insert(ANTHROPIC_BLOCK.into(), block.clone());
            part
        }
    })
}

pub(super) fn thinking_part(thinking: String, signature: String) -> Part {
    let mut part = Part::thought(thinking);
    part.extra
        .insert(ANTHROPIC_SIGNATURE.into(), Value::String(signature));
    part
}

pub(super) fn redacted_thinking_part(data: String) -> Part {
    let mut part = Part::new(PartData::Other);
    part.thought = true;
    part.extra
        .insert(ANTHROPIC_REDACTED_THINKING.into(), Value::String(data));
    part
}

pub(super) fn tool_use_part(id: String, name: String, input: Map<String, Value>) -> Part {
    Part::function_call(FunctionCall::new(name, Value::Object(input)).with_id(id))
}

/// Anthropic's stop reason in Gemini's terms: a tool call or a stop sequence is a natural stop.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "tool_use" | "stop_sequence" | "pause_turn" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::MaxTokens,
        "refusal" => FinishReason::Safety,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The response for the collected parts: the finish reason, and for one other than a natural
/// stop the same `error_code` Gemini's adapter gives (`MAX_TOKENS`, `SAFETY`).
pub(super) fn assemble(
    parts: Vec<Part>,
    stop_reason: Option<&str>,
    usage: Option<Usage>,
    model: Option<String>,
) -> LlmResponse {
    let mut response = LlmResponse::default();
    if !parts.is_empty() {
        response.content = Some(Content::new(Role::Model, parts));
    }
    if let Some(reason) = stop_reason.map(finish_reason) {
        if reason != FinishReason::Stop {
            response.error_code = Some(reason.as_str().to_owned());
            response.error_message = Some(match stop_reason {
                Some("refusal") => "the model refused to answer".to_owned(),
                Some(other) => format!("the model stopped: {other}"),
                None => String::new(),
            });
        }
        response.finish_reason = Some(reason);
    }
    response.usage_metadata = usage.map(Usage::into_metadata);
    response.model_version = model;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_stop_reason_and_cached_usage() {
        let response = parse(r#"{"id":"m","type":"message","role":"assistant","model":"claude-x",
            "content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"opaque"},
                       {"type":"text","text":"Hi"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},
                       {"type":"server_tool_use","id":"s","name":"web_search","input":{}}],
            "stop_reason":"max_tokens","usage":{"input_tokens":3,"cache_creation_input_tokens":418,"cache_read_input_tokens":1111,"output_tokens":7}}"#)
            .unwrap();
        let content = response.content.unwrap();
        assert_eq!(content.parts.len(), 5);
        assert!(content.parts[0].thought && content.parts[1].thought);
        assert_eq!(content.parts[0].extra[ANTHROPIC_SIGNATURE], "sig");
        assert_eq!(
            content.parts[1].extra[ANTHROPIC_REDACTED_THINKING],
            "opaque"
        );
        assert_eq!(content.text().as_deref(), Some("Hi"));
        let call = content.function_calls().next().unwrap();
        assert_eq!(
            (call.name.as_str(), call.args["a"].clone()),
            ("f", 1.into())
        );
        assert_eq!(
            content.parts[4].extra[ANTHROPIC_BLOCK]["name"],
            "web_search"
        );
        assert_eq!(response.finish_reason, Some(FinishReason::MaxTokens));
        assert_eq!(response.error_code.as_deref(), Some("MAX_TOKENS"));
        let usage = response.usage_metadata.unwrap();
        assert_eq!(usage.prompt_token_count, Some(1532));
        assert_eq!(usage.cached_content_token_count, Some(1111));
        assert_eq!(usage.total_token_count, Some(1539));
    }

    #[test]
    fn malformed_answers_are_typed_errors() {
        assert_eq!(
            parse("{\"content\": [").unwrap_err().kind(),
            ErrorKind::Decode
        );
        let error = parse(r#"{"content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}"#)
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Decode);
    }
}
