//! A Chat Completions answer (`chat.completion`) read into an [`LlmResponse`], and the pieces the
//! stream reader shares: finish reasons, usage and tool-call arguments.

use adk_core::{Content, FinishReason, FunctionCall, LlmResponse, Part, Role, UsageMetadata};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};

/// The key under which tool-call arguments that are not a JSON object are kept, as the raw text
/// the model produced (`{"_raw_arguments": "15 * 4"}`). The adapter sends such arguments back
/// unchanged.
pub const RAW_ARGUMENTS_KEY: &str = "_raw_arguments";

#[derive(Deserialize)]
struct ChatCompletion {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<Message>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Deserialize)]
struct ToolCall {
    id: Option<String>,
    function: Option<Function>,
}

#[derive(Deserialize)]
struct Function {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Usage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    total_tokens: Option<u32>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u32>,
}

impl Usage {
    /// The counts in Gemini's terms: candidates exclude reasoning tokens, which are the thoughts.
    pub(super) fn into_metadata(self) -> UsageMetadata {
        let reasoning = self
            .completion_tokens_details
            .and_then(|details| details.reasoning_tokens);
        let mut usage = UsageMetadata::default();
        usage.prompt_token_count = self.prompt_tokens;
        usage.candidates_token_count = self
            .completion_tokens
            .map(|completion| completion.saturating_sub(reasoning.unwrap_or(0)));
        usage.thoughts_token_count = reasoning.filter(|&tokens| tokens > 0);
        usage.cached_content_token_count = self
            .prompt_tokens_details
            .and_then(|details| details.cached_tokens)
            .filter(|&tokens| tokens > 0);
        usage.total_token_count = self.total_tokens;
        usage
    }
}

/// OpenAI's finish reason in Gemini's terms; a tool call is a natural stop, as in Gemini.
pub(super) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "tool_calls" | "function_call" => FinishReason::Stop,
        "length" => FinishReason::MaxTokens,
        "content_filter" => FinishReason::Safety,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The arguments text of a tool call as an object; text that is not a JSON object is kept under
/// [`RAW_ARGUMENTS_KEY`].
pub(super) fn arguments(text: &str) -> Map<String, Value> {
    if text.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(args)) => args,
        _ => Map::from_iter([(RAW_ARGUMENTS_KEY.to_owned(), Value::String(text.to_owned()))]),
    }
}

/// A function call with `id`, `name` and the arguments text.
pub(super) fn function_call(id: Option<String>, name: String, args: &str) -> Part {
    let mut call = FunctionCall::new(name, Value::Object(arguments(args)));
    if let Some(id) = id {
        call = call.with_id(id);
    }
    Part::function_call(call)
}

/// Fills the final response from the collected answer. A refusal is reported as
/// `error_code: "REFUSAL"` with the model's words as the message.
pub(super) fn assemble(
    text: String,
    refusal: Option<String>,
    calls: Vec<Part>,
    finish: Option<&str>,
    usage: Option<Usage>,
    model: Option<String>,
) -> LlmResponse {
    let mut parts = Vec::with_capacity(calls.len() + 1);
    if !text.is_empty() {
        parts.push(Part::text(text));
    }
    parts.extend(calls);
    let mut response = LlmResponse::default();
    if !parts.is_empty() {
        response.content = Some(Content::new(Role::Model, parts));
    }
    response.finish_reason = finish.map(finish_reason);
    if let Some(FinishReason::Other(reason)) = &response.finish_reason {
        response.error_code = Some(reason.clone());
    }
    if let Some(refusal) = refusal.filter(|refusal| !refusal.is_empty()) {
        response.error_code = Some("REFUSAL".to_owned());
        response.error_message = Some(refusal);
    }
    response.usage_metadata = usage.map(Usage::into_metadata);
    response.model_version = model;
    response
}

/// Reads a whole (non-streamed) answer.
pub(super) fn parse(text: &str) -> Result<LlmResponse, Error> {
    let completion: ChatCompletion = serde_json::from_str(text)
        .map_err(|error| Error::decode("a Chat Completions answer", error, text))?;
    let choice = completion.choices.into_iter().next().ok_or_else(|| {
        Error::new(
            ErrorKind::Provider,
            format!(
                "the answer holds no choices; the server may not speak Chat Completions: {text}"
            ),
        )
    })?;
    let message = choice.message.unwrap_or(Message {
        content: None,
        refusal: None,
        tool_calls: None,
    });
    let calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .filter_map(|call| {
            let function = call.function?;
            Some(function_call(
                call.id,
                function.name.unwrap_or_default(),
                function.arguments.as_deref().unwrap_or_default(),
            ))
        })
        .collect();
    Ok(assemble(
        message.content.unwrap_or_default(),
        message.refusal,
        calls,
        choice.finish_reason.as_deref(),
        completion.usage,
        completion.model,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_tool_calls_usage_with_reasoning_and_finish_reason() {
        let response = parse(&json!({
            "model": "gpt-x",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 10, "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 8}}
        }).to_string())
        .unwrap();
        let call = response
            .content
            .as_ref()
            .unwrap()
            .function_calls()
            .next()
            .unwrap()
            .clone();
        assert_eq!(call.args["a"], 1);
        assert_eq!(call.id.unwrap().as_str(), "call_1");
        assert_eq!(response.finish_reason, Some(FinishReason::Stop));
        let usage = response.usage_metadata.unwrap();
        assert_eq!(
            (usage.candidates_token_count, usage.thoughts_token_count),
            (Some(2), Some(8))
        );
        assert_eq!(usage.cached_content_token_count, None);
    }

    #[test]
    fn odd_answers_never_panic() {
        assert_eq!(parse("not json").unwrap_err().kind(), ErrorKind::Decode);
        assert_eq!(
            parse("{\"choices\": []}").unwrap_err().kind(),
            ErrorKind::Provider
        );
        let odd = parse(r#"{"choices": [{"message": {"content": "x", "refusal": "no"}, "finish_reason": "weird"}]}"#).unwrap();
        assert_eq!(odd.finish_reason, Some(FinishReason::Other("weird".into())));
        assert_eq!(odd.error_code.as_deref(), Some("REFUSAL"));
        assert_eq!(arguments("15 * 4")[RAW_ARGUMENTS_KEY], "15 * 4");
        assert!(arguments("").is_empty());
    }
}
