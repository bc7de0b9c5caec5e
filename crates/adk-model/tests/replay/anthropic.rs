//! Anthropic Messages replays: each recorded request is rebuilt as an `LlmRequest`, sent through
//! `Anthropic` to the replay server, and compared with the recording as parsed JSON; the
//! responses are checked against what the recorded response bodies hold.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{
    Content, FunctionCall, FunctionCallingConfig, FunctionCallingMode, FunctionDeclaration,
    FunctionResponse, LlmRequest, Part, PartData, Role, ThinkingConfig, ToolConfig,
};
use adk_model::{Anthropic, CacheMode, ContextCacheConfig, RetryPolicy};
use adk_test::{Exchange, MockServer};
use base64::Engine as _;
use serde_json::{Value, json};

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
            .strip_suffix("/messages")
            .expect("a messages path");
        let mut builder = Anthropic::builder(recorded["model"].as_str().unwrap())
            .api_key("test-key")
            .base_url(format!("{}{api_path}", server.base_url()))
            .retry(RetryPolicy::none());
        if let Some(control) = recorded.get("cache_control") {
            assert_eq!(
                control["ttl"], "5m",
                "{what}: only the recorded ttl is rebuilt"
            );
            builder = builder.context_cache(
                ContextCacheConfig::default()
                    .mode(CacheMode::Automatic)
                    .ttl(Duration::from_secs(300)),
            );
        }
        let model = builder.build().unwrap();
        let outcome = common::run(&model, llm_request(&recorded), stream).await;

        let sent = common::received(&server, index);
        assert_eq!(sent.path, exchange.path, "{what}");
        assert_eq!(sent.header("x-api-key"), Some("test-key"), "{what}");
        assert_eq!(
            sent.header("anthropic-version"),
            Some("2023-06-01"),
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

/// The text of a `content` that is a string or a list of text blocks.
fn blocks_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

/// The `LlmRequest` holding what a recorded Messages request body says.
fn llm_request(body: &Value) -> LlmRequest {
    let mut request = LlmRequest::default();
    if let Some(system) = body.get("system") {
        request.append_instructions([blocks_text(system)]);
    }
    let mut call_names: BTreeMap<String, String> = BTreeMap::new();
    let mut contents = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let role = match message["role"].as_str().unwrap() {
            "assistant" => Role::Model,
            _ => Role::User,
        };
        let blocks = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            other => panic!("unexpected content {other}"),
        };
        let parts = blocks.iter().map(|block| {
            let text = |key: &str| block[key].as_str().unwrap().to_owned();
            match block["type"].as_str().unwrap() {
                "text" => Part::text(text("text")),
                "image" => {
                    let data = base64::engine::general_purpose::STANDARD
                        .decode(block["source"]["data"].as_str().unwrap())
                        .unwrap();
                    Part::inline_data(text_at(block, "/source/media_type"), data)
                }
                "tool_use" => {
                    call_names.insert(text("id"), text("name"));
                    Part::function_call(
                        FunctionCall::new(text("name"), block["input"].clone()).with_id(text("id")),
                    )
                }
                "tool_result" => {
                    let id = text("tool_use_id");
                    let result = blocks_text(&block["content"]);
                    let result = if block["is_error"] == json!(true) {
                        json!({"error": result})
                    } else {
                        json!(result)
                    };
                    Part::function_response(
                        FunctionResponse::new(call_names[&id].clone(), result).with_id(id),
                    )
                }
                "thinking" => {
                    let mut part = Part::thought(text("thinking"));
                    part.extra
                        .insert("anthropicSignature".into(), json!(text("signature")));
                    part
                }
                "redacted_thinking" => {
                    let mut part = Part::new(PartData::Other);
                    part.thought = true;
                    part.extra
                        .insert("anthropicRedactedThinking".into(), json!(text("data")));
                    part
                }
                other => panic!("unexpected block {other}"),
            }
        });
        contents.push(Content::new(role, parts.collect::<Vec<_>>()));
    }
    request.contents = Arc::new(contents);
    for tool in body["tools"].as_array().into_iter().flatten() {
        let mut declaration = FunctionDeclaration::new(
            tool["name"].as_str().unwrap(),
            tool["description"].as_str().unwrap_or_default(),
        )
        .with_parameters(tool["input_schema"].clone());
        if let Some(strict) = tool["strict"].as_bool() {
            declaration = declaration.with_strict(strict);
        }
        request.tools.push(declaration);
    }
    let mode = match body["tool_choice"]["type"].as_str() {
        Some("auto") => Some((FunctionCallingMode::Auto, Vec::new())),
        Some("any") => Some((FunctionCallingMode::Any, Vec::new())),
        Some("none") => Some((FunctionCallingMode::None, Vec::new())),
        Some("tool") => Some((
            FunctionCallingMode::Any,
            vec![text_at(&body["tool_choice"], "/name")],
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
    let config = &mut request.config;
    config.temperature = body["temperature"].as_f64().map(|value| value as f32);
    config.top_p = body["top_p"].as_f64().map(|value| value as f32);
    config.top_k = body["top_k"].as_u64().map(|value| value as u32);
    config.max_output_tokens = body["max_tokens"].as_u64().map(|value| value as u32);
    if let Some(budget) = body
        .pointer("/thinking/budget_tokens")
        .and_then(Value::as_i64)
    {
        let mut thinking = ThinkingConfig::default();
        thinking.thinking_budget = Some(i32::try_from(budget).unwrap());
        config.thinking_config = Some(thinking);
    }
    config.response_schema = body.pointer("/output_config/format/schema").cloned();
    request
}

fn text_at(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

/// Applies the documented differences between what we send and what the recorded clients sent
/// (see docs/models.md), to either body.
fn normalise(mut body: Value) -> Value {
    canonical(&mut body);
    let object = body.as_object_mut().unwrap();
    // Not streaming is the default; pydantic-ai says so explicitly.
    if object.get("stream") == Some(&json!(false)) {
        object.remove("stream");
    }
    // A system prompt or a message content that is a string is one text block.
    if let Some(system) = object.get_mut("system") {
        normalise_content(system);
    }
    for message in object
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        normalise_content(&mut message["content"]);
    }
    body
}

/// A content (or system prompt) as text blocks, tool results' content as text, and no
/// `is_error: false`.
fn normalise_content(content: &mut Value) {
    if let Value::String(text) = content {
        *content = json!([{"type": "text", "text": text}]);
    }
    for block in content.as_array_mut().into_iter().flatten() {
        if block["type"] != "tool_result" {
            continue;
        }
        // A tool result's content is a string or text blocks; `is_error: false` is the default.
        block["content"] = json!(blocks_text(&block["content"]));
        if block["is_error"] == json!(false) {
            block.as_object_mut().unwrap().remove("is_error");
        }
    }
}

/// What the recorded response holds, read straight from the JSON: a whole message, or the
/// message its stream events build.
struct Expected {
    text: String,
    thinking: String,
    calls: Vec<(String, Value, String)>,
    stop_reason: Option<String>,
    usage: Value,
    model: Option<String>,
}

fn expected(exchange: &Exchange, stream: bool) -> Expected {
    let mut blocks: BTreeMap<u64, Value> = BTreeMap::new();
    let mut message = json!({});
    if stream {
        for event in exchange.sse_data() {
            let event: Value = serde_json::from_str(&event).unwrap();
            match event["type"].as_str().unwrap() {
                "message_start" => message = event["message"].clone(),
                "content_block_start" => {
                    blocks.insert(
                        event["index"].as_u64().unwrap(),
                        event["content_block"].clone(),
                    );
                }
                "content_block_delta" => {
                    let block = blocks.get_mut(&event["index"].as_u64().unwrap()).unwrap();
                    let delta = &event["delta"];
                    for (from, to) in [
                        ("text", "text"),
                        ("thinking", "thinking"),
                        ("signature", "signature"),
                        ("partial_json", "json"),
                    ] {
                        if let Some(piece) = delta[from].as_str() {
                            let old = block[to].as_str().unwrap_or_default().to_owned();
                            block[to] = json!(old + piece);
                        }
                    }
                }
                "message_delta" => {
                    message["stop_reason"] = event["delta"]["stop_reason"].clone();
                    for (key, value) in event["usage"].as_object().unwrap() {
                        message["usage"][key] = value.clone();
                    }
                }
                _ => {}
            }
        }
        for block in blocks.values_mut() {
            if let Some(json) = block["json"].as_str() {
                block["input"] = if json.is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(json).unwrap()
                };
            }
        }
        message["content"] = json!(blocks.into_values().collect::<Vec<_>>());
    } else {
        message = exchange.response_json().unwrap();
    }
    let mut expected = Expected {
        text: String::new(),
        thinking: String::new(),
        calls: Vec::new(),
        stop_reason: message["stop_reason"].as_str().map(str::to_owned),
        usage: message["usage"].clone(),
        model: message["model"].as_str().map(str::to_owned),
    };
    for block in message["content"].as_array().unwrap() {
        match block["type"].as_str().unwrap() {
            "text" => expected.text.push_str(block["text"].as_str().unwrap()),
            "thinking" => expected
                .thinking
                .push_str(block["thinking"].as_str().unwrap()),
            "tool_use" => expected.calls.push((
                block["name"].as_str().unwrap().to_owned(),
                block["input"].clone(),
                block["id"].as_str().unwrap().to_owned(),
            )),
            _ => {}
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
    assert_eq!(thinking, expected.thinking, "{what}: thinking");
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
    assert_eq!(calls, expected.calls, "{what}: tool calls");
    let finish = match expected.stop_reason.as_deref() {
        Some("max_tokens") => "MAX_TOKENS",
        _ => "STOP",
    };
    assert_eq!(
        last.finish_reason.as_ref().map(|reason| reason.as_str()),
        Some(finish),
        "{what}: finish reason"
    );
    assert_eq!(last.model_version, expected.model, "{what}: model");
    let count = |key: &str| expected.usage[key].as_u64().unwrap_or(0) as u32;
    let usage = last.usage_metadata.expect("usage");
    let prompt = count("input_tokens")
        + count("cache_creation_input_tokens")
        + count("cache_read_input_tokens");
    assert_eq!(
        usage.prompt_token_count,
        Some(prompt),
        "{what}: prompt tokens"
    );
    assert_eq!(
        usage.candidates_token_count,
        Some(count("output_tokens")),
        "{what}: output tokens"
    );
    let cached = count("cache_read_input_tokens");
    assert_eq!(
        usage.cached_content_token_count,
        (cached > 0).then_some(cached),
        "{what}: cached tokens"
    );
    if stream {
        assert_eq!(
            outcome.partial_text(),
            format!("{}{}", expected.thinking, expected.text),
            "{what}: streamed deltas"
        );
    } else {
        assert_eq!(outcome.responses.len(), 1, "{what}: one response");
    }
}

crate::common::replay_cases! {
    plain_text = replay("anthropic/langchaingo__llms_anthropic_anthropicclient__TestClient_CreateMessage.httprr") => |outcomes| {
        assert!(common::content(&outcomes, 0).text().unwrap().starts_with("Hello!"));
    };
    raw_stream_with_ping_and_padded_json = replay("anthropic/langchaingo__llms_anthropic_anthropicclient__TestClient_CreateMessageStream.httprr") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).text().as_deref(), Some("1\n2\n3\n4\n5"));
        assert_eq!(outcomes[0].responses.len(), 4, "three deltas, then the final answer");
    };
    max_tokens_with_a_tool_declared = replay("anthropic/langchaingo__llms_anthropic_anthropicclient__TestClient_WithAnthropicBetaHeader.httprr") => |outcomes| {
        let last = outcomes[0].last();
        assert_eq!(last.finish_reason, Some(adk_core::FinishReason::MaxTokens));
        assert_eq!(last.error_code.as_deref(), Some("MAX_TOKENS"));
    };
    streamed_image_prompt = replay("anthropic/llm-anthropic__test_anthropic__test_image_prompt.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).text().as_deref(), Some("Red square, green square."));
    };
    gzipped_stream_of_thinking_and_signature = replay("anthropic/llm-anthropic__test_anthropic__test_stream_events_thinking.yaml") => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert!(content.parts[0].thought);
        let signature = content.parts[0].extra["anthropicSignature"].as_str().unwrap();
        assert!(signature.starts_with("EuYDCmMIDBgCKkC05Zda"), "{signature}");
    };
    structured_output = replay("anthropic/pydantic-ai__anthropic_test_output__test_no_tools_native_output_strict_true.yaml") => |outcomes| {
        let text = common::content(&outcomes, 0).text().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["city"], "London");
    };
    automatic_prompt_cache_usage = replay("anthropic/pydantic-ai__test_anthropic__test_anthropic_cache_real_api.yaml") => |outcomes| {
        let first = outcomes[0].last().usage_metadata.unwrap();
        assert_eq!(first.cached_content_token_count, Some(1111));
        assert_eq!(first.prompt_token_count, Some(1114));
        let second = outcomes[1].last().usage_metadata.unwrap();
        assert_eq!(second.prompt_token_count, Some(3 + 418 + 1111));
    };
    redacted_thinking_sent_back = replay("anthropic/pydantic-ai__test_anthropic__test_anthropic_model_thinking_part_redacted.yaml") => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert!(content.parts[0].thought);
        assert!(content.parts[0].extra["anthropicRedactedThinking"].as_str().unwrap().starts_with("EvgF"));
    };
    thinking_signature_with_a_tool_round_trip = replay("anthropic/pydantic-ai__test_anthropic__test_anthropic_tool_with_thinking.yaml") => |outcomes| {
        let first = common::content(&outcomes, 0);
        assert_eq!(first.function_calls().next().unwrap().name, "get_user_country");
        assert!(common::content(&outcomes, 1).text().unwrap().contains("Mexico City"));
    };
    four_parallel_calls_answered_in_one_message = replay("anthropic/pydantic-ai__test_anthropic__test_multiple_parallel_tool_calls.yaml") => |outcomes| {
        assert_eq!(common::content(&outcomes, 0).function_calls().count(), 4);
        assert!(common::content(&outcomes, 1).text().unwrap().contains("Daisy"));
    };
    unknown_model_404 = replay("anthropic/rig__anthropic_error_envelope__nonexistent_model_error_preserves_status_and_body.yaml") => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!((error.status(), error.provider_status()), (Some(404), Some("not_found_error")));
        assert!(error.to_string().contains("check the model name"), "{error}");
    };
    streaming_request_refused_401_is_plain_json = replay("anthropic/rig__anthropic_error_identity_edge__streaming_connect_auth_rejection_classifies_with_contract.yaml") => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!((error.status(), error.provider_status()), (Some(401), Some("authentication_error")));
        assert!(outcomes[0].responses.is_empty());
    };
    validation_error_400 = replay("anthropic/rig__anthropic_error_identity_edge__validation_error_carries_identity.yaml") => |outcomes| {
        assert_eq!(outcomes[0].model_error().provider_status(), Some("invalid_request_error"));
    };
    three_sequential_tool_turns = replay("anthropic/rig__anthropic_messages_sessions__sequential_tool_calls_nonstreaming.yaml") => |outcomes| {
        assert_eq!(outcomes.len(), 3);
        assert_eq!(common::content(&outcomes, 1).function_calls().next().unwrap().name, "subtract");
    };
    nested_arguments_in_eighteen_fragments = replay("anthropic/rig__anthropic_messages_tool_args__nested_arguments_streaming.yaml") => |outcomes| {
        let content = common::content(&outcomes, 0);
        let call = content.function_calls().next().unwrap();
        assert_eq!(call.args["itinerary"]["lodging"]["rooms"], 2);
        assert_eq!(call.args["itinerary"]["activities"][1], "tea ceremony");
    };
    streamed_max_tokens = replay("anthropic/rig__anthropic_regression__stop_reason_max_tokens.yaml") => |outcomes| {
        assert_eq!(outcomes[0].last().finish_reason, Some(adk_core::FinishReason::MaxTokens));
        assert_eq!(outcomes[0].last().usage_metadata.unwrap().candidates_token_count, Some(8));
    };
}
