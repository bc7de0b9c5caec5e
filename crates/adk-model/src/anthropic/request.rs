//! An [`LlmRequest`] written as an Anthropic Messages request body (`POST /v1/messages`).

use adk_core::{
    Content, FunctionCall, FunctionCallingMode, LlmRequest, Part, PartData, Role, ThinkingConfig,
};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cache::{CacheMode, ContextCacheConfig};
use crate::error::Error;
use crate::parts::{self, INTERRUPTED_CALL_RESULT};
use crate::provider_data::{ANTHROPIC_BLOCK, ANTHROPIC_REDACTED_THINKING, ANTHROPIC_SIGNATURE};

/// Per-model choices that the request types of adk-core do not carry.
#[derive(Debug, Clone)]
pub(super) struct Options {
    /// `max_tokens` when the request sets no `max_output_tokens`: the API needs one.
    pub(super) default_max_tokens: u32,
    pub(super) cache: Option<ContextCacheConfig>,
}

#[derive(Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Value>,
}

#[derive(Serialize)]
struct Message {
    role: &'static str,
    content: Vec<Value>,
}

/// The JSON body for `request` sent to `model`.
pub(super) fn build(
    request: &LlmRequest,
    model: &str,
    stream: bool,
    options: &Options,
) -> Result<bytes::Bytes, Error> {
    let config = &request.config;
    refuse_unsupported(request)?;
    let mut body = MessagesRequest {
        model,
        max_tokens: config
            .max_output_tokens
            .unwrap_or(options.default_max_tokens),
        messages: messages(&request.contents)?,
        system: request
            .system_instruction
            .as_deref()
            .filter(|text| !text.is_empty())
            .map(|text| json!(text)),
        tools: request
            .tools
            .iter()
            .map(|declaration| {
                let mut tool = json!({
                    "name": declaration.name,
                    "description": declaration.description,
                    "input_schema": declaration
                        .parameters
                        .as_deref()
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                });
                if let Some(strict) = declaration.strict {
                    tool["strict"] = json!(strict);
                }
                tool
            })
            .collect(),
        tool_choice: tool_choice(request)?,
        stream,
        temperature: config.temperature,
        top_p: config.top_p,
        top_k: config.top_k,
        stop_sequences: &config.stop_sequences,
        thinking: config.thinking_config.as_ref().map(thinking).transpose()?,
        output_config: output_config(request)?,
        cache_control: None,
    };
    if let Some(cache) = &options.cache {
        match cache.mode {
            CacheMode::Automatic => {
                body.cache_control = Some(cache_control(cache));
            }
            _ => mark_stable_prefix(&mut body, cache),
        }
    }
    serde_json::to_vec(&body)
        .map(bytes::Bytes::from)
        .map_err(|error| {
            Error::config(format!("the request could not be written as JSON: {error}"))
                .with_source(error)
        })
}

/// Settings the Messages API has no place for: an error naming each, never dropped.
fn refuse_unsupported(request: &LlmRequest) -> Result<(), Error> {
    let config = &request.config;
    let refused = [
        (!config.safety_settings.is_empty(), "`safety_settings`"),
        (config.seed.is_some(), "`seed`"),
        (config.presence_penalty.is_some(), "`presence_penalty`"),
        (config.frequency_penalty.is_some(), "`frequency_penalty`"),
        (
            config.candidate_count.is_some_and(|count| count != 1),
            "`candidate_count` other than 1",
        ),
    ];
    if let Some((_, name)) = refused.iter().find(|(set, _)| *set) {
        return Err(Error::config(format!(
            "the Anthropic Messages API has no {name}; remove it from the config"
        )));
    }
    if !request.builtin_tools.is_empty() {
        return Err(Error::config(format!(
            "the Anthropic adapter cannot run the provider tools {:?}; remove them or use Gemini",
            request.builtin_tools
        )));
    }
    Ok(())
}

/// Extended thinking: a budget of tokens, or thinking turned off.
fn thinking(config: &ThinkingConfig) -> Result<Value, Error> {
    if config.thinking_level.is_some() {
        return Err(Error::config(
            "Anthropic's extended thinking takes a token budget, not a level; set `thinking_budget` instead of `thinking_level`",
        ));
    }
    if config.include_thoughts == Some(false) && config.thinking_budget.is_some_and(|b| b > 0) {
        return Err(Error::config(
            "Anthropic returns its thinking whenever it thinks (it must be sent back with tool results); leave `include_thoughts` unset or true",
        ));
    }
    match config.thinking_budget {
        Some(0) => Ok(json!({"type": "disabled"})),
        Some(budget) if budget > 0 => Ok(json!({"type": "enabled", "budget_tokens": budget})),
        Some(_) => Err(Error::config(
            "Anthropic's extended thinking needs a budget of at least 1024 tokens; a budget the model chooses (-1) has no Anthropic equivalent",
        )),
        None => Err(Error::config(
            "Anthropic's extended thinking needs `thinking_budget` (at least 1024 tokens)",
        )),
    }
}

fn output_config(request: &LlmRequest) -> Result<Option<Value>, Error> {
    let config = &request.config;
    if let Some(schema) = &config.response_schema {
        return Ok(Some(
            json!({"format": {"type": "json_schema", "schema": schema}}),
        ));
    }
    match config.response_mime_type.as_deref() {
        None | Some("text/plain") => Ok(None),
        Some(other) => Err(Error::config(format!(
            "the Anthropic Messages API answers `{other}` only under a JSON schema; set `response_schema`"
        ))),
    }
}

fn tool_choice(request: &LlmRequest) -> Result<Option<Value>, Error> {
    let Some(calling) = request
        .config
        .tool_config
        .as_ref()
        .and_then(|config| config.function_calling_config.as_ref())
    else {
        return Ok(None);
    };
    Ok(match calling.mode {
        None => None,
        Some(FunctionCallingMode::Auto) => Some(json!({"type": "auto"})),
        Some(FunctionCallingMode::None) => Some(json!({"type": "none"})),
        Some(FunctionCallingMode::Any) => match calling.allowed_function_names.as_slice() {
            [] => Some(json!({"type": "any"})),
            [name] => Some(json!({"type": "tool", "name": name})),
            _ => {
                return Err(Error::config(
                    "Anthropic can force one named tool or any tool, not a list; allow one name or none",
                ));
            }
        },
        Some(other) => {
            return Err(Error::config(format!(
                "the function-calling mode {other:?} has no Anthropic equivalent; use AUTO, ANY or NONE"
            )));
        }
    })
}

/// One message per content (consecutive contents of one role joined, as the API wants turns to
/// alternate), with every tool call answered.
fn messages(contents: &[Content]) -> Result<Vec<Message>, Error> {
    let mut messages: Vec<Message> = Vec::with_capacity(contents.len());
    for content in contents {
        let (role, blocks) = match content.role {
            Some(Role::Model) => ("assistant", assistant_blocks(content)?),
            Some(Role::User) | None => ("user", user_blocks(content)?),
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(Message {
                role,
                content: blocks,
            }),
        }
    }
    answer_interrupted_calls(&mut messages);
    Ok(messages)
}

/// Adds a `tool_result` for every `tool_use` the next user message does not answer: a history can
/// hold such a call when a run was cancelled after the call was stored and before its result was,
/// and the API refuses every later request of the session otherwise.
fn answer_interrupted_calls(messages: &mut Vec<Message>) {
    let mut index = 0;
    while index < messages.len() {
        if messages[index].role != "assistant" {
            index += 1;
            continue;
        }
        let calls: Vec<String> = messages[index]
            .content
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .filter_map(|block| block["id"].as_str().map(str::to_owned))
            .collect();
        if calls.is_empty() {
            index += 1;
            continue;
        }
        if messages
            .get(index + 1)
            .is_none_or(|next| next.role != "user")
        {
            messages.insert(
                index + 1,
                Message {
                    role: "user",
                    content: Vec::new(),
                },
            );
        }
        let next = &mut messages[index + 1];
        let answered: Vec<String> = next
            .content
            .iter()
            .filter_map(|block| block["tool_use_id"].as_str().map(str::to_owned))
            .collect();
        let missing: Vec<Value> = calls
            .into_iter()
            .filter(|id| !answered.contains(id))
            .map(|id| {
                json!({"type": "tool_result", "tool_use_id": id, "content": INTERRUPTED_CALL_RESULT, "is_error": true})
            })
            .collect();
        // Results come first in a user message.
        next.content.splice(0..0, missing);
        index += 2;
    }
}

fn assistant_blocks(content: &Content) -> Result<Vec<Value>, Error> {
    let mut blocks = Vec::with_capacity(content.parts.len());
    for part in &content.parts {
        if part.thought {
            // Only Anthropic's own thinking goes back, with its signature; another provider's
            // thoughts have none the API would accept.
            if let Some(block) = thinking_block(part) {
                blocks.push(block);
            }
            continue;
        }
        match &part.data {
            PartData::Text(text) if text.is_empty() => {}
            PartData::Text(text) => blocks.push(json!({"type": "text", "text": text})),
            PartData::FunctionCall(call) => blocks.push(tool_use(call)?),
            PartData::Other => blocks.extend(part.extra.get(ANTHROPIC_BLOCK).cloned()),
            other => return Err(unsupported("model", other)),
        }
    }
    Ok(blocks)
}

/// The thinking block a thought part holds, when Anthropic wrote it.
fn thinking_block(part: &Part) -> Option<Value> {
    if let Some(Value::String(data)) = part.extra.get(ANTHROPIC_REDACTED_THINKING) {
        return Some(json!({"type": "redacted_thinking", "data": data}));
    }
    let Some(Value::String(signature)) = part.extra.get(ANTHROPIC_SIGNATURE) else {
        return None;
    };
    Some(json!({
        "type": "thinking",
        "thinking": part.as_text().unwrap_or_default(),
        "signature": signature,
    }))
}

fn tool_use(call: &FunctionCall) -> Result<Value, Error> {
    let id = call.id.as_ref().ok_or_else(|| {
        Error::config(format!(
            "the function call `{}` has no id, and Anthropic needs one to pair it with its result; give calls ids",
            call.name
        ))
    })?;
    Ok(json!({"type": "tool_use", "id": id.as_str(), "name": call.name, "input": call.args}))
}

fn user_blocks(content: &Content) -> Result<Vec<Value>, Error> {
    let mut results = Vec::new();
    let mut blocks = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) if text.is_empty() => {}
            PartData::Text(text) => blocks.push(json!({"type": "text", "text": text})),
            PartData::InlineData(blob) => {
                let data = base64::engine::general_purpose::STANDARD.encode(&blob.data);
                let source = json!({"type": "base64", "media_type": blob.mime_type, "data": data});
                blocks.push(media_block(&blob.mime_type, source)?);
            }
            PartData::FileData(file) => {
                let mime_type = file.mime_type.as_deref().unwrap_or("an unknown type");
                if !parts::is_web_or_data_url(&file.file_uri) {
                    return Err(Error::config(format!(
                        "the Anthropic adapter sends files by URL only (http or https); `{}` is not one; load its bytes into an inline part instead",
                        file.file_uri
                    )));
                }
                blocks.push(media_block(
                    mime_type,
                    json!({"type": "url", "url": file.file_uri}),
                )?);
            }
            PartData::FunctionResponse(response) => {
                let id = response.id.as_ref().ok_or_else(|| {
                    Error::config(format!(
                        "the function response of `{}` has no id, and Anthropic needs the id of the call it answers",
                        response.name
                    ))
                })?;
                let mut result = json!({
                    "type": "tool_result",
                    "tool_use_id": id.as_str(),
                    "content": parts::result_text(response),
                });
                if parts::is_error_result(response) {
                    result["is_error"] = json!(true);
                }
                results.push(result);
            }
            PartData::Other => {}
            other => return Err(unsupported("user", other)),
        }
    }
    // Tool results must open a user message.
    results.extend(blocks);
    Ok(results)
}

/// An `image` block for an image, a `document` block for a PDF, an error for anything else.
fn media_block(mime_type: &str, source: Value) -> Result<Value, Error> {
    if parts::is_image(mime_type) {
        return Ok(json!({"type": "image", "source": source}));
    }
    if mime_type.eq_ignore_ascii_case("application/pdf") {
        return Ok(json!({"type": "document", "source": source}));
    }
    Err(Error::config(format!(
        "the Anthropic adapter sends images ({}) and PDF documents but not {mime_type}; convert it to text first, or use Gemini",
        parts::IMAGE_TYPES.join(", ")
    )))
}

fn unsupported(role: &str, data: &PartData) -> Error {
    let kind = match data {
        PartData::ExecutableCode(_) => "executable code",
        PartData::CodeExecutionResult(_) => "a code execution result",
        PartData::FunctionResponse(_) => "a function response",
        PartData::InlineData(_) | PartData::FileData(_) => "a file",
        _ => "this kind of part",
    };
    Error::config(format!(
        "the Anthropic adapter sends text, images, documents, tool calls and tool results; a {role} content holds {kind}, which it cannot send there; remove that part or use Gemini"
    ))
}

fn cache_control(cache: &ContextCacheConfig) -> Value {
    json!({"type": "ephemeral", "ttl": cache.anthropic_ttl()})
}

/// Puts a `cache_control` breakpoint on the last block of the stable prefix (everything but the
/// newest user turn's last block), or on the system prompt when the conversation is one block,
/// when the prefix is long enough to be worth caching.
fn mark_stable_prefix(body: &mut MessagesRequest<'_>, cache: &ContextCacheConfig) {
    let mut chars = body
        .system
        .as_ref()
        .and_then(Value::as_str)
        .map_or(0, str::len)
        + body
            .tools
            .iter()
            .map(|tool| tool.to_string().len())
            .sum::<usize>();
    let total: usize = body
        .messages
        .iter()
        .map(|message| message.content.len())
        .sum();
    // The blocks before the newest one, in order; a thinking block cannot carry a breakpoint.
    let mut target = None;
    let mut seen = 0;
    for (message_index, message) in body.messages.iter().enumerate() {
        for (block_index, block) in message.content.iter().enumerate() {
            seen += 1;
            if seen >= total {
                break;
            }
            chars += block.to_string().len();
            let markable = !matches!(
                block["type"].as_str(),
                Some("thinking" | "redacted_thinking")
            );
            if markable {
                target = Some((message_index, block_index));
            }
        }
    }
    if !cache.worth_caching(chars) {
        return;
    }
    let control = cache_control(cache);
    match target {
        Some((message, block)) => {
            body.messages[message].content[block]["cache_control"] = control;
        }
        None => {
            if let Some(Value::String(text)) = body.system.take() {
                body.system =
                    Some(json!([{"type": "text", "text": text, "cache_control": control}]));
            } else if let Some(tool) = body.tools.last_mut() {
                tool["cache_control"] = control;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{FunctionDeclaration, FunctionResponse};

    fn options() -> Options {
        Options {
            default_max_tokens: 1024,
            cache: None,
        }
    }

    fn body(request: &LlmRequest, options: &Options) -> Value {
        serde_json::from_slice(&build(request, "claude", false, options).unwrap()).unwrap()
    }

    fn round_trip() -> LlmRequest {
        let call = FunctionCall::new("sum", json!({"a": 1})).with_id("toolu_1");
        let mut thought = Part::thought("add them");
        thought
            .extra
            .insert(ANTHROPIC_SIGNATURE.into(), json!("c2ln"));
        let mut request = LlmRequest::new(
            "claude",
            vec![
                Content::user("add"),
                Content::new(
                    Role::Model,
                    [thought, Part::text("On it."), Part::function_call(call)],
                ),
                Content::new(
                    Role::User,
                    [Part::function_response(
                        FunctionResponse::new("sum", json!(1)).with_id("toolu_1"),
                    )],
                ),
            ],
        );
        request.append_instructions(["Be exact."]);
        request.append_tools([FunctionDeclaration::new("sum", "adds")]);
        request
    }

    #[test]
    fn a_tool_round_trip_keeps_the_signed_thinking_and_answers_in_one_user_message() {
        assert_eq!(
            body(&round_trip(), &options()),
            json!({
                "model": "claude",
                "max_tokens": 1024,
                "system": "Be exact.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "add"}]},
                    {"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "add them", "signature": "c2ln"},
                        {"type": "text", "text": "On it."},
                        {"type": "tool_use", "id": "toolu_1", "name": "sum", "input": {"a": 1}}
                    ]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"}]}
                ],
                "tools": [{"name": "sum", "description": "adds", "input_schema": {"type": "object", "properties": {}}}]
            })
        );
    }

    #[test]
    fn foreign_thoughts_are_not_sent_and_unanswered_calls_are_answered() {
        let call = |id: &str| Part::function_call(FunctionCall::new("f", json!({})).with_id(id));
        let mut gemini_thought = Part::thought("hmm");
        gemini_thought.thought_signature = Some(bytes::Bytes::from_static(b"\x01\x02"));
        let request = LlmRequest::new(
            "claude",
            vec![
                Content::user("go"),
                Content::new(Role::Model, [gemini_thought, call("a"), call("b")]),
                Content::new(
                    Role::User,
                    [Part::function_response(
                        FunctionResponse::new("f", json!({"error": "down"})).with_id("b"),
                    )],
                ),
                Content::user("next"),
            ],
        );
        let sent = body(&request, &options());
        let messages = sent["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{sent}");
        assert_eq!(messages[1]["content"][0]["type"], "tool_use");
        let results = &messages[2]["content"];
        assert_eq!(results[0]["tool_use_id"], "a");
        assert_eq!(results[0]["is_error"], true);
        assert_eq!(results[1]["tool_use_id"], "b");
        assert_eq!(results[1]["is_error"], true);
        assert_eq!(results[2], json!({"type": "text", "text": "next"}));
    }

    #[test]
    fn settings_it_cannot_honour_are_errors() {
        let mut request = LlmRequest::new("claude", vec![Content::user("hi")]);
        request.config.seed = Some(1);
        let error = build(&request, "claude", false, &options()).unwrap_err();
        assert!(error.to_string().contains("`seed`"), "{error}");
        let mut request = LlmRequest::new("claude", vec![Content::user("hi")]);
        request.config.response_mime_type = Some("application/json".into());
        assert!(build(&request, "claude", false, &options()).is_err());
        let mut request = LlmRequest::new("claude", vec![Content::user("hi")]);
        let mut thinking = ThinkingConfig::default();
        thinking.thinking_level = Some(adk_core::ThinkingLevel::High);
        request.config.thinking_config = Some(thinking);
        assert!(build(&request, "claude", false, &options()).is_err());
        let audio = Content::new(Role::User, [Part::inline_data("audio/wav", vec![0u8])]);
        let error = build(
            &LlmRequest::new("claude", vec![audio]),
            "claude",
            false,
            &options(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("audio/wav"), "{error}");
    }

    #[test]
    fn the_stable_prefix_gets_one_breakpoint_when_long_enough() {
        let cached = Options {
            cache: Some(ContextCacheConfig::default()),
            ..options()
        };
        let sent = body(&round_trip(), &cached);
        // The newest block (the tool result) is not cached; the tool call before it is the end.
        assert_eq!(
            sent["messages"][1]["content"][2]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        let marks = sent.to_string().matches("cache_control").count();
        assert_eq!(marks, 1);
        let single = LlmRequest::new("claude", vec![Content::user("hi")]);
        let mut single = single;
        single.append_instructions(["Long stable instructions."]);
        let sent = body(&single, &cached);
        assert_eq!(sent["system"][0]["cache_control"]["type"], "ephemeral");
        let picky = Options {
            cache: Some(ContextCacheConfig::default().min_tokens(100_000)),
            ..options()
        };
        assert!(
            !body(&round_trip(), &picky)
                .to_string()
                .contains("cache_control")
        );
        let automatic = Options {
            cache: Some(
                ContextCacheConfig::default()
                    .mode(CacheMode::Automatic)
                    .ttl(std::time::Duration::from_secs(300)),
            ),
            ..options()
        };
        assert_eq!(
            body(&round_trip(), &automatic)["cache_control"],
            json!({"type": "ephemeral", "ttl": "5m"})
        );
    }
}
