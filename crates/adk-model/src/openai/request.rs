//! An [`LlmRequest`] written as a Chat Completions request body.

use adk_core::{
    Content, FunctionCall, FunctionCallingMode, FunctionResponse, LlmRequest, PartData, Role,
    ThinkingLevel,
};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::response::RAW_ARGUMENTS_KEY;
use crate::error::Error;

/// Per-model choices that the request types of adk-core do not carry.
#[derive(Debug, Clone, Default)]
pub(super) struct Options {
    pub(super) strict_tools: bool,
    pub(super) strict_response_schema: bool,
    /// Tools described in the system instruction instead of sent natively (see `prompted.rs`).
    pub(super) prompted_tools: bool,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    /// Not in OpenAI's API, but vLLM, llama.cpp and Ollama take it; OpenAI itself rejects it with
    /// a 400 naming the field rather than ignoring it.
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

#[derive(Serialize)]
struct Message {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
}

impl Message {
    fn new(role: &'static str, content: Option<Value>) -> Self {
        Self {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// The JSON body for `request` sent to `model`.
pub(super) fn build(
    request: &LlmRequest,
    model: &str,
    stream: bool,
    options: &Options,
) -> Result<bytes::Bytes, Error> {
    let config = &request.config;
    if !config.safety_settings.is_empty() {
        return Err(Error::config(
            "Chat Completions has no safety settings; remove `safety_settings` from the config",
        ));
    }
    if !request.builtin_tools.is_empty() {
        return Err(Error::config(format!(
            "Chat Completions cannot run the provider tools {:?}; remove them or use Gemini",
            request.builtin_tools
        )));
    }
    let reasoning_effort = match &config.thinking_config {
        None => None,
        Some(thinking) => {
            if thinking.include_thoughts == Some(true) || thinking.thinking_budget.is_some() {
                return Err(Error::config(
                    "Chat Completions returns no thoughts and takes no thinking budget; set only `thinking_level`, which is sent as `reasoning_effort`",
                ));
            }
            thinking.thinking_level.map(reasoning_effort).transpose()?
        }
    };
    let body = ChatRequest {
        model,
        messages: messages(request)?,
        tools: request
            .tools
            .iter()
            .map(|declaration| {
                let mut function =
                    json!({"name": declaration.name, "description": declaration.description});
                if let Some(parameters) = &declaration.parameters {
                    function["parameters"] = Value::clone(parameters);
                }
                // A tool's own choice wins over the adapter's default.
                match declaration.strict {
                    Some(strict) => function["strict"] = json!(strict),
                    None if options.strict_tools => function["strict"] = json!(true),
                    None => {}
                }
                json!({"type": "function", "function": function})
            })
            .collect(),
        tool_choice: tool_choice(request)?,
        response_format: response_format(request, options)?,
        stream,
        stream_options: stream.then(|| json!({"include_usage": true})),
        temperature: config.temperature,
        top_p: config.top_p,
        top_k: config.top_k,
        max_completion_tokens: config.max_output_tokens,
        stop: &config.stop_sequences,
        n: config.candidate_count,
        seed: config.seed,
        presence_penalty: config.presence_penalty,
        frequency_penalty: config.frequency_penalty,
        reasoning_effort,
    };
    serde_json::to_vec(&body)
        .map(bytes::Bytes::from)
        .map_err(|error| {
            Error::config(format!("the request could not be written as JSON: {error}"))
                .with_source(error)
        })
}

fn reasoning_effort(level: ThinkingLevel) -> Result<&'static str, Error> {
    Ok(match level {
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        other => {
            return Err(Error::config(format!(
                "the thinking level {other:?} has no `reasoning_effort` equivalent; use LOW, MEDIUM or HIGH"
            )));
        }
    })
}

/// What a call that never got its response answers in the request: Chat Completions refuses a
/// request whose assistant tool calls are not each followed by a `tool` message.
const INTERRUPTED_CALL_RESULT: &str = "{\"error\":\"This tool call was interrupted before it gave a \
     result (the run was cancelled or failed); it may or may not have taken effect.\"}";

/// The system instruction, then one message per content: the user's text, the model's text and
/// tool calls, and one `tool` message per function response.
fn messages(request: &LlmRequest) -> Result<Vec<Message>, Error> {
    let mut messages = Vec::with_capacity(request.contents.len() + 1);
    if let Some(system) = request
        .system_instruction
        .as_ref()
        .filter(|text| !text.is_empty())
    {
        messages.push(Message::new("system", Some(json!(system))));
    }
    for content in request.contents.iter() {
        match content.role {
            Some(Role::Model) => messages.push(assistant_message(content)?),
            Some(Role::User) | None => user_messages(content, &mut messages)?,
        }
    }
    Ok(answer_interrupted_calls(messages))
}

/// Adds, after each assistant message with tool calls, a `tool` message for every call that the
/// `tool` messages right after it do not answer. A history can hold such a call when a run was
/// cancelled (or crashed) after the call was stored and before its result was; without an answer
/// every later request of the session would be refused with HTTP 400.
fn answer_interrupted_calls(messages: Vec<Message>) -> Vec<Message> {
    let mut complete = Vec::with_capacity(messages.len());
    let mut unanswered: Vec<String> = Vec::new();
    for message in messages {
        if message.role == "tool" {
            unanswered.retain(|id| Some(id) != message.tool_call_id.as_ref());
        } else {
            complete.extend(unanswered.drain(..).map(interrupted_call_message));
            unanswered = message
                .tool_calls
                .iter()
                .filter_map(|call| call["id"].as_str().map(str::to_owned))
                .collect();
        }
        complete.push(message);
    }
    complete.extend(unanswered.into_iter().map(interrupted_call_message));
    complete
}

fn interrupted_call_message(id: String) -> Message {
    let mut message = Message::new("tool", Some(json!(INTERRUPTED_CALL_RESULT)));
    message.tool_call_id = Some(id);
    message
}

fn assistant_message(content: &Content) -> Result<Message, Error> {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) => texts.push(text.as_str()),
            PartData::FunctionCall(call) => tool_calls.push(tool_call(call)?),
            // A part holding only a thought signature means nothing to Chat Completions.
            PartData::Other => {}
            other => return Err(unsupported("model", other)),
        }
    }
    let content = (!texts.is_empty() || tool_calls.is_empty()).then(|| json!(texts.concat()));
    let mut message = Message::new("assistant", content);
    message.tool_calls = tool_calls;
    Ok(message)
}

/// The function responses of a user content as `tool` messages, then its text and images as one
/// `user` message: a plain string when it is one text, else an array of content parts in order.
fn user_messages(content: &Content, messages: &mut Vec<Message>) -> Result<(), Error> {
    let mut parts = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) => parts.push(json!({"type": "text", "text": text})),
            PartData::InlineData(blob) => {
                let url = format!(
                    "data:{};base64,{}",
                    blob.mime_type,
                    base64::engine::general_purpose::STANDARD.encode(&blob.data)
                );
                parts.push(image_part(&blob.mime_type, url)?);
            }
            PartData::FileData(file) => {
                let mime_type = file.mime_type.as_deref().unwrap_or("an unknown type");
                if !is_web_or_data_url(&file.file_uri) {
                    return Err(Error::config(format!(
                        "the OpenAI adapter sends files by URL only (http, https or data); `{}` is neither; load its bytes into an inline part instead",
                        file.file_uri
                    )));
                }
                parts.push(image_part(mime_type, file.file_uri.clone())?);
            }
            PartData::FunctionResponse(response) => messages.push(tool_message(response)?),
            PartData::Other => {}
            other => return Err(unsupported("user", other)),
        }
    }
    let content = match parts.as_slice() {
        [] => return Ok(()),
        [part] if part["type"] == "text" => part["text"].clone(),
        _ => Value::Array(parts),
    };
    messages.push(Message::new("user", Some(content)));
    Ok(())
}

/// The MIME types Chat Completions takes as `image_url` parts.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// An `image_url` content part for an image of `mime_type` at `url`; any other kind of file is an
/// error that names it, since Chat Completions (and the servers that copy it) cannot take it.
fn image_part(mime_type: &str, url: String) -> Result<Value, Error> {
    let normalized = mime_type.to_ascii_lowercase();
    if !IMAGE_TYPES.contains(&normalized.as_str()) {
        return Err(Error::config(format!(
            "the OpenAI adapter sends images ({}) but not {mime_type}: Chat Completions has no part for it; convert it to text or an image first, or use Gemini",
            IMAGE_TYPES.join(", ")
        )));
    }
    Ok(json!({"type": "image_url", "image_url": {"url": url}}))
}

fn is_web_or_data_url(uri: &str) -> bool {
    ["http://", "https://", "data:"].iter().any(|scheme| {
        uri.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    })
}

fn unsupported(role: &str, data: &PartData) -> Error {
    let kind = match data {
        PartData::InlineData(_) => "inline data",
        PartData::FileData(_) => "a file reference",
        PartData::ExecutableCode(_) => "executable code",
        PartData::CodeExecutionResult(_) => "a code execution result",
        _ => "this kind of part",
    };
    Error::config(format!(
        "the OpenAI adapter sends text, images, function calls and function responses; a {role} content holds {kind}, which it cannot send; remove that part or use Gemini"
    ))
}

fn tool_call(call: &FunctionCall) -> Result<Value, Error> {
    let id = call.id.as_ref().ok_or_else(|| {
        Error::config(format!(
            "the function call `{}` has no id, and Chat Completions needs one to pair it with its response; give calls ids",
            call.name
        ))
    })?;
    Ok(json!({
        "id": id.as_str(),
        "type": "function",
        "function": {"name": call.name, "arguments": arguments(&call.args)},
    }))
}

/// The arguments as the JSON text OpenAI carries; arguments that were not a JSON object when they
/// arrived are sent back as they came.
fn arguments(args: &Map<String, Value>) -> String {
    if let (1, Some(Value::String(raw))) = (args.len(), args.get(RAW_ARGUMENTS_KEY)) {
        return raw.clone();
    }
    Value::Object(args.clone()).to_string()
}

fn tool_message(response: &FunctionResponse) -> Result<Message, Error> {
    let id = response.id.as_ref().ok_or_else(|| {
        Error::config(format!(
            "the function response of `{}` has no id, and Chat Completions needs the id of the call it answers",
            response.name
        ))
    })?;
    // ADK wraps a non-object result as {"result": ...}; send such a result as itself.
    let content = match (response.response.len(), response.response.get("result")) {
        (1, Some(Value::String(text))) => text.clone(),
        (1, Some(value)) => value.to_string(),
        _ => Value::Object(response.response.clone()).to_string(),
    };
    let mut message = Message::new("tool", Some(json!(content)));
    message.tool_call_id = Some(id.as_str().to_owned());
    Ok(message)
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
    let names = &calling.allowed_function_names;
    Ok(match calling.mode {
        None => None,
        Some(FunctionCallingMode::Auto) => Some(json!("auto")),
        Some(FunctionCallingMode::None) => Some(json!("none")),
        Some(FunctionCallingMode::Any) => match names.as_slice() {
            [] => Some(json!("required")),
            [name] => Some(json!({"type": "function", "function": {"name": name}})),
            _ => {
                return Err(Error::config(
                    "Chat Completions can force one named function or any function, not a list; allow one name or none",
                ));
            }
        },
        Some(other) => {
            return Err(Error::config(format!(
                "the function-calling mode {other:?} has no Chat Completions equivalent; use AUTO, ANY or NONE"
            )));
        }
    })
}

fn response_format(request: &LlmRequest, options: &Options) -> Result<Option<Value>, Error> {
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
        let mut json_schema =
            json!({"name": name, "schema": schema, "strict": options.strict_response_schema});
        // The schema's own description tells the model what the answer is for.
        if let Some(description) = schema.get("description").and_then(Value::as_str) {
            json_schema["description"] = json!(description);
        }
        return Ok(Some(
            json!({"type": "json_schema", "json_schema": json_schema}),
        ));
    }
    match config.response_mime_type.as_deref() {
        None | Some("text/plain") => Ok(None),
        Some("application/json") => Ok(Some(json!({"type": "json_object"}))),
        Some(other) => Err(Error::config(format!(
            "Chat Completions answers in text or JSON, not `{other}`; use application/json or text/plain"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{FunctionCallingConfig, FunctionDeclaration, Part, ToolConfig};

    fn body(request: &LlmRequest, stream: bool) -> Value {
        serde_json::from_slice(&build(request, "m", stream, &Options::default()).unwrap()).unwrap()
    }

    #[test]
    fn a_tool_round_trip_becomes_system_user_assistant_and_tool_messages() {
        let call = FunctionCall::new("sum", json!({"a": 1})).with_id("call_1");
        let mut request = LlmRequest::new(
            "m",
            vec![
                Content::user("add"),
                Content::new(Role::Model, [Part::function_call(call)]),
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
        let mut tool_config = ToolConfig::default();
        tool_config.function_calling_config =
            Some(FunctionCallingConfig::new(FunctionCallingMode::Any));
        request.config.tool_config = Some(tool_config);
        assert_eq!(
            body(&request, true),
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "Be exact."},
                    {"role": "user", "content": "add"},
                    {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "sum", "arguments": "{\"a\":1}"}}]},
                    {"role": "tool", "content": "1", "tool_call_id": "call_1"}
                ],
                "tools": [{"type": "function", "function": {"name": "sum", "description": "adds"}}],
                "tool_choice": "required",
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn settings_it_cannot_honour_are_errors() {
        let mut request = LlmRequest::new("m", vec![Content::user("hi")]);
        request
            .builtin_tools
            .push(adk_core::BuiltinTool::GoogleSearch);
        assert!(build(&request, "m", false, &Options::default()).is_err());
        let mut request = LlmRequest::new("m", vec![Content::user("hi")]);
        request.config.response_mime_type = Some("text/x.enum".into());
        let error = build(&request, "m", false, &Options::default()).unwrap_err();
        assert!(error.to_string().contains("text/x.enum"), "{error}");
        let call_without_id = Content::new(
            Role::Model,
            [Part::function_call(FunctionCall::new("f", json!({})))],
        );
        let request = LlmRequest::new("m", vec![call_without_id]);
        assert!(build(&request, "m", false, &Options::default()).is_err());
    }

    fn file_part(uri: &str, mime_type: &str) -> Part {
        Part::new(PartData::FileData(adk_core::FileData {
            file_uri: uri.to_owned(),
            mime_type: Some(mime_type.to_owned()),
            display_name: None,
        }))
    }

    #[test]
    fn images_are_sent_as_image_url_parts_in_order() {
        let content = Content::new(
            Role::User,
            [
                Part::text("Artifact chart.png is:"),
                Part::inline_data("image/png", vec![0x89, b'P', b'N', b'G']),
                file_part("https://example.com/cat.jpg", "image/jpeg"),
            ],
        );
        let request = LlmRequest::new("m", vec![content]);
        assert_eq!(
            body(&request, false)["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "Artifact chart.png is:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            ]}])
        );
    }

    #[test]
    fn files_it_cannot_send_are_clear_errors() {
        let pdf = Content::new(
            Role::User,
            [Part::inline_data("application/pdf", b"%PDF-1.7".to_vec())],
        );
        let error = build(
            &LlmRequest::new("m", vec![pdf]),
            "m",
            false,
            &Options::default(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("not application/pdf"), "{error}");
        let local = Content::new(Role::User, [file_part("gs://bucket/cat.png", "image/png")]);
        let error = build(
            &LlmRequest::new("m", vec![local]),
            "m",
            false,
            &Options::default(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("gs://bucket/cat.png"), "{error}");
    }

    #[test]
    fn a_tools_own_strict_choice_wins_over_the_default() {
        let mut request = LlmRequest::new("m", vec![Content::user("hi")]);
        request.append_tools([
            FunctionDeclaration::new("lenient", "default"),
            FunctionDeclaration::new("strict", "always").with_strict(true),
            FunctionDeclaration::new("loose", "never").with_strict(false),
        ]);
        let strict = |options: &Options| -> Vec<Value> {
            let body: Value =
                serde_json::from_slice(&build(&request, "m", false, options).unwrap()).unwrap();
            body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["function"]["strict"].clone())
                .collect()
        };
        assert_eq!(
            strict(&Options::default()),
            [Value::Null, json!(true), json!(false)]
        );
        let defaults = Options {
            strict_tools: true,
            ..Options::default()
        };
        assert_eq!(strict(&defaults), [json!(true), json!(true), json!(false)]);
    }

    #[test]
    fn the_output_schema_description_is_sent() {
        let mut request = LlmRequest::new("m", vec![Content::user("hi")]);
        request.config.response_schema = Some(json!({
            "title": "Answer",
            "description": "The capital of the country asked about.",
            "type": "object",
        }));
        assert_eq!(
            body(&request, false)["response_format"]["json_schema"]["description"],
            "The capital of the country asked about."
        );
    }

    #[test]
    fn a_call_without_a_response_is_answered_as_interrupted() {
        let call = |id: &str| FunctionCall::new("f", json!({})).with_id(id);
        let request = LlmRequest::new(
            "m",
            vec![
                Content::user("go"),
                Content::new(
                    Role::Model,
                    [
                        Part::function_call(call("a")),
                        Part::function_call(call("b")),
                    ],
                ),
                Content::new(
                    Role::User,
                    [Part::function_response(
                        FunctionResponse::new("f", json!(1)).with_id("b"),
                    )],
                ),
                Content::user("next"),
                Content::new(Role::Model, [Part::function_call(call("c"))]),
            ],
        );
        let messages = body(&request, false)["messages"].clone();
        let shape: Vec<String> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|message| {
                format!(
                    "{}{}",
                    message["role"].as_str().unwrap(),
                    message["tool_call_id"]
                        .as_str()
                        .map(|id| format!(":{id}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                "user",
                "assistant",
                "tool:b",
                "tool:a",
                "user",
                "assistant",
                "tool:c"
            ]
        );
        assert!(
            messages[3]["content"]
                .as_str()
                .unwrap()
                .contains("interrupted")
        );
    }

    #[test]
    fn raw_arguments_are_sent_back_as_they_came() {
        let call = FunctionCall::new("calc", json!({RAW_ARGUMENTS_KEY: "15 * 4"})).with_id("c");
        assert_eq!(tool_call(&call).unwrap()["function"]["arguments"], "15 * 4");
    }
}
