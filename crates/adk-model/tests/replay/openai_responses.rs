//! OpenAI Responses replays: each recorded request is rebuilt as an `LlmRequest`, sent through
//! `OpenAiResponses` to the replay server, and compared with the recording as parsed JSON; the
//! responses are checked against what the recorded response bodies hold.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{
    Content, FileData, FunctionCall, FunctionCallingConfig, FunctionCallingMode,
    FunctionDeclaration, FunctionResponse, LlmRequest, Part, PartData, Role, ThinkingConfig,
    ThinkingLevel, ToolConfig,
};
use adk_model::{ContextCacheConfig, OpenAiResponses, RAW_ARGUMENTS_KEY, RetryPolicy};
use adk_test::{Exchange, MockServer};
use serde_json::{Map, Value, json};

use crate::common::{self, Outcome, assert_json_eq, canonical};

/// Replays every exchange of `name` and returns what each call gave.
async fn replay(name: &str) -> Vec<Outcome> {
    let exchanges = common::load(name);
    let server = MockServer::replay(&exchanges).await;
    let mut outcomes = Vec::new();
    for (index, exchange) in exchanges.iter().enumerate() {
        let what = format!("{name} #{index}");
        let recorded = exchange
            .request_json()
            .unwrap_or_else(|| panic!("{what}: request is not JSON"));
        let stream = recorded["stream"] == json!(true);
        let api_path = exchange
            .path
            .strip_suffix("/responses")
            .expect("a responses path");
        let model = builder(&recorded)
            .api_key("test-key")
            .base_url(format!("{}{api_path}", server.base_url()))
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        let outcome = common::run(&model, llm_request(&recorded), stream).await;

        let sent = common::received(&server, index);
        assert_eq!(sent.path, exchange.path, "{what}");
        assert_eq!(
            sent.header("authorization"),
            Some("Bearer test-key"),
            "{what}"
        );
        assert_json_eq(&normalise(sent.json()), &normalise(recorded), &what);

        check_response(&outcome, exchange, stream, &what);
        outcomes.push(outcome);
    }
    assert_eq!(
        server.remaining(),
        0,
        "{name}: every recorded response was asked for"
    );
    outcomes
}

/// The adapter settings a recorded body shows: strictness, stored or encrypted reasoning, the
/// summary asked for, the service tier and prompt caching.
fn builder(body: &Value) -> adk_model::OpenAiResponsesBuilder {
    let mut builder = OpenAiResponses::builder(body["model"].as_str().unwrap())
        .strict_response_schema(body.pointer("/text/format/strict") == Some(&json!(true)));
    let includes = body["include"].as_array().into_iter().flatten();
    if includes
        .into_iter()
        .any(|item| item == "reasoning.encrypted_content")
    {
        builder = builder.encrypted_reasoning(true);
    }
    if let Some(store) = body["store"].as_bool() {
        builder = builder.store(store);
    }
    if let Some(summary) = body.pointer("/reasoning/summary").and_then(Value::as_str) {
        builder = builder.reasoning_summary(summary);
    }
    if let Some(tier) = body["service_tier"].as_str() {
        builder = builder.service_tier(tier);
    }
    if let Some(key) = body["prompt_cache_key"].as_str() {
        builder = builder.prompt_cache_key(key);
    }
    if let Some(options) = body.get("prompt_cache_options") {
        assert_eq!(options["ttl"], "30m", "only the recorded ttl is rebuilt");
        builder =
            builder.context_cache(ContextCacheConfig::default().ttl(Duration::from_secs(1800)));
    }
    builder
}

/// The parts of a message `content`: a string, or `input_text` / `output_text` /
/// `input_image` parts.
fn message_parts(content: &Value) -> Vec<Part> {
    match content {
        Value::String(text) if text.is_empty() => Vec::new(),
        Value::String(text) => vec![Part::text(text)],
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part["type"].as_str().unwrap() {
                "input_text" | "output_text" => Part::text(part["text"].as_str().unwrap()),
                "input_image" => {
                    let url = part["image_url"].as_str().unwrap();
                    let mime_type = if url.ends_with(".png") {
                        "image/png"
                    } else {
                        "image/jpeg"
                    };
                    Part::new(PartData::FileData(FileData {
                        file_uri: url.to_owned(),
                        mime_type: Some(mime_type.to_owned()),
                        display_name: None,
                    }))
                }
                other => panic!("unexpected content part {other}"),
            })
            .collect(),
        other => panic!("unexpected content {other}"),
    }
}

/// Appends `part` to the last content when it is of `role`, else to a new content.
fn push(contents: &mut Vec<Content>, role: Role, part: Part) {
    match contents.last_mut() {
        Some(last) if last.role == Some(role) => last.parts.push(part),
        _ => contents.push(Content::new(role, [part])),
    }
}

/// The `LlmRequest` holding what a recorded Responses request body says.
fn llm_request(body: &Value) -> LlmRequest {
    let mut request = LlmRequest::default();
    if let Some(instructions) = body["instructions"]
        .as_str()
        .filter(|text| !text.is_empty())
    {
        request.append_instructions([instructions]);
    }
    let mut contents = Vec::new();
    let mut call_names: BTreeMap<String, String> = BTreeMap::new();
    for item in body["input"].as_array().unwrap() {
        match item["type"].as_str() {
            Some("function_call") => {
                let call_id = item["call_id"].as_str().unwrap();
                let name = item["name"].as_str().unwrap();
                let raw = item["arguments"].as_str().unwrap();
                let args = match serde_json::from_str(raw) {
                    Ok(Value::Object(args)) => Value::Object(args),
                    _ => json!({RAW_ARGUMENTS_KEY: raw}),
                };
                call_names.insert(call_id.to_owned(), name.to_owned());
                let mut part = Part::function_call(FunctionCall::new(name, args).with_id(call_id));
                if let Some(id) = item.get("id") {
                    part.extra.insert("openaiItemId".into(), id.clone());
                }
                push(&mut contents, Role::Model, part);
            }
            Some("function_call_output") => {
                let call_id = item["call_id"].as_str().unwrap();
                let response = FunctionResponse::new(
                    call_names[call_id].clone(),
                    json!(item["output"].as_str().unwrap()),
                )
                .with_id(call_id);
                push(&mut contents, Role::User, Part::function_response(response));
            }
            Some("reasoning") => {
                let mut part = Part::thought("");
                part.extra.insert("openaiReasoning".into(), item.clone());
                push(&mut contents, Role::Model, part);
            }
            _ => {
                let role = if item["role"] == "assistant" {
                    Role::Model
                } else {
                    Role::User
                };
                for part in message_parts(&item["content"]) {
                    push(&mut contents, role, part);
                }
            }
        }
    }
    request.contents = Arc::new(contents);
    for tool in body["tools"].as_array().into_iter().flatten() {
        let mut declaration = FunctionDeclaration::new(
            tool["name"].as_str().unwrap(),
            tool["description"].as_str().unwrap_or_default(),
        )
        .with_parameters(tool["parameters"].clone());
        if let Some(strict) = tool["strict"].as_bool() {
            declaration = declaration.with_strict(strict);
        }
        request.tools.push(declaration);
    }
    let mode = match &body["tool_choice"] {
        Value::String(choice) if choice == "auto" => Some((FunctionCallingMode::Auto, Vec::new())),
        Value::String(choice) if choice == "required" => {
            Some((FunctionCallingMode::Any, Vec::new()))
        }
        Value::String(choice) if choice == "none" => Some((FunctionCallingMode::None, Vec::new())),
        Value::Object(choice) => Some((
            FunctionCallingMode::Any,
            vec![choice["name"].as_str().unwrap().to_owned()],
        )),
        _ => None,
    };
    if let Some((mode, names)) = mode {
        let mut calling = FunctionCallingConfig::new(mode);
        calling.allowed_function_names = names;
        let mut tool_config = ToolConfig::default();
        tool_config.function_calling_config = Some(calling);
        request.config.tool_config = Some(tool_config);
    }
    match body.pointer("/text/format/type").and_then(Value::as_str) {
        Some("json_schema") => {
            request.config.response_schema = body.pointer("/text/format/schema").cloned();
        }
        Some("json_object") => request.config.response_mime_type = Some("application/json".into()),
        _ => {}
    }
    if let Some(reasoning) = body
        .get("reasoning")
        .filter(|reasoning| reasoning.is_object())
    {
        let mut thinking = ThinkingConfig::default();
        thinking.thinking_level = match reasoning["effort"].as_str() {
            Some("minimal") => Some(ThinkingLevel::Minimal),
            Some("low") => Some(ThinkingLevel::Low),
            Some("medium") => Some(ThinkingLevel::Medium),
            Some("high") => Some(ThinkingLevel::High),
            _ => None,
        };
        if reasoning["summary"].is_string() {
            thinking.include_thoughts = Some(true);
        }
        request.config.thinking_config = Some(thinking);
    }
    let config = &mut request.config;
    config.temperature = body["temperature"].as_f64().map(|value| value as f32);
    config.top_p = body["top_p"].as_f64().map(|value| value as f32);
    config.max_output_tokens = body["max_output_tokens"].as_u64().map(|value| value as u32);
    request
}

/// Applies the documented differences between what we send and what the recorded clients sent
/// (see docs/models.md), to either body.
fn normalise(mut body: Value) -> Value {
    canonical(&mut body);
    let object = body.as_object_mut().unwrap();
    if object.get("stream") == Some(&json!(false)) {
        object.remove("stream");
    }
    // pydantic-ai sends empty instructions; we send none.
    if object.get("instructions") == Some(&json!("")) {
        object.remove("instructions");
    }
    if let Some(format) = body
        .pointer_mut("/text/format")
        .and_then(Value::as_object_mut)
    {
        // The schema name comes from the schema's title (else "response"); adk-core carries none.
        format.remove("name");
    }
    for tool in body["tools"].as_array_mut().into_iter().flatten() {
        // An empty description is left out.
        if tool["description"] == json!("") {
            tool.as_object_mut().unwrap().remove("description");
        }
    }
    let mut items = Vec::new();
    for mut item in body["input"].as_array().cloned().unwrap_or_default() {
        let object = item.as_object_mut().unwrap();
        match object.get("type").and_then(Value::as_str) {
            Some("function_call") | Some("function_call_output") => {
                // The item's id and status are optional on input; call and output pair by
                // `call_id`. Arguments are JSON text whose spacing varies by client.
                object.remove("id");
                object.remove("status");
                if let Some(Ok(parsed)) = object
                    .get("arguments")
                    .and_then(Value::as_str)
                    .map(serde_json::from_str::<Value>)
                {
                    object.insert("arguments".into(), parsed);
                }
            }
            Some("reasoning") => {}
            _ => {
                // A message: `type: message` is implied, a string content is one text part, an
                // empty one is no message, `detail: auto` is the default.
                object.remove("type");
                let kind = if object["role"] == "assistant" {
                    "output_text"
                } else {
                    "input_text"
                };
                let content = object.get_mut("content").unwrap();
                if let Value::String(text) = content {
                    if text.is_empty() {
                        continue;
                    }
                    *content = json!([{"type": kind, "text": text}]);
                }
                for part in content.as_array_mut().unwrap() {
                    if part["detail"] == json!("auto") {
                        part.as_object_mut().unwrap().remove("detail");
                    }
                }
            }
        }
        items.push(item);
    }
    body["input"] = json!(items);
    body
}

/// What the recorded response holds: the whole response, or the one the stream's terminal event
/// carries, with the deltas streamed before it.
struct Expected {
    text: String,
    thinking: String,
    calls: Vec<(String, Value, String)>,
    status: String,
    usage: Value,
    model: Option<String>,
    deltas: String,
}

fn expected(exchange: &Exchange, stream: bool) -> Expected {
    let mut deltas = String::new();
    let response = if stream {
        let mut terminal = None;
        let mut done_items = BTreeMap::new();
        for event in exchange.sse_data() {
            let event: Value = serde_json::from_str(&event).unwrap();
            match event["type"].as_str().unwrap() {
                "response.output_text.delta" | "response.reasoning_summary_text.delta" => {
                    deltas.push_str(event["delta"].as_str().unwrap());
                }
                "response.output_item.done" => {
                    done_items.insert(
                        event["output_index"].as_u64().unwrap(),
                        event["item"].clone(),
                    );
                }
                "response.completed" | "response.incomplete" => {
                    terminal = Some(event["response"].clone())
                }
                _ => {}
            }
        }
        let mut response = terminal.expect("a terminal event");
        if response["output"].as_array().is_none_or(Vec::is_empty) {
            response["output"] = json!(done_items.into_values().collect::<Vec<_>>());
        }
        response
    } else {
        exchange.response_json().unwrap()
    };
    let mut expected = Expected {
        text: String::new(),
        thinking: String::new(),
        calls: Vec::new(),
        status: response["status"].as_str().unwrap().to_owned(),
        usage: response["usage"].clone(),
        model: response["model"].as_str().map(str::to_owned),
        deltas,
    };
    for item in response["output"].as_array().unwrap() {
        match item["type"].as_str().unwrap() {
            "message" => {
                for part in item["content"].as_array().unwrap() {
                    expected
                        .text
                        .push_str(part["text"].as_str().unwrap_or_default());
                }
            }
            "reasoning" => {
                let summary: Vec<&str> = item["summary"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|part| part["text"].as_str().unwrap())
                    .collect();
                expected.thinking.push_str(&summary.join("\n\n"));
            }
            "function_call" => {
                let args: Value =
                    serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
                expected.calls.push((
                    item["name"].as_str().unwrap().to_owned(),
                    args,
                    item["call_id"].as_str().unwrap().to_owned(),
                ));
            }
            other => panic!("unexpected output item {other}"),
        }
    }
    expected
}

fn check_response(outcome: &Outcome, exchange: &Exchange, stream: bool, what: &str) {
    if exchange.status != 200 {
        common::assert_recorded_error(outcome, exchange);
        return;
    }
    let expected = expected(exchange, stream);
    let last = outcome.last();
    let content = last.content.clone().unwrap_or_default();
    assert_eq!(
        content.text().unwrap_or_default(),
        expected.text,
        "{what}: text"
    );
    let thinking: String = content
        .parts
        .iter()
        .filter(|part| part.thought)
        .filter_map(|part| part.as_text())
        .collect();
    assert_eq!(thinking, expected.thinking, "{what}: reasoning summary");
    let calls: Vec<_> = content
        .function_calls()
        .map(|call| {
            (
                call.name.clone(),
                Value::Object(call.args.clone()),
                call.id.as_ref().unwrap().as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(calls, expected.calls, "{what}: function calls");
    let finish = if expected.status == "incomplete" {
        "MAX_TOKENS"
    } else {
        "STOP"
    };
    assert_eq!(
        last.finish_reason.as_ref().map(|reason| reason.as_str()),
        Some(finish),
        "{what}: finish reason"
    );
    assert_eq!(last.model_version, expected.model, "{what}: model");
    let usage = last.usage_metadata.expect("usage");
    let count = |pointer: &str| {
        expected
            .usage
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32
    };
    let reasoning = count("/output_tokens_details/reasoning_tokens");
    assert_eq!(
        usage.prompt_token_count,
        Some(count("/input_tokens")),
        "{what}"
    );
    assert_eq!(
        usage.candidates_token_count,
        Some(count("/output_tokens") - reasoning),
        "{what}: output tokens"
    );
    assert_eq!(
        usage.thoughts_token_count,
        (reasoning > 0).then_some(reasoning),
        "{what}"
    );
    let cached = count("/input_tokens_details/cached_tokens");
    assert_eq!(
        usage.cached_content_token_count,
        (cached > 0).then_some(cached),
        "{what}"
    );
    assert_eq!(
        usage.total_token_count,
        Some(count("/total_tokens")),
        "{what}"
    );
    if stream {
        assert_eq!(
            outcome.partial_text(),
            expected.deltas,
            "{what}: streamed deltas"
        );
    } else {
        assert_eq!(outcome.responses.len(), 1, "{what}: one response");
    }
}

fn reasoning_item(outcomes: &[Outcome], index: usize) -> Map<String, Value> {
    let content = common::content(outcomes, index);
    let part = content
        .parts
        .iter()
        .find(|part| part.thought)
        .expect("a reasoning part");
    part.extra["openaiReasoning"].as_object().unwrap().clone()
}

crate::common::replay_cases! {
    march_2025_stream_without_sequence_numbers = replay("openai-responses/llm-openai-plugin__test_openai__test_async_model.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).text().as_deref(), Some("Hi there! How can I assist you today?"));
        assert_eq!(outcomes[0].responses.len(), 11, "ten deltas, then the final answer");
    };
    streamed_tool_call_after_reasoning = replay("openai-responses/llm-openai-plugin__test_openai__test_tools.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).function_calls().next().unwrap().args["number"], "5");
        assert!(common::content(&outcomes, 1).text().is_some());
    };
    explicit_prompt_cache_breakpoint = replay("openai-responses/pydantic-ai__test_openai_prompt_cache__test_openai_responses_prompt_cache_e2e.yaml") => |outcomes| {
        assert_eq!(outcomes[0].last().usage_metadata.unwrap().cached_content_token_count, None);
        assert_eq!(outcomes[1].last().usage_metadata.unwrap().cached_content_token_count, Some(4012));
    };
    structured_output_with_a_tool = replay("openai-responses/pydantic-ai__test_openai_responses__test_native_output.yaml") => |outcomes| {
        let text = common::content(&outcomes, 1).text().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["city"], "Mexico City");
    };
    image_url_input = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_image_url_input.yaml") => |outcomes| {
        assert!(common::content(&outcomes, 0).text().unwrap().contains("potato"));
    };
    stream_request_refused_400_is_plain_json = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_model_http_error.yaml") => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!((error.status(), error.provider_status()), (Some(400), Some("decimal_below_min_value")));
    };
    plain_text = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_model_simple_response.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).text().as_deref(), Some("The capital of France is Paris."));
    };
    tool_call_round_trip = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_model_simple_response_with_tool_call.yaml") => |outcomes| {
        let first = common::content(&outcomes, 0);
        assert_eq!(first.parts[0].extra["openaiItemId"], "fc_04907f5d3de791830068fbaa1b310c81958dc9c508e878c632");
        assert_eq!(common::content(&outcomes, 1).text().as_deref(), Some("The capital of PotatoLand is Potato City."));
    };
    streamed_arguments_in_five_deltas = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_stream.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).function_calls().next().unwrap().args["country"], "France");
        assert!(common::content(&outcomes, 1).text().unwrap().contains("Paris"));
    };
    streamed_encrypted_reasoning_uses_the_done_item = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_streaming_usage.yaml") => |outcomes| {
        let item = reasoning_item(&outcomes, 0);
        assert!(item["encrypted_content"].as_str().unwrap().len() > 100);
        assert!(outcomes[0].last().usage_metadata.unwrap().thoughts_token_count.is_some());
    };
    reasoning_summary_sent_back_encrypted = replay("openai-responses/pydantic-ai__test_openai_responses__test_openai_responses_thinking_with_tool_calls.yaml") => |outcomes| {
        let item = reasoning_item(&outcomes, 0);
        assert_eq!(item["id"], "rs_68c42d29124881968e24c1ca8c1fc7860e8bc41441c948f6");
        assert_eq!(outcomes[0].last().usage_metadata.unwrap().thoughts_token_count, Some(1792));
    };
    unknown_model_is_a_400 = replay("openai-responses/rig__openai_error_envelope__nonexistent_model_error_preserves_status_and_body.yaml") => |outcomes| {
        assert_eq!(outcomes[0].model_error().provider_status(), Some("model_not_found"));
    };
    invalid_key_401 = replay("openai-responses/rig__openai_error_identity_edge__auth_rejection_carries_identity.yaml") => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!((error.status(), error.provider_status()), (Some(401), Some("invalid_api_key")));
        assert!(error.to_string().contains("check the API key"), "{error}");
    };
    incomplete_at_max_output_tokens = replay("openai-responses/rig__openai_responses_behaviors__incomplete_response_surfaces_partial_output.yaml") => |outcomes| {
        let last = outcomes[0].last();
        assert_eq!(last.error_code.as_deref(), Some("MAX_TOKENS"));
        assert!(last.content.as_ref().unwrap().text().unwrap().starts_with("On the windswept coast"));
    };
    two_parallel_calls_answered = replay("openai-responses/rig__openai_responses_sessions__parallel_tool_calls_single_turn_nonstreaming.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).function_calls().count(), 2);
        assert!(common::content(&outcomes, 1).text().unwrap().contains("crimson-harbor"));
    };
    streamed_incomplete_with_reasoning_only = replay("openai-responses/rig__openai_streaming_grammar__incomplete_max_output_tokens.yaml") => |outcomes| {
        let last = outcomes[0].last();
        assert_eq!(last.finish_reason, Some(adk_core::FinishReason::MaxTokens));
        assert_eq!(last.content.as_ref().unwrap().text(), None);
    };
}
