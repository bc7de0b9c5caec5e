//! An [`LlmRequest`] written as an OpenAI Responses request body (`POST /v1/responses`).

use adk_core::{
    Content, FunctionCallingMode, LlmRequest, Part, PartData, Role, ThinkingConfig, ThinkingLevel,
};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::cache::{CacheMode, ContextCacheConfig};
use crate::error::Error;
use crate::parts::{self, INTERRUPTED_CALL_RESULT};
use crate::provider_data::{OPENAI_ITEM_ID, OPENAI_REASONING};

/// Per-model choices that the request types of adk-core do not carry.
#[derive(Debug, Clone, Default)]
pub(super) struct Options {
    pub(super) strict_tools: bool,
    pub(super) strict_response_schema: bool,
    /// `store: false`: nothing is kept server-side, so reasoning goes back encrypted.
    pub(super) store: Option<bool>,
    /// Ask for reasoning items' `encrypted_content`, to send them back.
    pub(super) encrypted_reasoning: bool,
    /// `reasoning.summary` when thoughts are asked for (`auto`, `concise`, `detailed`).
    pub(super) reasoning_summary: Option<String>,
    pub(super) service_tier: Option<String>,
    pub(super) prompt_cache_key: Option<String>,
    pub(super) cache: Option<ContextCacheConfig>,
}

#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service_tier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_options: Option<Value>,
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
    let encrypted = options.encrypted_reasoning || options.store == Some(false);
    let mut body = ResponsesRequest {
        model,
        input: input(&request.contents)?,
        instructions: request
            .system_instruction
            .as_deref()
            .filter(|text| !text.is_empty()),
        tools: request
            .tools
            .iter()
            .map(|declaration| {
                let mut tool = json!({"type": "function", "name": declaration.name});
                if !declaration.description.is_empty() {
                    tool["description"] = json!(declaration.description);
                }
                tool["parameters"] = declaration
                    .parameters
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                match declaration.strict {
                    Some(strict) => tool["strict"] = json!(strict),
                    None if options.strict_tools => tool["strict"] = json!(true),
                    None => {}
                }
                tool
            })
            .collect(),
        tool_choice: tool_choice(request)?,
        text: text_format(request, options)?,
        stream,
        temperature: config.temperature,
        top_p: config.top_p,
        max_output_tokens: config.max_output_tokens,
        reasoning: config
            .thinking_config
            .as_ref()
            .map(|thinking| reasoning(thinking, options))
            .transpose()?,
        include: if encrypted {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        store: options.store,
        service_tier: options.service_tier.as_deref(),
        prompt_cache_key: options.prompt_cache_key.as_deref(),
        prompt_cache_options: None,
    };
    if let Some(cache) = options
        .cache
        .as_ref()
        .filter(|cache| cache.mode == CacheMode::Explicit)
        && mark_stable_prefix(&mut body.input, cache, &body.tools, body.instructions)
    {
        body.prompt_cache_options = Some(json!({"mode": "explicit", "ttl": cache.ttl_text()}));
    }
    serde_json::to_vec(&body)
        .map(bytes::Bytes::from)
        .map_err(|error| {
            Error::config(format!("the request could not be written as JSON: {error}"))
                .with_source(error)
        })
}

/// Settings the Responses API has no place for: an error naming each, never dropped.
fn refuse_unsupported(request: &LlmRequest) -> Result<(), Error> {
    let config = &request.config;
    let refused = [
        (!config.safety_settings.is_empty(), "`safety_settings`"),
        (config.top_k.is_some(), "`top_k`"),
        (!config.stop_sequences.is_empty(), "`stop_sequences`"),
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
            "the OpenAI Responses API has no {name}; remove it from the config"
        )));
    }
    if !request.builtin_tools.is_empty() {
        return Err(Error::config(format!(
            "the Responses adapter cannot run the provider tools {:?}; remove them or use Gemini",
            request.builtin_tools
        )));
    }
    Ok(())
}

/// `reasoning`: the effort from the thinking level, and a summary when thoughts are asked for.
fn reasoning(thinking: &ThinkingConfig, options: &Options) -> Result<Value, Error> {
    if thinking.thinking_budget.is_some() {
        return Err(Error::config(
            "the Responses API takes a reasoning effort, not a token budget; set `thinking_level` instead of `thinking_budget`",
        ));
    }
    let mut reasoning = Map::new();
    if let Some(level) = thinking.thinking_level {
        let effort = match level {
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            other => {
                return Err(Error::config(format!(
                    "the thinking level {other:?} has no reasoning effort; use MINIMAL, LOW, MEDIUM or HIGH"
                )));
            }
        };
        reasoning.insert("effort".into(), json!(effort));
    }
    if thinking.include_thoughts == Some(true) {
        let summary = options.reasoning_summary.as_deref().unwrap_or("auto");
        reasoning.insert("summary".into(), json!(summary));
    }
    Ok(Value::Object(reasoning))
}

fn text_format(request: &LlmRequest, options: &Options) -> Result<Option<Value>, Error> {
    let config = &request.config;
    if let Some(schema) = &config.response_schema {
        let name = schema
            .get("title")
            .and_then(Value::as_str)
            .filter(|title| {
                title
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .unwrap_or("response");
        let mut format = json!({
            "type": "json_schema",
            "name": name,
            "schema": schema,
            "strict": options.strict_response_schema,
        });
        if let Some(description) = schema.get("description").and_then(Value::as_str) {
            format["description"] = json!(description);
        }
        return Ok(Some(json!({"format": format})));
    }
    match config.response_mime_type.as_deref() {
        None | Some("text/plain") => Ok(None),
        Some("application/json") => Ok(Some(json!({"format": {"type": "json_object"}}))),
        Some(other) => Err(Error::config(format!(
            "the Responses API answers in text or JSON, not `{other}`; use application/json or text/plain"
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
        Some(FunctionCallingMode::Auto) => Some(json!("auto")),
        Some(FunctionCallingMode::None) => Some(json!("none")),
        Some(FunctionCallingMode::Any) => match calling.allowed_function_names.as_slice() {
            [] => Some(json!("required")),
            [name] => Some(json!({"type": "function", "name": name})),
            _ => {
                return Err(Error::config(
                    "the Responses API can force one named function or any function, not a list; allow one name or none",
                ));
            }
        },
        Some(other) => {
            return Err(Error::config(format!(
                "the function-calling mode {other:?} has no Responses equivalent; use AUTO, ANY or NONE"
            )));
        }
    })
}

/// The input items: messages, the model's reasoning, calls and call outputs, in order, with every
/// call answered.
fn input(contents: &[Content]) -> Result<Vec<Value>, Error> {
    let mut items = Vec::with_capacity(contents.len());
    for content in contents {
        match content.role {
            Some(Role::Model) => model_items(content, &mut items)?,
            Some(Role::User) | None => user_items(content, &mut items)?,
        }
    }
    Ok(answer_interrupted_calls(items))
}

/// Adds a `function_call_output` for each call that no output answers before the next message: a
/// history can hold such a call when a run was cancelled after the call was stored and before its
/// result was, and the API refuses the request otherwise.
fn answer_interrupted_calls(items: Vec<Value>) -> Vec<Value> {
    let mut complete = Vec::with_capacity(items.len());
    let mut unanswered: Vec<String> = Vec::new();
    let output = |call_id: String| json!({"type": "function_call_output", "call_id": call_id, "output": INTERRUPTED_CALL_RESULT});
    for item in items {
        match item["type"].as_str() {
            Some("function_call") => {
                unanswered.extend(item["call_id"].as_str().map(str::to_owned));
            }
            Some("function_call_output") => {
                unanswered.retain(|id| item["call_id"].as_str() != Some(id));
            }
            Some("reasoning") => {}
            _ => complete.extend(unanswered.drain(..).map(output)),
        }
        complete.push(item);
    }
    complete.extend(unanswered.into_iter().map(output));
    complete
}

fn model_items(content: &Content, items: &mut Vec<Value>) -> Result<(), Error> {
    let mut text = String::new();
    let flush = |text: &mut String, items: &mut Vec<Value>| {
        if !text.is_empty() {
            items.push(json!({"role": "assistant", "content": std::mem::take(text)}));
        }
    };
    for part in &content.parts {
        if part.thought {
            // Only the Responses API's own reasoning items go back; other providers' thoughts
            // have no place in its input.
            if let Some(reasoning) = part.extra.get(OPENAI_REASONING) {
                flush(&mut text, items);
                items.push(reasoning.clone());
            }
            continue;
        }
        match &part.data {
            PartData::Text(piece) => text.push_str(piece),
            PartData::FunctionCall(call) => {
                flush(&mut text, items);
                let id = call.id.as_ref().ok_or_else(|| {
                    Error::config(format!(
                        "the function call `{}` has no id, and the Responses API needs one to pair it with its output; give calls ids",
                        call.name
                    ))
                })?;
                let mut item = json!({
                    "type": "function_call",
                    "call_id": id.as_str(),
                    "name": call.name,
                    "arguments": arguments(&call.args),
                });
                if let Some(item_id) = part.extra.get(OPENAI_ITEM_ID) {
                    item["id"] = item_id.clone();
                }
                items.push(item);
            }
            PartData::Other => {}
            other => return Err(unsupported("model", other)),
        }
    }
    flush(&mut text, items);
    Ok(())
}

/// The arguments as the JSON text the API carries; arguments that were not a JSON object when they
/// arrived go back as they came.
fn arguments(args: &Map<String, Value>) -> String {
    if let (1, Some(Value::String(raw))) = (args.len(), args.get(crate::RAW_ARGUMENTS_KEY)) {
        return raw.clone();
    }
    Value::Object(args.clone()).to_string()
}

/// The function responses of a user content as `function_call_output` items, then its text and
/// images as one message: a string when it is one text, else `input_text` / `input_image` parts.
fn user_items(content: &Content, items: &mut Vec<Value>) -> Result<(), Error> {
    let mut message = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) if text.is_empty() => {}
            PartData::Text(text) => message.push(json!({"type": "input_text", "text": text})),
            PartData::InlineData(blob) => {
                let url = format!(
                    "data:{};base64,{}",
                    blob.mime_type,
                    base64::engine::general_purpose::STANDARD.encode(&blob.data)
                );
                message.push(file_part(&blob.mime_type, url)?);
            }
            PartData::FileData(file) => {
                if !parts::is_web_or_data_url(&file.file_uri) {
                    return Err(Error::config(format!(
                        "the Responses adapter sends files by URL only (http, https or data); `{}` is neither; load its bytes into an inline part instead",
                        file.file_uri
                    )));
                }
                let mime_type = file.mime_type.as_deref().unwrap_or("an unknown type");
                message.push(file_part(mime_type, file.file_uri.clone())?);
            }
            PartData::FunctionResponse(response) => {
                let id = response.id.as_ref().ok_or_else(|| {
                    Error::config(format!(
                        "the function response of `{}` has no id, and the Responses API needs the id of the call it answers",
                        response.name
                    ))
                })?;
                items.push(json!({
                    "type": "function_call_output",
                    "call_id": id.as_str(),
                    "output": parts::result_text(response),
                }));
            }
            PartData::Other => {}
            other => return Err(unsupported("user", other)),
        }
    }
    let content = match message.as_slice() {
        [] => return Ok(()),
        [part] if part["type"] == "input_text" => part["text"].clone(),
        _ => Value::Array(message),
    };
    items.push(json!({"role": "user", "content": content}));
    Ok(())
}

/// An `input_image` part for an image, an `input_file` part for a PDF, an error for anything
/// else.
fn file_part(mime_type: &str, url: String) -> Result<Value, Error> {
    if parts::is_image(mime_type) {
        return Ok(json!({"type": "input_image", "image_url": url}));
    }
    if mime_type.eq_ignore_ascii_case("application/pdf") {
        return Ok(if url.starts_with("data:") {
            json!({"type": "input_file", "filename": "document.pdf", "file_data": url})
        } else {
            json!({"type": "input_file", "file_url": url})
        });
    }
    Err(Error::config(format!(
        "the Responses adapter sends images ({}) and PDF documents but not {mime_type}; convert it first, or use Gemini",
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
        "the Responses adapter sends text, images, documents, function calls and their outputs; a {role} content holds {kind}, which it cannot send there; remove that part or use Gemini"
    ))
}

/// Marks the end of the stable prefix (every input but the newest message's last part) with a
/// `prompt_cache_breakpoint` on the last text part before it, when the prefix is long enough;
/// says whether it marked one.
fn mark_stable_prefix(
    input: &mut [Value],
    cache: &ContextCacheConfig,
    tools: &[Value],
    instructions: Option<&str>,
) -> bool {
    // Every text part of the messages, in order, as (item, part) positions; a string content is
    // one part.
    let mut texts: Vec<(usize, Option<usize>, usize)> = Vec::new();
    for (index, item) in input.iter().enumerate() {
        match &item["content"] {
            Value::String(text) => texts.push((index, None, text.len())),
            Value::Array(content) => {
                for (part_index, part) in content.iter().enumerate() {
                    if let Some(text) = part["text"].as_str() {
                        texts.push((index, Some(part_index), text.len()));
                    }
                }
            }
            _ => {}
        }
    }
    // The newest text is the question; the prefix ends with the text before it.
    texts.pop();
    let Some(&(item, part, _)) = texts.last() else {
        return false;
    };
    let chars = instructions.map_or(0, str::len)
        + tools
            .iter()
            .map(|tool| tool.to_string().len())
            .sum::<usize>()
        + texts.iter().map(|(_, _, len)| len).sum::<usize>();
    if !cache.worth_caching(chars) {
        return false;
    }
    let kind = if input[item]["role"] == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    let content = &mut input[item]["content"];
    let breakpoint = json!({"mode": "explicit"});
    match part {
        Some(part) => content[part]["prompt_cache_breakpoint"] = breakpoint,
        None => {
            let text = content.take();
            *content = json!([{"type": kind, "text": text, "prompt_cache_breakpoint": breakpoint}]);
        }
    }
    true
}

/// The part a reasoning item of an answer becomes: its summary as thought text, the item kept
/// whole to go back in the next request.
pub(super) fn reasoning_part(item: &Value) -> Part {
    let summary: Vec<&str> = item["summary"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect();
    let mut part = Part::thought(summary.join("\n\n"));
    let mut kept = item.clone();
    // The status is output-only.
    if let Some(object) = kept.as_object_mut() {
        object.remove("status");
    }
    part.extra.insert(OPENAI_REASONING.into(), kept);
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{FunctionCall, FunctionDeclaration, FunctionResponse};

    fn body(request: &LlmRequest, options: &Options) -> Value {
        serde_json::from_slice(&build(request, "gpt", false, options).unwrap()).unwrap()
    }

    #[test]
    fn a_round_trip_sends_reasoning_calls_and_outputs_in_order() {
        let mut call =
            Part::function_call(FunctionCall::new("sum", json!({"a": 1})).with_id("call_1"));
        call.extra.insert(OPENAI_ITEM_ID.into(), json!("fc_1"));
        let reasoning = reasoning_part(&json!({
            "type": "reasoning", "id": "rs_1", "status": "completed",
            "summary": [{"type": "summary_text", "text": "Add."}], "encrypted_content": "gAAA"
        }));
        let mut request = LlmRequest::new(
            "gpt",
            vec![
                Content::user("add"),
                Content::new(Role::Model, [reasoning, call]),
                Content::new(
                    Role::User,
                    [Part::function_response(
                        FunctionResponse::new("sum", json!(1)).with_id("call_1"),
                    )],
                ),
            ],
        );
        request.append_instructions(["Be exact."]);
        request.append_tools([FunctionDeclaration::new("sum", "adds")]);
        let options = Options {
            store: Some(false),
            ..Options::default()
        };
        assert_eq!(
            body(&request, &options),
            json!({
                "model": "gpt",
                "instructions": "Be exact.",
                "input": [
                    {"role": "user", "content": "add"},
                    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Add."}], "encrypted_content": "gAAA"},
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "sum", "arguments": "{\"a\":1}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "1"}
                ],
                "tools": [{"type": "function", "name": "sum", "description": "adds", "parameters": {"type": "object", "properties": {}}}],
                "include": ["reasoning.encrypted_content"],
                "store": false
            })
        );
    }

    #[test]
    fn unanswered_calls_get_an_interrupted_output_and_refused_settings_fail() {
        let call = Part::function_call(FunctionCall::new("f", json!({})).with_id("c"));
        let request = LlmRequest::new(
            "gpt",
            vec![Content::new(Role::Model, [call]), Content::user("next")],
        );
        let sent = body(&request, &Options::default());
        assert_eq!(sent["input"][1]["type"], "function_call_output");
        assert_eq!(sent["input"][1]["call_id"], "c");
        assert_eq!(sent["input"][2]["content"], "next");
        for change in [
            |request: &mut LlmRequest| request.config.top_k = Some(3),
            |request: &mut LlmRequest| request.config.stop_sequences = vec!["x".into()],
            |request: &mut LlmRequest| {
                let mut thinking = ThinkingConfig::default();
                thinking.thinking_budget = Some(100);
                request.config.thinking_config = Some(thinking);
            },
        ] {
            let mut request = LlmRequest::new("gpt", vec![Content::user("hi")]);
            change(&mut request);
            let error = build(&request, "gpt", false, &Options::default()).unwrap_err();
            assert_eq!(error.kind(), crate::ErrorKind::Config, "{error}");
        }
    }

    #[test]
    fn the_stable_prefix_ends_before_the_newest_text() {
        let request = LlmRequest::new(
            "gpt",
            vec![Content::new(
                Role::User,
                [
                    Part::text("a long stable document"),
                    Part::text("the question"),
                ],
            )],
        );
        let options = Options {
            cache: Some(ContextCacheConfig::default()),
            prompt_cache_key: Some("k".into()),
            ..Options::default()
        };
        let sent = body(&request, &options);
        assert_eq!(
            sent["input"][0]["content"][0]["prompt_cache_breakpoint"],
            json!({"mode": "explicit"})
        );
        assert!(
            sent["input"][0]["content"][1]
                .get("prompt_cache_breakpoint")
                .is_none()
        );
        assert_eq!(
            sent["prompt_cache_options"],
            json!({"mode": "explicit", "ttl": "30m"})
        );
        assert_eq!(sent["prompt_cache_key"], "k");
        let single = LlmRequest::new("gpt", vec![Content::user("hi")]);
        assert!(
            body(&single, &options)
                .get("prompt_cache_options")
                .is_none()
        );
    }
}
