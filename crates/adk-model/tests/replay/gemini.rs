//! Gemini replays: each recorded request is rebuilt as an `LlmRequest`, sent through
//! `GeminiModel` to the replay server, and compared with the recording; the responses are checked
//! against what the recorded response bodies hold.

use std::sync::Arc;

use adk_core::{Content, FunctionDeclaration, GenerateContentConfig, LlmRequest, ToolConfig};
use adk_model::{GeminiModel, RetryPolicy};
use adk_test::{Exchange, MockServer};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::{self, Outcome, assert_json_eq, canonical, rename};

/// How the request of a recording is compared.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// The whole body, after the documented normalisations.
    Body,
    /// The body, but not the path: the recording went to Vertex AI, which this adapter does not
    /// address.
    BodyNotPath,
    /// Only `contents` and `generationConfig`: the old Go genai client sent proto enums as
    /// integers and a `model` field, which no JSON client sends.
    ContentsOnly,
}

/// Replays every exchange of `name` and returns what each call gave.
async fn replay(name: &str, compare: Compare) -> Vec<Outcome> {
    let exchanges = common::load(name);
    let server = MockServer::replay(&exchanges).await;
    let mut outcomes = Vec::new();
    for (index, exchange) in exchanges.iter().enumerate() {
        let what = format!("{name} #{index}");
        let recorded = exchange
            .request_json()
            .unwrap_or_else(|| panic!("{what}: request is not JSON"));
        let (model_name, stream) = model_and_method(&exchange.path);
        let model = GeminiModel::builder(model_name)
            .api_key("test-key")
            .base_url(format!("{}/v1beta", server.base_url()))
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        let outcome = common::run(&model, llm_request(&recorded), stream).await;

        let sent = common::received(&server, index);
        assert_eq!(sent.header("x-goog-api-key"), Some("test-key"), "{what}");
        if compare != Compare::BodyNotPath {
            assert_eq!(sent.path, exchange.path, "{what}");
        }
        assert_eq!(sent.query, if stream { "alt=sse" } else { "" }, "{what}");
        let (mut sent_body, mut recorded_body) = (sent.json(), recorded);
        if compare == Compare::ContentsOnly {
            for body in [&mut sent_body, &mut recorded_body] {
                body.as_object_mut()
                    .unwrap()
                    .retain(|key, _| key == "contents" || key == "generationConfig");
            }
        }
        assert_json_eq(&normalise(sent_body), &normalise(recorded_body), &what);

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

/// The model and whether the call streams, from a recorded path
/// (`.../models/gemini-2.5-flash:streamGenerateContent`).
fn model_and_method(path: &str) -> (String, bool) {
    let last = path.rsplit('/').next().unwrap();
    let (model, method) = last.split_once(':').unwrap();
    (model.to_owned(), method == "streamGenerateContent")
}

/// The `LlmRequest` holding what a recorded Gemini request body says.
fn llm_request(body: &Value) -> LlmRequest {
    let mut request = LlmRequest::default();
    let contents: Vec<Content> = serde_json::from_value(body["contents"].clone()).unwrap();
    request.contents = Arc::new(contents);
    if let Some(parts) = body["systemInstruction"]["parts"].as_array() {
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect();
        request.append_instructions(texts);
    }
    for tool in body["tools"].as_array().into_iter().flatten() {
        for declaration in tool["functionDeclarations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let mut function = FunctionDeclaration::new(
                declaration["name"].as_str().unwrap(),
                declaration["description"].as_str().unwrap_or_default(),
            );
            function.parameters = [
                "parametersJsonSchema",
                "parameters_json_schema",
                "parameters",
            ]
            .iter()
            .find_map(|key| declaration.get(*key).cloned())
            .map(Arc::new);
            function.response = ["responseJsonSchema", "response_json_schema", "response"]
                .iter()
                .find_map(|key| declaration.get(*key).cloned())
                .map(Arc::new);
            request.tools.push(function);
        }
    }
    if let Some(config) = body
        .get("generationConfig")
        .filter(|config| config.is_object())
    {
        let mut config_value = config.clone();
        rename(&mut config_value, "responseJsonSchema", "responseSchema");
        let config: GenerateContentConfig = serde_json::from_value(config_value).unwrap();
        request.config = config;
    }
    if let Some(tool_config) = body.get("toolConfig").filter(|config| config.is_object()) {
        let tool_config: ToolConfig = serde_json::from_value(tool_config.clone()).unwrap();
        request.config.tool_config = Some(tool_config);
    }
    request
}

/// Applies the documented differences between what we send and what the recorded clients sent
/// (see docs/models.md), to either body.
fn normalise(mut body: Value) -> Value {
    // rig sends absent fields as null; the API reads null and absent alike.
    canonical(&mut body);
    for content in body["contents"].as_array_mut().into_iter().flatten() {
        for part in content["parts"].as_array_mut().into_iter().flatten() {
            let part = part.as_object_mut().unwrap();
            // rig writes `"thought": false` on every part; false is the default.
            if part.get("thought") == Some(&json!(false)) {
                part.remove("thought");
            }
            // We write signatures URL-safe (as python-genai does), Go writes them standard: the
            // bytes are what count.
            if let Some(Value::String(signature)) = part.get_mut("thoughtSignature") {
                *signature = standard_base64(signature);
            }
        }
    }
    if let Some(config) = body.get_mut("generationConfig") {
        // pydantic-ai asks for text explicitly; adk-core has no response modalities and the API's
        // default is text.
        config.as_object_mut().unwrap().remove("responseModalities");
        // We send the schema as JSON Schema; adk-go sent an OpenAPI schema under responseSchema.
        rename(config, "responseSchema", "responseJsonSchema");
        if let Some(thinking) = config.get_mut("thinkingConfig") {
            rename(thinking, "include_thoughts", "includeThoughts");
            rename(thinking, "thinking_budget", "thinkingBudget");
        }
    }
    for tool in body["tools"].as_array_mut().into_iter().flatten() {
        for declaration in tool["functionDeclarations"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            // We send every parameter schema as `parametersJsonSchema`; python-genai spells it in
            // snake case and older pydantic-ai used the OpenAPI `parameters`.
            rename(
                declaration,
                "parameters_json_schema",
                "parametersJsonSchema",
            );
            rename(declaration, "parameters", "parametersJsonSchema");
        }
    }
    // The lookups above create the keys they look for; drop them again.
    canonical(&mut body);
    body
}

fn standard_base64(text: &str) -> String {
    let engine = base64::engine::GeneralPurpose::new(
        if text.contains(['-', '_']) {
            &base64::alphabet::URL_SAFE
        } else {
            &base64::alphabet::STANDARD
        },
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let bytes = engine.decode(text).expect("thought signatures are base64");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What the recorded response bodies hold, read straight from the JSON.
struct Expected {
    text: String,
    thought_text: String,
    all_text: String,
    calls: Vec<(String, Value, Option<String>)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    model_version: Option<String>,
}

fn expected(exchange: &Exchange, stream: bool) -> Expected {
    let events: Vec<Value> = if stream {
        exchange
            .sse_data()
            .iter()
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    } else {
        vec![exchange.response_json().unwrap()]
    };
    let mut expected = Expected {
        text: String::new(),
        thought_text: String::new(),
        all_text: String::new(),
        calls: Vec::new(),
        finish_reason: None,
        usage: None,
        model_version: None,
    };
    for event in &events {
        let candidate = &event["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(text) = part["text"].as_str() {
                expected.all_text.push_str(text);
                if part["thought"] == json!(true) {
                    expected.thought_text.push_str(text);
                } else {
                    expected.text.push_str(text);
                }
            }
            if let Some(call) = part.get("functionCall") {
                expected.calls.push((
                    call["name"].as_str().unwrap().to_owned(),
                    call.get("args").cloned().unwrap_or_else(|| json!({})),
                    call["id"].as_str().map(str::to_owned),
                ));
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            expected.finish_reason = Some(reason.to_owned());
        }
        if let Some(usage) = event.get("usageMetadata") {
            expected.usage = Some(usage.clone());
        }
        if let Some(version) = event["modelVersion"].as_str() {
            expected.model_version = Some(version.to_owned());
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
        "{what}: answer text"
    );
    let thoughts: String = content
        .parts
        .iter()
        .filter(|part| part.thought)
        .filter_map(|part| part.as_text())
        .collect();
    assert_eq!(thoughts, expected.thought_text, "{what}: thought text");
    let calls: Vec<_> = content
        .function_calls()
        .map(|call| {
            (
                call.name.clone(),
                Value::Object(call.args.clone()),
                call.id.as_ref().map(|id| id.as_str().to_owned()),
            )
        })
        .collect();
    assert_eq!(calls, expected.calls, "{what}: function calls");
    assert_eq!(
        last.finish_reason
            .as_ref()
            .map(|reason| reason.as_str().to_owned()),
        expected.finish_reason,
        "{what}: finish reason"
    );
    assert_eq!(
        last.model_version, expected.model_version,
        "{what}: model version"
    );
    let usage = last.usage_metadata.expect("usage");
    let recorded = expected.usage.expect("recorded usage");
    let count = |key: &str| {
        recorded[key]
            .as_u64()
            .map(|count| u32::try_from(count).unwrap())
    };
    assert_eq!(
        usage.prompt_token_count,
        count("promptTokenCount"),
        "{what}: prompt tokens"
    );
    assert_eq!(
        usage.candidates_token_count,
        count("candidatesTokenCount"),
        "{what}: candidate tokens"
    );
    assert_eq!(
        usage.thoughts_token_count,
        count("thoughtsTokenCount"),
        "{what}: thought tokens"
    );
    assert_eq!(
        usage.total_token_count,
        count("totalTokenCount"),
        "{what}: total tokens"
    );
    if stream {
        assert_eq!(
            outcome.partial_text(),
            expected.all_text,
            "{what}: streamed deltas"
        );
        assert_eq!(last.partial, Some(false));
    } else {
        assert_eq!(
            outcome.responses.len(),
            1,
            "{what}: one response when not streaming"
        );
    }
}

crate::common::replay_cases! {
    generate_ok = replay(
        "gemini/adk-go__model_gemini__TestModel_Generate_ok.httprr",
        Compare::Body,
    ) => |outcomes| {
        let last = outcomes[0].last();
        assert_eq!(
            last.content.as_ref().unwrap().text().as_deref(),
            Some("Paris")
        );
        assert_eq!(last.usage_metadata.unwrap().thoughts_token_count, Some(34));
    };
    generate_stream_ok_single_event = replay(
        "gemini/adk-go__model_gemini__TestModel_GenerateStream_ok.httprr",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(outcomes[0].partial_text(), "Paris");
        assert_eq!(outcomes[0].responses.len(), 2, "one partial, one final");
    };
    streaming_text_with_system_instruction = replay(
        "gemini/adk-go__agent_remoteagent_v2__TestA2ARemoteAgentStreamingGeminiSuccess.httprr",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(
            outcomes[0]
                .responses
                .iter()
                .filter(|response| response.is_partial())
                .count(),
            11
        );
        assert!(
            common::content(&outcomes, 0)
                .text()
                .unwrap()
                .contains("Warsaw")
        );
    };
    streaming_thoughts = replay(
        "gemini/adk-go__agent_llmagent__TestLLMAgentStreamingModeSSE.httprr",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert!(content.parts[0].thought, "thought summaries come first");
        assert!(content.parts.iter().any(|part| !part.thought));
    };
    function_tool_round_trip = replay(
        "gemini/adk-go__agent_llmagent__TestFunctionTool.httprr",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        let call = content.function_calls().next().unwrap();
        assert_eq!(
            (
                call.name.as_str(),
                call.args["a"].clone(),
                call.args["b"].clone()
            ),
            ("sum", json!(1), json!(2))
        );
        assert!(content.parts[0].thought_signature.is_some());
        assert_eq!(
            common::content(&outcomes, 1)
                .text()
                .as_deref(),
            Some("3")
        );
    };
    parallel_calls_in_one_event = replay(
        "gemini/adk-go__internal_llminternal__TestParallelFunctionCalls_test_parallel_function_calls_gemini-2.5-flash.httprr",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(
            common::content(&outcomes, 0)
                .function_calls()
                .count(),
            3
        );
    };
    parallel_calls_one_event_each_with_ids = replay(
        "gemini/adk-go__internal_llminternal__TestParallelFunctionCalls_test_parallel_function_calls_gemini-3-flash-preview.httprr",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        let ids: Vec<_> = content
            .function_calls()
            .map(|call| call.id.clone().unwrap())
            .collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[0].as_str(), "3ae8iwca");
    };
    delegation_with_response_schema = replay(
        "gemini/adk-go__agent_llmagent__TestDelegation_03_ChatToSingleTurn.httprr",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(outcomes.len(), 6);
        let translation = common::content(&outcomes, 1).text().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&translation).unwrap()["translation"],
            "hola"
        );
    };
    vertex_unauthenticated = replay(
        "gemini/adk-go__model_gemini__TestModel_TrackingHeaders_verifies_headers_are_set_vertex_enabled.httprr",
        Compare::BodyNotPath,
    ) => |outcomes| {
        assert_eq!(
            outcomes[0].model_error().provider_status(),
            Some("UNAUTHENTICATED")
        );
    };
    permission_denied_from_old_go_client = replay(
        "gemini/langchaingo__llms_googleai__TestGoogleAIErrorHandling.httprr",
        Compare::ContentsOnly,
    ) => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!(
            (error.status(), error.provider_status()),
            (Some(403), Some("PERMISSION_DENIED"))
        );
        assert!(error.to_string().contains("check the API key"), "{error}");
    };
    plain_text_with_system_instruction = replay(
        "gemini/pydantic-ai__test_google__test_google_model.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(
            common::content(&outcomes, 0)
                .text()
                .as_deref(),
            Some("Hello! How can I help you today?")
        );
    };
    stream_without_index_fields = replay(
        "gemini/pydantic-ai__test_google__test_google_model_stream.yaml",
        Compare::Body,
    ) => |outcomes| {
    };
    stream_usage_on_every_event = replay(
        "gemini/pydantic-ai__test_google__test_google_stream_usage_is_live_mid_stream.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert!(
            common::content(&outcomes, 0)
                .text()
                .unwrap()
                .contains("30")
        );
    };
    max_tokens = replay(
        "gemini/pydantic-ai__test_google__test_google_model_max_tokens.yaml",
        Compare::Body,
    ) => |outcomes| {
        let last = outcomes[0].last();
        assert_eq!(last.finish_reason, Some(adk_core::FinishReason::MaxTokens));
        assert_eq!(last.error_code.as_deref(), Some("MAX_TOKENS"));
    };
    native_output_json_schema = replay(
        "gemini/pydantic-ai__test_google__test_google_native_output.yaml",
        Compare::Body,
    ) => |outcomes| {
        let text = common::content(&outcomes, 0).text().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["city"],
            "Mexico City"
        );
        assert!(outcomes[0].last().avg_logprobs.is_some());
    };
    tool_output_with_forced_calls = replay(
        "gemini/pydantic-ai__test_google__test_google_tool_output.yaml",
        Compare::Body,
    ) => |outcomes| {
        let call = common::content(&outcomes, 1)
            .function_calls()
            .next()
            .unwrap()
            .clone();
        assert_eq!(call.name, "final_result");
        assert_eq!(call.args["city"], "Mexico City");
    };
    three_parallel_calls_and_round_trips = replay(
        "gemini/pydantic-ai__test_google__test_google_instructions_only_with_tool_calls.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(outcomes.len(), 5);
        assert_eq!(
            common::content(&outcomes, 0)
                .function_calls()
                .count(),
            3
        );
    };
    streamed_call_with_thought_signature = replay(
        "gemini/pydantic-ai__test_google__test_google_streaming_tool_call_thought_signature.yaml",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert!(
            content.parts[0]
                .thought_signature
                .as_ref()
                .is_some_and(|signature| signature.len() > 100)
        );
    };
    two_streamed_tool_rounds = replay(
        "gemini/pydantic-ai__test_google__test_google_model_iter_stream.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(outcomes.len(), 3);
        assert!(
            common::content(&outcomes, 2)
                .text()
                .unwrap()
                .contains("Paris")
        );
    };
    thinking_parts_replayed_in_history = replay(
        "gemini/pydantic-ai__test_google__test_google_model_thinking_part.yaml",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert!(content.parts.iter().any(|part| part.thought));
        assert!(
            outcomes[0]
                .last()
                .usage_metadata
                .unwrap()
                .thoughts_token_count
                .is_some()
        );
    };
    unknown_model_404 = replay(
        "gemini/pydantic-ai__test_model_name_suggestions__test_model_name_suggestion[google].yaml",
        Compare::Body,
    ) => |outcomes| {
        let error = outcomes[0].model_error();
        assert_eq!(
            (error.status(), error.provider_status()),
            (Some(404), Some("NOT_FOUND"))
        );
        assert!(
            error.to_string().contains("check the model name"),
            "{error}"
        );
    };
    tool_choice_required = replay(
        "gemini/pydantic-ai__test_tool_choice_matrix__test_tool_choice_matrix[required-google].yaml",
        Compare::Body,
    ) => |outcomes| {
        let content = common::content(&outcomes, 0);
        assert_eq!(
            content.function_calls().next().unwrap().args["city"],
            "Paris"
        );
    };
    streaming_endpoint_404_is_plain_json = replay(
        "gemini/rig__gemini_error_envelope__nonexistent_model_streaming_error_preserves_status_and_body.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(outcomes[0].model_error().status(), Some(404));
        assert!(outcomes[0].responses.is_empty());
    };
    max_tokens_stream_reports_length = replay(
        "gemini/rig__gemini_stream_terminal_matrix__max_tokens_truncated_stream_still_reports_length.yaml",
        Compare::Body,
    ) => |outcomes| {
        assert_eq!(
            outcomes[0].last().finish_reason,
            Some(adk_core::FinishReason::MaxTokens)
        );
    };
}
