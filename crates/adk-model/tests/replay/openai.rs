//! OpenAI Chat Completions replays: each recorded request is rebuilt as an `LlmRequest`, sent
//! through `OpenAi` to the replay server, and compared with the recording; the responses are
//! checked against what the recorded response bodies hold.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{
    Content, FunctionCall, FunctionCallingConfig, FunctionCallingMode, FunctionDeclaration,
    FunctionResponse, LlmRequest, Part, Role, ToolConfig,
};
use adk_model::{OpenAi, RAW_ARGUMENTS_KEY, RetryPolicy};
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
        let (request, strict_tools, strict_schema) = llm_request(&recorded);
        let stream = recorded["stream"] == json!(true);
        let api_path = exchange
            .path
            .strip_suffix("/chat/completions")
            .expect("a chat completions path");
        let model = OpenAi::builder(recorded["model"].as_str().unwrap())
            .api_key("test-key")
            .base_url(format!("{}{api_path}", server.base_url()))
            .strict_tools(strict_tools)
            .strict_response_schema(strict_schema)
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        let outcome = common::run(&model, request, stream).await;

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

/// Text of a message `content`: a string, or an array of `{"type": "text"}` parts.
fn message_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect(),
        ),
        _ => None,
    }
}

/// The `LlmRequest` holding what a recorded request body says, with whether its tools and its
/// response schema were strict (per-model options of the adapter).
fn llm_request(body: &Value) -> (LlmRequest, bool, bool) {
    let mut request = LlmRequest::default();
    let mut contents: Vec<Content> = Vec::new();
    let mut call_names: BTreeMap<String, String> = BTreeMap::new();
    for message in body["messages"].as_array().unwrap() {
        let text = message_text(&message["content"]);
        match message["role"].as_str().unwrap() {
            "system" | "developer" => request.append_instructions(text),
            "user" => contents.push(match &message["content"] {
                Value::Array(parts) => Content::new(
                    Role::User,
                    parts
                        .iter()
                        .filter_map(|part| part["text"].as_str())
                        .map(Part::text),
                ),
                _ => Content::user(text.unwrap()),
            }),
            "assistant" => {
                let mut parts: Vec<Part> = text.into_iter().map(Part::text).collect();
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let id = call["id"].as_str().unwrap().to_owned();
                    let name = call["function"]["name"].as_str().unwrap().to_owned();
                    let raw = call["function"]["arguments"].as_str().unwrap();
                    let args = match serde_json::from_str(raw) {
                        Ok(Value::Object(args)) => Value::Object(args),
                        _ => json!({RAW_ARGUMENTS_KEY: raw}),
                    };
                    call_names.insert(id.clone(), name.clone());
                    parts.push(Part::function_call(
                        FunctionCall::new(name, args).with_id(id),
                    ));
                }
                contents.push(Content::new(Role::Model, parts));
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap();
                let text = text.unwrap();
                let result = match serde_json::from_str(&text) {
                    Ok(Value::Object(object)) => Value::Object(object),
                    _ => Value::String(text),
                };
                let response = FunctionResponse::new(call_names[id].clone(), result).with_id(id);
                // Consecutive tool messages answer one model turn: one user content.
                match contents.last_mut() {
                    Some(last) if last.function_responses().next().is_some() => {
                        last.parts.push(Part::function_response(response));
                    }
                    _ => contents.push(Content::new(
                        Role::User,
                        [Part::function_response(response)],
                    )),
                }
            }
            other => panic!("unexpected role {other}"),
        }
    }
    request.contents = Arc::new(contents);

    let mut strict_tools = false;
    for tool in body["tools"].as_array().into_iter().flatten() {
        let function = &tool["function"];
        let mut declaration = FunctionDeclaration::new(
            function["name"].as_str().unwrap(),
            function["description"].as_str().unwrap_or_default(),
        );
        declaration.parameters = function.get("parameters").cloned().map(Arc::new);
        strict_tools = function["strict"] == json!(true);
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
            vec![choice["function"]["name"].as_str().unwrap().to_owned()],
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
    let mut strict_schema = false;
    match body["response_format"]["type"].as_str() {
        Some("json_schema") => {
            let schema = &body["response_format"]["json_schema"];
            request.config.response_schema = Some(schema["schema"].clone());
            strict_schema = schema["strict"] == json!(true);
        }
        Some("json_object") => request.config.response_mime_type = Some("application/json".into()),
        _ => {}
    }
    let config = &mut request.config;
    config.temperature = body["temperature"].as_f64().map(|value| value as f32);
    config.top_p = body["top_p"].as_f64().map(|value| value as f32);
    config.max_output_tokens = body["max_completion_tokens"]
        .as_u64()
        .map(|value| value as u32);
    config.candidate_count = body["n"].as_u64().map(|value| value as u32);
    config.seed = body["seed"].as_i64();
    (request, strict_tools, strict_schema)
}

/// Applies the documented differences between what we send and what the recorded clients sent
/// (see docs/models.md), to either body.
fn normalise(mut body: Value) -> Value {
    // pydantic-ai writes `"content": null` beside tool calls; absent and null read alike.
    canonical(&mut body);
    let object = body.as_object_mut().unwrap();
    // Not streaming is the default; some clients say so explicitly.
    if object.get("stream") == Some(&json!(false)) {
        object.remove("stream");
    }
    // The schema name comes from the schema's title (else "response"); adk-core carries no name.
    if let Some(schema) = body.pointer_mut("/response_format/json_schema") {
        schema.as_object_mut().unwrap().remove("name");
    }
    for message in body["messages"].as_array_mut().into_iter().flatten() {
        // rig sends a system text as a one-part array; we send the string.
        if let Value::Array(parts) = &message["content"]
            && parts.iter().all(|part| part["type"] == "text")
        {
            message["content"] = json!(
                parts
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect::<String>()
            );
        }
        // Tool results and call arguments are JSON text; spacing and key order vary by client.
        if message["role"] == "tool"
            && let Some(Ok(parsed)) = message["content"]
                .as_str()
                .map(serde_json::from_str::<Value>)
        {
            message["content"] = parsed;
        }
        for call in message["tool_calls"].as_array_mut().into_iter().flatten() {
            if let Some(Ok(parsed)) = call["function"]["arguments"]
                .as_str()
                .map(serde_json::from_str::<Value>)
            {
                call["function"]["arguments"] = parsed;
            }
        }
    }
    // The lookups above create the keys they look for; drop them again.
    canonical(&mut body);
    body
}

/// What the recorded response body holds, read straight from the JSON.
struct Expected {
    text: String,
    calls: Vec<(Option<String>, String, Map<String, Value>)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    refusal: Option<String>,
}

fn arguments(raw: &str) -> Map<String, Value> {
    match serde_json::from_str(raw) {
        Ok(Value::Object(args)) => args,
        _ if raw.is_empty() => Map::new(),
        _ => Map::from_iter([(RAW_ARGUMENTS_KEY.to_owned(), json!(raw))]),
    }
}

fn expected(exchange: &Exchange, stream: bool) -> Expected {
    let mut expected = Expected {
        text: String::new(),
        calls: Vec::new(),
        finish_reason: None,
        usage: None,
        refusal: None,
    };
    if !stream {
        let body = exchange.response_json().unwrap();
        let choice = &body["choices"][0];
        expected.text = choice["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for call in choice["message"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            expected.calls.push((
                call["id"].as_str().map(str::to_owned),
                call["function"]["name"].as_str().unwrap().to_owned(),
                arguments(call["function"]["arguments"].as_str().unwrap()),
            ));
        }
        expected.finish_reason = choice["finish_reason"].as_str().map(str::to_owned);
        expected.usage = body.get("usage").cloned();
        expected.refusal = choice["message"]["refusal"].as_str().map(str::to_owned);
        return expected;
    }
    let mut calls: BTreeMap<u64, (Option<String>, String, String)> = BTreeMap::new();
    for data in exchange.sse_data() {
        if data == "[DONE]" {
            continue;
        }
        let chunk: Value = serde_json::from_str(&data).unwrap();
        if chunk["usage"].is_object() {
            expected.usage = Some(chunk["usage"].clone());
        }
        let choice = &chunk["choices"][0];
        if let Some(text) = choice["delta"]["content"].as_str() {
            expected.text.push_str(text);
        }
        for call in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let entry = calls.entry(call["index"].as_u64().unwrap()).or_default();
            if let Some(id) = call["id"].as_str() {
                entry.0 = Some(id.to_owned());
            }
            entry
                .1
                .push_str(call["function"]["name"].as_str().unwrap_or_default());
            entry
                .2
                .push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            expected.finish_reason = Some(reason.to_owned());
        }
    }
    expected.calls = calls
        .into_values()
        .map(|(id, name, raw)| (id, name, arguments(&raw)))
        .collect();
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
        "{what}: answer text"
    );
    let calls: Vec<_> = content
        .function_calls()
        .map(|call| {
            (
                call.id.as_ref().map(|id| id.as_str().to_owned()),
                call.name.clone(),
                call.args.clone(),
            )
        })
        .collect();
    assert_eq!(calls, expected.calls, "{what}: tool calls");
    let reason = match expected.finish_reason.as_deref() {
        Some("stop" | "tool_calls") => "STOP",
        Some("length") => "MAX_TOKENS",
        other => panic!("{what}: unexpected recorded finish reason {other:?}"),
    };
    assert_eq!(
        last.finish_reason.as_ref().map(|reason| reason.as_str()),
        Some(reason),
        "{what}"
    );
    assert_eq!(last.error_message, expected.refusal, "{what}: refusal");
    let usage = last.usage_metadata.expect("usage");
    let recorded = expected.usage.expect("recorded usage");
    let count = |pointer: &str| {
        recorded
            .pointer(pointer)
            .and_then(Value::as_u64)
            .map(|count| count as u32)
    };
    assert_eq!(
        usage.prompt_token_count,
        count("/prompt_tokens"),
        "{what}: prompt tokens"
    );
    assert_eq!(
        usage.total_token_count,
        count("/total_tokens"),
        "{what}: total tokens"
    );
    let reasoning = count("/completion_tokens_details/reasoning_tokens").unwrap_or(0);
    assert_eq!(
        usage.thoughts_token_count.unwrap_or(0),
        reasoning,
        "{what}: reasoning tokens"
    );
    assert_eq!(
        usage.candidates_token_count.map(|count| count + reasoning),
        count("/completion_tokens"),
        "{what}: completion tokens"
    );
    if stream {
        assert_eq!(
            outcome.partial_text(),
            expected.text,
            "{what}: streamed deltas"
        );
    } else {
        assert_eq!(
            outcome.responses.len(),
            1,
            "{what}: one response when not streaming"
        );
    }
}

fn text(outcome: &Outcome) -> String {
    outcome
        .last()
        .content
        .as_ref()
        .and_then(Content::text)
        .unwrap_or_default()
}

#[tokio::test]
async fn functions_agent_round_trip_with_raw_arguments() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/langchaingo__agents__TestOpenAIFunctionsAgentWithHTTPRR.httprr").await;
    let call = outcomes[0]
        .last()
        .content
        .clone()
        .unwrap()
        .function_calls()
        .next()
        .unwrap()
        .clone();
    assert_eq!(call.args["__arg1"], "15 * 4");
    // langchaingo sent the call back with the arguments `15 * 4`, which are not JSON: the request
    // comparison in `replay` shows they go out unchanged from under RAW_ARGUMENTS_KEY.
    assert_eq!(text(&outcomes[1]), "15 multiplied by 4 is 60.");
}

#[tokio::test]
async fn single_function_call() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/langchaingo__llms_openai__TestFunctionCall.httprr").await;
    let call = outcomes[0]
        .last()
        .content
        .clone()
        .unwrap()
        .function_calls()
        .next()
        .unwrap()
        .clone();
    assert_eq!(call.name, "getCurrentWeather");
    assert!(call.args["location"].as_str().unwrap().contains("Boston"));
}

#[tokio::test]
async fn openrouter_stream_with_comment_then_429() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/langchaingo__llms_openai__TestOpenRouterStreaming.httprr").await;
    assert!(text(&outcomes[0]).to_lowercase().contains("test response"));
    let error = outcomes[1].model_error();
    assert_eq!(
        (error.status(), error.provider_status()),
        // OpenRouter's `"code": 429` only repeats the HTTP status, so no provider status.
        (Some(429), None)
    );
    assert!(error.is_retryable());
}

#[tokio::test]
async fn strict_schema_object_and_array() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/langchaingo__llms_openai__TestStructuredOutputObjectAndArraySchema.httprr")
            .await;
    let answer: Value = serde_json::from_str(&text(&outcomes[0])).unwrap();
    assert_eq!(answer["final_answer"], "4");
    assert!(answer["steps"].is_array());
}

#[tokio::test]
async fn strict_schema_object() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/langchaingo__llms_openai__TestStructuredOutputObjectSchema.httprr").await;
    assert_eq!(text(&outcomes[0]), r#"{"final_answer":"4"}"#);
}

#[tokio::test]
async fn plain_completion() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay(
        "openai/langchaingo__llms_openai_openaiclient__TestClient_CreateChatCompletion.httprr",
    )
    .await;
    assert!(text(&outcomes[0]).starts_with("Hello!"));
}

#[tokio::test]
async fn streaming_with_usage() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/langchaingo__llms_openai_openaiclient__TestClient_CreateChatCompletionStream.httprr").await;
    assert!(
        outcomes[0]
            .responses
            .iter()
            .filter(|response| response.is_partial())
            .count()
            > 3
    );
}

#[tokio::test]
async fn streamed_tool_use_chain() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/llm__test_tools__test_tool_use_basic.yaml").await;
    let call = outcomes[0]
        .last()
        .content
        .clone()
        .unwrap()
        .function_calls()
        .next()
        .unwrap()
        .clone();
    assert_eq!(
        (call.args["a"].clone(), call.args["b"].clone()),
        (json!(1231), json!(2331))
    );
    assert!(text(&outcomes[1]).contains("2869461") || text(&outcomes[1]).contains("2,869,461"));
}

#[tokio::test]
async fn two_parallel_calls() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_dbos__test_dbos_agent_with_hitl_tool.yaml").await;
    assert_eq!(
        outcomes[0]
            .last()
            .content
            .as_ref()
            .unwrap()
            .function_calls()
            .count(),
        2
    );
}

#[tokio::test]
async fn stream_direct() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_dbos__test_dbos_model_stream_direct.yaml").await;
    assert!(text(&outcomes[0]).contains("Mexico City"));
}

#[tokio::test]
async fn unknown_model_404() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/pydantic-ai__test_model_name_suggestions__test_model_name_suggestion[openai-chat].yaml").await;
    assert_eq!(
        outcomes[0].model_error().provider_status(),
        Some("model_not_found")
    );
}

#[tokio::test]
async fn system_instructions() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/pydantic-ai__test_openai__test_openai_instructions.yaml").await;
    assert_eq!(text(&outcomes[0]), "The capital of France is Paris.");
}

#[tokio::test]
async fn strict_tool_round_trip() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/pydantic-ai__test_openai__test_openai_instructions_with_tool_calls_keep_instructions.yaml").await;
    assert!(text(&outcomes[1]).contains("20.0"));
}

#[tokio::test]
async fn reasoning_tokens() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_openai__test_openai_model_without_system_prompt.yaml")
            .await;
    let usage = outcomes[0].last().usage_metadata.unwrap();
    assert_eq!(usage.thoughts_token_count, Some(768));
}

#[tokio::test]
async fn json_schema_not_strict_with_tool() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/pydantic-ai__test_openai__test_openai_native_output.yaml").await;
    assert_eq!(
        text(&outcomes[1]),
        r#"{"city":"Mexico City","country":"Mexico"}"#
    );
}

#[tokio::test]
async fn system_role_rejected_400() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_openai__test_openai_o1_mini_system_role[system].yaml")
            .await;
    assert_eq!(
        outcomes[0].model_error().provider_status(),
        Some("unsupported_value")
    );
}

#[tokio::test]
async fn json_object_mode() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_openai__test_openai_prompted_output.yaml").await;
    assert_eq!(
        text(&outcomes[1]),
        r#"{"city":"Mexico City","country":"Mexico"}"#
    );
}

#[tokio::test]
async fn arguments_split_across_chunks() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/pydantic-ai__test_openai__test_run_stream_sync_streams_real_model.yaml")
            .await;
    let call = outcomes[0]
        .last()
        .content
        .clone()
        .unwrap()
        .function_calls()
        .next()
        .unwrap()
        .clone();
    assert_eq!(call.args["country"], "UK");
    assert!(text(&outcomes[1]).contains("London"));
}

#[tokio::test]
async fn tool_choice_required() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/pydantic-ai__test_tool_choice_matrix__test_tool_choice_matrix[required-openai].yaml").await;
    assert_eq!(
        outcomes[0]
            .last()
            .content
            .as_ref()
            .unwrap()
            .function_calls()
            .count(),
        1
    );
}

#[tokio::test]
async fn validation_error_400() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay("openai/rig__openai_error_identity_edge__chat_completions_validation_error_carries_identity.yaml").await;
    let error = outcomes[0].model_error();
    assert_eq!(error.provider_status(), Some("decimal_above_max_value"));
    assert!(error.to_string().contains("fix the request"), "{error}");
}

#[tokio::test]
async fn streamed_structured_output() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes = replay(
        "openai/rig__openai_refusal_matrix__chat_control_non_refusing_stream_is_unchanged.yaml",
    )
    .await;
    let answer: Value = serde_json::from_str(&text(&outcomes[0])).unwrap();
    assert!(answer["answer"].is_string());
}

#[tokio::test]
async fn text_then_tool_call_in_one_stream() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let outcomes =
        replay("openai/rig__openai_streaming_grammar_chat__tool_call_with_content.yaml").await;
    let content = outcomes[0].last().content.clone().unwrap();
    assert!(!content.text().unwrap().is_empty());
    assert_eq!(
        content.function_calls().next().unwrap().name,
        "lookup_harbor_label"
    );
}
