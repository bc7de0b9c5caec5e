//! An [`LlmRequest`] written as a Gemini `GenerateContentRequest` body, whole or after the prefix
//! a context cache holds.

use std::borrow::Cow;

use adk_core::{
    BuiltinTool, Content, FunctionDeclaration, LlmRequest, PartData, SafetySetting, ThinkingConfig,
    ToolConfig,
};
use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::provider_data;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerateContentRequest<'a> {
    contents: Cow<'a, [Content]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<&'a ToolConfig>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    safety_settings: &'a [SafetySetting],
    generation_config: GenerationConfig<'a>,
    /// The cache holding the start of the conversation, whose contents, system instruction and
    /// tools are then not sent again.
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_content: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    candidate_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'a str>,
    /// The answer's schema as JSON Schema (`responseJsonSchema`), not the OpenAPI subset
    /// (`responseSchema`), since [`adk_core::GenerateContentConfig::response_schema`] is JSON Schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_json_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<&'a ThinkingConfig>,
}

/// The system instruction of `request` as Gemini takes it, when it has one.
fn system_instruction(request: &LlmRequest) -> Option<SystemInstruction<'_>> {
    request
        .system_instruction
        .as_ref()
        .filter(|text| !text.is_empty())
        .map(|text| SystemInstruction {
            parts: [TextPart { text }],
            role: "user",
        })
}

/// The start of a request that a context cache holds: the cache's name and how many of the
/// request's contents it covers; a body written against it leaves those out.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CachedPrefix {
    pub(super) name: String,
    pub(super) contents: usize,
}

/// What a context cache holds besides contents, as the body's keys: the system instruction, the
/// tools and the tool config, when the request has them.
pub(super) fn cached_parts(request: &LlmRequest) -> Vec<(&'static str, Value)> {
    let mut parts = Vec::new();
    if let Some(system) = system_instruction(request) {
        parts.push((
            "systemInstruction",
            serde_json::to_value(system).unwrap_or_default(),
        ));
    }
    let tools = tools(&request.tools, &request.builtin_tools);
    if !tools.is_empty() {
        parts.push(("tools", serde_json::to_value(tools).unwrap_or_default()));
    }
    if let Some(config) = &request.config.tool_config {
        parts.push((
            "toolConfig",
            serde_json::to_value(config).unwrap_or_default(),
        ));
    }
    parts
}

/// The JSON body for `request`; with `cached`, the body that names the cache and leaves out what
/// it holds.
pub(super) fn build(
    request: &LlmRequest,
    cached: Option<&CachedPrefix>,
) -> Result<bytes::Bytes, Error> {
    let config = &request.config;
    let contents = match cached {
        Some(cached) => &request.contents[cached.contents.min(request.contents.len())..],
        None => &request.contents[..],
    };
    let body = GenerateContentRequest {
        contents: contents_for_gemini(contents),
        system_instruction: system_instruction(request).filter(|_| cached.is_none()),
        tools: if cached.is_some() {
            Vec::new()
        } else {
            tools(&request.tools, &request.builtin_tools)
        },
        tool_config: config.tool_config.as_ref().filter(|_| cached.is_none()),
        safety_settings: &config.safety_settings,
        generation_config: GenerationConfig {
            temperature: config.temperature,
            top_p: config.top_p,
            top_k: config.top_k,
            max_output_tokens: config.max_output_tokens,
            stop_sequences: &config.stop_sequences,
            candidate_count: config.candidate_count,
            seed: config.seed,
            presence_penalty: config.presence_penalty,
            frequency_penalty: config.frequency_penalty,
            response_mime_type: config.response_mime_type.as_deref(),
            response_json_schema: config.response_schema.as_ref(),
            thinking_config: config.thinking_config.as_ref(),
        },
        cached_content: cached.map(|cached| cached.name.as_str()),
    };
    serde_json::to_vec(&body)
        .map(bytes::Bytes::from)
        .map_err(|error| {
            Error::config(format!("the request could not be written as JSON: {error}"))
                .with_source(error)
        })
}

/// The contents as Gemini takes them: adk-core's content model is Gemini's, except that display
/// names of blobs and files are ADK's own and the API rejects them, and that data other providers
/// keep in a part (Anthropic's signatures, the Responses API's reasoning items) is theirs alone: a
/// part left with nothing Gemini reads is not sent, nor is a content left with no part.
fn contents_for_gemini(contents: &[Content]) -> Cow<'_, [Content]> {
    let needs_change = |content: &Content| {
        content.parts.iter().any(|part| {
            provider_data::has_provider_data(part)
                || match &part.data {
                    PartData::InlineData(blob) => blob.display_name.is_some(),
                    PartData::FileData(file) => file.display_name.is_some(),
                    _ => false,
                }
        })
    };
    if !contents.iter().any(needs_change) {
        return Cow::Borrowed(contents);
    }
    let mut owned = contents.to_vec();
    for content in &mut owned {
        for part in &mut content.parts {
            match &mut part.data {
                PartData::InlineData(blob) => blob.display_name = None,
                PartData::FileData(file) => file.display_name = None,
                _ => {}
            }
            if provider_data::has_provider_data(part) {
                part.extra = provider_data::without_provider_data(&part.extra);
            }
        }
        content.parts.retain(|part| {
            !matches!(part.data, PartData::Other)
                || part.thought_signature.is_some()
                || !part.extra.is_empty()
        });
    }
    owned.retain(|content| !content.parts.is_empty());
    Cow::Owned(owned)
}

/// The system instruction as a `Content` of one text part.
#[derive(Serialize)]
struct SystemInstruction<'a> {
    parts: [TextPart<'a>; 1],
    role: &'static str,
}

#[derive(Serialize)]
struct TextPart<'a> {
    text: &'a str,
}

/// One entry of `tools`: the function declarations together, or one built-in tool. Written
/// straight from the declarations, so that their schemas are not copied for every request.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum WireTool<'a> {
    FunctionDeclarations(Vec<WireDeclaration<'a>>),
    CodeExecution(Empty),
    GoogleSearch(Empty),
    UrlContext(Empty),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireDeclaration<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters_json_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_json_schema: Option<&'a Value>,
}

/// `{}`.
#[derive(Serialize)]
struct Empty {}

fn tools<'a>(
    declarations: &'a [FunctionDeclaration],
    builtins: &[BuiltinTool],
) -> Vec<WireTool<'a>> {
    let mut tools = Vec::new();
    if !declarations.is_empty() {
        tools.push(WireTool::FunctionDeclarations(
            declarations
                .iter()
                .map(|declaration| WireDeclaration {
                    name: &declaration.name,
                    description: &declaration.description,
                    parameters_json_schema: declaration.parameters.as_deref(),
                    response_json_schema: declaration.response.as_deref(),
                })
                .collect(),
        ));
    }
    for builtin in builtins {
        tools.push(match builtin {
            BuiltinTool::CodeExecution => WireTool::CodeExecution(Empty {}),
            BuiltinTool::GoogleSearch => WireTool::GoogleSearch(Empty {}),
            BuiltinTool::UrlContext => WireTool::UrlContext(Empty {}),
            _ => continue,
        });
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{FunctionCallingConfig, FunctionCallingMode, Part};
    use serde_json::json;

    fn body(request: &LlmRequest) -> Value {
        serde_json::from_slice(&build(request, None).unwrap()).unwrap()
    }

    #[test]
    fn maps_system_tools_tool_config_and_generation_config() {
        let mut request = LlmRequest::new("m", vec![Content::user("hi")]);
        request.append_instructions(["Be brief."]);
        request.append_tools([
            FunctionDeclaration::new("sum", "adds").with_parameters(json!({"type": "object"}))
        ]);
        request.builtin_tools.push(BuiltinTool::GoogleSearch);
        request.builtin_tools.push(BuiltinTool::UrlContext);
        request.config.temperature = Some(0.5);
        request.config.max_output_tokens = Some(5);
        request.config.response_mime_type = Some("application/json".into());
        request.config.response_schema = Some(json!({"type": "object"}));
        let mut tool_config = ToolConfig::default();
        tool_config.function_calling_config =
            Some(FunctionCallingConfig::new(FunctionCallingMode::Any));
        request.config.tool_config = Some(tool_config);
        assert_eq!(
            body(&request),
            json!({
                "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
                "systemInstruction": {"parts": [{"text": "Be brief."}], "role": "user"},
                "tools": [
                    {"functionDeclarations": [{"name": "sum", "description": "adds", "parametersJsonSchema": {"type": "object"}}]},
                    {"googleSearch": {}},
                    {"urlContext": {}}
                ],
                "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
                "generationConfig": {
                    "temperature": 0.5, "maxOutputTokens": 5,
                    "responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}
                }
            })
        );
    }

    #[cfg(feature = "anthropic")]
    #[test]
    fn other_providers_data_is_not_sent() {
        let mut signed = Part::thought("hmm");
        signed
            .extra
            .insert(provider_data::ANTHROPIC_SIGNATURE.into(), json!("sig"));
        let mut redacted = Part::new(PartData::Other);
        redacted.thought = true;
        redacted.extra.insert(
            provider_data::ANTHROPIC_REDACTED_THINKING.into(),
            json!("opaque"),
        );
        let mut request = LlmRequest::new(
            "m",
            vec![
                Content::user("hi"),
                Content::new(
                    adk_core::Role::Model,
                    [signed, redacted.clone(), Part::text("Hello")],
                ),
                Content::new(adk_core::Role::Model, [redacted]),
            ],
        );
        request.model = "m".into();
        assert_eq!(
            body(&request)["contents"],
            json!([
                {"parts": [{"text": "hi"}], "role": "user"},
                {"parts": [{"text": "hmm", "thought": true}, {"text": "Hello"}], "role": "model"}
            ])
        );
    }

    #[test]
    fn display_names_are_not_sent() {
        let mut blob = adk_core::Blob::new("text/plain", b"hi".to_vec());
        blob.display_name = Some("note.txt".into());
        let request = LlmRequest::new(
            "m",
            vec![Content::new(
                adk_core::Role::User,
                [Part::new(PartData::InlineData(blob))],
            )],
        );
        assert_eq!(
            body(&request)["contents"][0]["parts"][0],
            json!({"inlineData": {"mimeType": "text/plain", "data": "aGk="}})
        );
    }
}
