//! Prompted tool calling, for servers and models without native tool calls (llama.cpp serving
//! SmolLM2, say): the tools are described in the system instruction, the answer is constrained by a
//! `response_format` JSON schema, and the JSON that comes back is turned into ordinary function
//! calls and text.
//!
//! The schema is a `oneOf` with one shape per tool, `{"tool": <its name>, "args": <its parameters
//! schema>}`, and a final-answer shape `{"answer": <text>}` (or `<the response schema>` when the
//! request has one). Servers that enforce `response_format` with a grammar (llama.cpp, vLLM) make
//! even a small model produce one of those shapes. In the history, the model's earlier calls are
//! sent back as the same JSON and function responses as user messages that begin with
//! [`RESULT_PREFIX`], so the model reads both as text and no `tool` message is ever sent.

use std::sync::Arc;

use adk_core::{
    Content, FunctionCall, FunctionCallingMode, FunctionDeclaration, FunctionResponse, LlmRequest,
    LlmResponse, Part, PartData, Role,
};
use serde_json::{Map, Value, json};

use crate::error::Error;

/// How a function response starts when it is sent back as a user message.
pub(super) const RESULT_PREFIX: &str = "Tool result";

/// How to read the answer to a rewritten request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// The answer was not constrained (no tools, or calling turned off): read it as it is.
    Plain,
    /// The answer is one JSON object of the protocol; `answer_is_text` when its `answer` is a string.
    Protocol {
        /// Whether the final answer is free text rather than a JSON value.
        answer_is_text: bool,
    },
}

/// `request` rewritten for prompted tool calling, and how to read its answer.
pub(super) fn rewrite(request: &LlmRequest) -> Result<(LlmRequest, Reading), Error> {
    let mut rewritten = request.clone();
    rewritten.contents = Arc::new(request.contents.iter().map(history_content).collect());
    rewritten.tools = Vec::new();
    let calling = rewritten
        .config
        .tool_config
        .take()
        .and_then(|config| config.function_calling_config);
    if request.tools.is_empty() {
        return Ok((rewritten, Reading::Plain));
    }
    let (tools, allow_answer): (Vec<&FunctionDeclaration>, bool) = match &calling {
        Some(calling) if calling.mode == Some(FunctionCallingMode::None) => {
            return Ok((rewritten, Reading::Plain));
        }
        Some(calling) if calling.mode == Some(FunctionCallingMode::Any) => {
            let allowed = &calling.allowed_function_names;
            let tools: Vec<_> = request
                .tools
                .iter()
                .filter(|tool| allowed.is_empty() || allowed.contains(&tool.name))
                .collect();
            if tools.is_empty() {
                return Err(Error::config(format!(
                    "function calling is forced to {allowed:?}, but no declared tool has such a name; fix allowed_function_names"
                )));
            }
            (tools, false)
        }
        _ => (request.tools.iter().collect(), true),
    };
    let answer_schema = rewritten.config.response_schema.take();
    rewritten.config.response_mime_type = None;
    let answer = allow_answer.then(|| {
        answer_schema
            .clone()
            .unwrap_or_else(|| json!({"type": "string"}))
    });
    let instruction = instruction(&tools, answer.as_ref(), answer_schema.is_some());
    rewritten.system_instruction = Some(match rewritten.system_instruction.take() {
        Some(system) if !system.is_empty() => format!("{system}\n\n{instruction}"),
        _ => instruction,
    });
    rewritten.config.response_schema = Some(schema(&tools, answer));
    let answer_is_text = answer_schema.is_none();
    Ok((rewritten, Reading::Protocol { answer_is_text }))
}

/// The paragraph that tells the model about the tools and the reply format.
fn instruction(
    tools: &[&FunctionDeclaration],
    answer: Option<&Value>,
    answer_is_json: bool,
) -> String {
    let mut text = String::from(
        "You can use tools. Each tool has a name, a description and the JSON schema of its arguments:\n",
    );
    for tool in tools {
        let parameters = tool
            .parameters
            .as_ref()
            .map_or_else(|| "{}".to_owned(), Value::to_string);
        text.push_str(&format!(
            "- {}: {}\n  arguments: {parameters}\n",
            tool.name, tool.description
        ));
    }
    text.push_str(
        "\nReply with one JSON object and nothing else. To call a tool, reply \
         {\"tool\": \"<tool name>\", \"args\": {<its arguments>}}.",
    );
    match answer {
        Some(schema) if answer_is_json => text.push_str(&format!(
            " To answer the user, reply {{\"answer\": <your answer>}}, where the answer follows \
             this JSON schema: {schema}."
        )),
        Some(_) => text.push_str(" To answer the user, reply {\"answer\": \"<your answer>\"}."),
        None => text.push_str(" You must call one of the tools."),
    }
    text.push_str(&format!(
        " A tool's result comes back in a message that starts with \"{RESULT_PREFIX}\"; use it \
         to answer the user, or call another tool if you still need one."
    ));
    text
}

/// The response schema: one shape per tool, and the answer shape when answering is allowed.
///
/// Definitions (`$defs`, `definitions`) inside the tools' parameters move to the root, where
/// their `#/$defs/...` references point.
fn schema(tools: &[&FunctionDeclaration], answer: Option<Value>) -> Value {
    let mut definitions = Map::new();
    let mut shapes: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let args = tool.parameters.clone().map_or_else(
                || json!({"type": "object", "properties": {}, "additionalProperties": false}),
                |parameters| hoist_definitions(parameters, &mut definitions),
            );
            json!({
                "type": "object",
                "properties": {"tool": {"const": tool.name}, "args": args},
                "required": ["tool", "args"],
                "additionalProperties": false,
            })
        })
        .collect();
    if let Some(answer) = answer {
        let answer = hoist_definitions(answer, &mut definitions);
        shapes.push(json!({
            "type": "object",
            "properties": {"answer": answer},
            "required": ["answer"],
            "additionalProperties": false,
        }));
    }
    let mut schema = json!({"oneOf": shapes});
    if !definitions.is_empty() {
        schema["$defs"] = Value::Object(definitions);
    }
    schema
}

/// `schema` without `$schema` and its definitions, which go into `definitions` (first one wins).
fn hoist_definitions(mut schema: Value, definitions: &mut Map<String, Value>) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = object.remove(key) {
                for (name, definition) in defs {
                    definitions.entry(name).or_insert(definition);
                }
            }
        }
    }
    schema
}

/// A content of the history as the model reads it: calls as protocol JSON, responses as text.
fn history_content(content: &Content) -> Content {
    let has_tool_parts = content.parts.iter().any(|part| {
        matches!(
            part.data,
            PartData::FunctionCall(_) | PartData::FunctionResponse(_)
        )
    });
    if !has_tool_parts {
        return content.clone();
    }
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) => texts.push(text.clone()),
            PartData::FunctionCall(call) => texts.push(call_json(call)),
            PartData::FunctionResponse(response) => texts.push(response_text(response)),
            _ => others.push(part.clone()),
        }
    }
    let mut parts = vec![Part::text(texts.join("\n"))];
    parts.extend(others);
    Content {
        parts,
        role: content.role,
    }
}

/// A call as the protocol writes it.
fn call_json(call: &FunctionCall) -> String {
    // Written by hand so that `tool` comes first, as in the schema, whatever the map's key order.
    format!(
        "{{\"tool\": {}, \"args\": {}}}",
        Value::String(call.name.clone()),
        Value::Object(call.args.clone())
    )
}

/// A function response as a message the model can read.
fn response_text(response: &FunctionResponse) -> String {
    let result = match (response.response.len(), response.response.get("result")) {
        (1, Some(Value::String(text))) => text.clone(),
        (1, Some(value)) => value.to_string(),
        _ => Value::Object(response.response.clone()).to_string(),
    };
    format!("{RESULT_PREFIX} of {}: {result}", response.name)
}

impl Reading {
    /// The answer with its protocol JSON turned into a function call or text.
    ///
    /// Text that is not the protocol's JSON (an answer cut short by the token limit, say) is left
    /// as it is.
    pub(super) fn read(self, mut response: LlmResponse) -> LlmResponse {
        let Self::Protocol { answer_is_text } = self else {
            return response;
        };
        let Some(content) = response.content.as_mut() else {
            return response;
        };
        let text: String = content
            .parts
            .iter()
            .filter(|part| !part.thought)
            .filter_map(Part::as_text)
            .collect();
        let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(&text) else {
            return response;
        };
        let part = match (reply.remove("tool"), reply.remove("answer")) {
            (Some(Value::String(name)), None) => {
                let args = reply.remove("args").unwrap_or_else(|| json!({}));
                Part::function_call(FunctionCall::new(name, args))
            }
            (None, Some(Value::String(answer))) if answer_is_text => Part::text(answer),
            (None, Some(answer)) => Part::text(answer.to_string()),
            _ => return response,
        };
        content
            .parts
            .retain(|part| part.thought || part.as_text().is_none());
        content.parts.push(part);
        response
    }

    /// A filter for streamed partial responses, for this way of reading.
    pub(super) fn stream(self) -> AnswerStream {
        AnswerStream {
            raw: String::new(),
            emitted: 0,
            enabled: matches!(
                self,
                Self::Protocol {
                    answer_is_text: true
                }
            ),
            plain: self == Self::Plain,
        }
    }
}

/// Turns streamed JSON deltas into deltas of the answer's text: while the reply reads
/// `{"answer": "...`, the decoded text of the string goes out; a tool call streams nothing.
#[derive(Debug)]
pub(super) struct AnswerStream {
    raw: String,
    /// Characters of the decoded answer already sent.
    emitted: usize,
    /// Whether answers are text, so that they can be streamed.
    enabled: bool,
    /// Whether the answer is not constrained at all, so partials pass through unchanged.
    plain: bool,
}

impl AnswerStream {
    /// The partial response to yield for `partial`, if any.
    pub(super) fn partial(&mut self, mut partial: LlmResponse) -> Option<LlmResponse> {
        if self.plain {
            return Some(partial);
        }
        let delta: String = partial
            .content
            .as_ref()?
            .parts
            .iter()
            .filter_map(Part::as_text)
            .collect();
        let text = self.push(&delta)?;
        partial.content = Some(Content::new(Role::Model, [Part::text(text)]));
        Some(partial)
    }

    /// Takes a delta of the raw reply; returns the new text of the answer, if any.
    fn push(&mut self, delta: &str) -> Option<String> {
        self.raw.push_str(delta);
        if !self.enabled {
            return None;
        }
        let start = answer_start(&self.raw)?;
        let decoded = decode_prefix(&self.raw[start..]);
        let fresh: String = decoded.chars().skip(self.emitted).collect();
        if fresh.is_empty() {
            return None;
        }
        self.emitted += fresh.chars().count();
        Some(fresh)
    }
}

/// Where the answer string's characters begin when `raw` starts like `{"answer": "`.
fn answer_start(raw: &str) -> Option<usize> {
    let rest = raw.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix("\"answer\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(raw.len() - rest.len())
}

/// The decoded text of a JSON string body, up to its closing quote or to the last complete escape.
fn decode_prefix(body: &str) -> String {
    let mut decoded = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some((_, escape)) = chars.next() else {
                    break;
                };
                let simple = match escape {
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '/' => Some('/'),
                    'b' => Some('\u{8}'),
                    'f' => Some('\u{c}'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    _ => None,
                };
                if let Some(simple) = simple {
                    decoded.push(simple);
                    continue;
                }
                // `\uXXXX`, perhaps a surrogate pair `\uD83D\uDE00`: decode it with serde_json
                // once complete, else stop and wait for more.
                let escape_start = index;
                let take = if body[escape_start..].starts_with("\\uD")
                    || body[escape_start..].starts_with("\\ud")
                {
                    12
                } else {
                    6
                };
                let Some(sequence) = body.get(escape_start..escape_start + take) else {
                    break;
                };
                match serde_json::from_str::<String>(&format!("\"{sequence}\"")) {
                    Ok(text) => decoded.push_str(&text),
                    Err(_) => break,
                }
                for _ in 0..take - 2 {
                    chars.next();
                }
            }
            c => decoded.push(c),
        }
    }
    decoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{FunctionCallingConfig, ToolConfig};

    fn weather() -> FunctionDeclaration {
        FunctionDeclaration::new("get_weather", "Returns the weather in a city.").with_parameters(
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )
    }

    fn request_with_tools() -> LlmRequest {
        let mut request = LlmRequest::new("m", vec![Content::user("Weather in Paris?")]);
        request.append_instructions(["Be brief."]);
        request.append_tools([weather(), FunctionDeclaration::new("now", "The time.")]);
        request
    }

    fn text_response(text: &str) -> LlmResponse {
        LlmResponse::new(Content::new(Role::Model, [Part::text(text)]))
    }

    #[test]
    fn tools_become_an_instruction_and_a_one_of_schema() {
        let (rewritten, reading) = rewrite(&request_with_tools()).unwrap();
        assert_eq!(
            reading,
            Reading::Protocol {
                answer_is_text: true
            }
        );
        assert!(rewritten.tools.is_empty());
        let system = rewritten.system_instruction.unwrap();
        assert!(
            system.starts_with("Be brief.\n\nYou can use tools."),
            "{system}"
        );
        assert!(
            system.contains("- get_weather: Returns the weather in a city.\n  arguments: {"),
            "{system}"
        );
        assert!(
            system.contains("- now: The time.\n  arguments: {}"),
            "{system}"
        );
        assert!(
            system.contains("{\"answer\": \"<your answer>\"}"),
            "{system}"
        );
        assert_eq!(
            rewritten.config.response_schema.unwrap(),
            json!({"oneOf": [
                {"type": "object",
                 "properties": {"tool": {"const": "get_weather"},
                                "args": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
                 "required": ["tool", "args"], "additionalProperties": false},
                {"type": "object",
                 "properties": {"tool": {"const": "now"},
                                "args": {"type": "object", "properties": {}, "additionalProperties": false}},
                 "required": ["tool", "args"], "additionalProperties": false},
                {"type": "object", "properties": {"answer": {"type": "string"}},
                 "required": ["answer"], "additionalProperties": false}
            ]})
        );
    }

    #[test]
    fn the_request_body_carries_the_schema_and_no_native_tools() {
        let (rewritten, _) = rewrite(&request_with_tools()).unwrap();
        let body =
            super::super::request::build(&rewritten, "m", false, &Default::default()).unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert!(
            body.get("tools").is_none() && body.get("tool_choice").is_none(),
            "{body}"
        );
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"]["oneOf"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(body["messages"][0]["role"], "system");
    }

    #[test]
    fn forced_calling_drops_the_answer_and_none_drops_the_tools() {
        let mut request = request_with_tools();
        let mut config = FunctionCallingConfig::new(FunctionCallingMode::Any);
        config.allowed_function_names = vec!["now".into()];
        let mut tool_config = ToolConfig::default();
        tool_config.function_calling_config = Some(config);
        request.config.tool_config = Some(tool_config.clone());
        let (rewritten, _) = rewrite(&request).unwrap();
        assert!(rewritten.config.tool_config.is_none());
        let shapes = rewritten.config.response_schema.unwrap()["oneOf"].clone();
        assert_eq!(shapes.as_array().unwrap().len(), 1);
        assert_eq!(shapes[0]["properties"]["tool"]["const"], "now");
        assert!(
            rewritten
                .system_instruction
                .unwrap()
                .contains("You must call one of the tools.")
        );

        tool_config.function_calling_config =
            Some(FunctionCallingConfig::new(FunctionCallingMode::None));
        request.config.tool_config = Some(tool_config);
        let (rewritten, reading) = rewrite(&request).unwrap();
        assert_eq!(reading, Reading::Plain);
        assert!(rewritten.tools.is_empty() && rewritten.config.response_schema.is_none());
        assert_eq!(rewritten.system_instruction.as_deref(), Some("Be brief."));

        let mut unknown = FunctionCallingConfig::new(FunctionCallingMode::Any);
        unknown.allowed_function_names = vec!["nope".into()];
        let mut tool_config = ToolConfig::default();
        tool_config.function_calling_config = Some(unknown);
        request.config.tool_config = Some(tool_config);
        assert!(
            rewrite(&request)
                .unwrap_err()
                .to_string()
                .contains("allowed_function_names")
        );
    }

    #[test]
    fn a_response_schema_becomes_the_answer_shape_and_definitions_move_to_the_root() {
        let mut request = request_with_tools();
        request.tools[0].parameters = Some(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"place": {"$ref": "#/$defs/Place"}},
            "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}}
        }));
        request.config.response_schema =
            Some(json!({"type": "object", "properties": {"temp": {"type": "number"}}}));
        request.config.response_mime_type = Some("application/json".into());
        let (rewritten, reading) = rewrite(&request).unwrap();
        assert_eq!(
            reading,
            Reading::Protocol {
                answer_is_text: false
            }
        );
        assert_eq!(rewritten.config.response_mime_type, None);
        let schema = rewritten.config.response_schema.unwrap();
        assert_eq!(
            schema["$defs"]["Place"]["properties"]["city"]["type"],
            "string"
        );
        let args = &schema["oneOf"][0]["properties"]["args"];
        assert!(
            args.get("$defs").is_none() && args.get("$schema").is_none(),
            "{args}"
        );
        assert_eq!(
            schema["oneOf"][2]["properties"]["answer"]["properties"]["temp"]["type"],
            "number"
        );
        let read = reading.read(text_response(r#"{"answer": {"temp": 21.5}}"#));
        assert_eq!(
            read.content.unwrap().text().as_deref(),
            Some(r#"{"temp":21.5}"#)
        );
    }

    #[test]
    fn calls_and_responses_in_the_history_become_text() {
        let mut request = request_with_tools();
        let call = FunctionCall::new("get_weather", json!({"city": "Paris"})).with_id("adk-1");
        let contents = Arc::make_mut(&mut request.contents);
        contents.push(Content::new(
            Role::Model,
            [Part::text("Let me look."), Part::function_call(call)],
        ));
        contents.push(Content::new(
            Role::User,
            [
                Part::function_response(
                    FunctionResponse::new("get_weather", json!({"sky": "clear"})).with_id("adk-1"),
                ),
                Part::function_response(
                    FunctionResponse::new("now", json!("12:00")).with_id("adk-2"),
                ),
            ],
        ));
        let (rewritten, _) = rewrite(&request).unwrap();
        let body =
            super::super::request::build(&rewritten, "m", false, &Default::default()).unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "Weather in Paris?"})
        );
        assert_eq!(
            body["messages"][2],
            json!({"role": "assistant", "content": "Let me look.\n{\"tool\": \"get_weather\", \"args\": {\"city\":\"Paris\"}}"})
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "user", "content": "Tool result of get_weather: {\"sky\":\"clear\"}\nTool result of now: 12:00"})
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn protocol_json_becomes_calls_and_text() {
        let reading = Reading::Protocol {
            answer_is_text: true,
        };
        let call = reading.read(text_response(
            "{\"tool\": \"get_weather\", \"args\": {\n  \"city\": \"Paris\"\n}}",
        ));
        let content = call.content.unwrap();
        assert_eq!(content.parts.len(), 1);
        let call = content.function_calls().next().unwrap();
        assert_eq!(
            (call.name.as_str(), &call.args["city"]),
            ("get_weather", &json!("Paris"))
        );
        assert!(call.id.is_none(), "the flow gives calls their ids");

        let answer = reading.read(text_response("{\"answer\": \"Sunny, 21 \\u00b0C.\"}"));
        assert_eq!(
            answer.content.unwrap().text().as_deref(),
            Some("Sunny, 21 °C.")
        );

        let cut = reading.read(text_response("{\"answer\": \"Sunny and"));
        assert_eq!(
            cut.content.unwrap().text().as_deref(),
            Some("{\"answer\": \"Sunny and")
        );
        let plain = Reading::Plain.read(text_response("{\"answer\": \"x\"}"));
        assert_eq!(
            plain.content.unwrap().text().as_deref(),
            Some("{\"answer\": \"x\"}")
        );
        assert!(reading.read(LlmResponse::default()).content.is_none());
    }

    #[test]
    fn streamed_answers_come_out_as_decoded_text_and_calls_stay_silent() {
        let mut stream = Reading::Protocol {
            answer_is_text: true,
        }
        .stream();
        let deltas = [
            "{",
            "\"answer\"",
            ": \"",
            "Hi",
            " \\",
            "\"you\\",
            "\" \\u00",
            "e9 \\uD83D",
            "\\uDE00",
            "\"}",
        ];
        let out: Vec<String> = deltas
            .iter()
            .filter_map(|delta| stream.push(delta))
            .collect();
        assert_eq!(out.concat(), "Hi \"you\" é 😀");
        assert_eq!(out[0], "Hi");

        let mut calls = Reading::Protocol {
            answer_is_text: true,
        }
        .stream();
        assert!(
            ["{\"tool\": \"now\", ", "\"args\": {}}"]
                .iter()
                .all(|delta| calls.push(delta).is_none())
        );

        let mut plain = Reading::Plain.stream();
        let partial = plain.partial(text_response("{raw")).unwrap();
        assert_eq!(partial.content.unwrap().text().as_deref(), Some("{raw"));
        let mut json_answer = Reading::Protocol {
            answer_is_text: false,
        }
        .stream();
        assert!(
            json_answer
                .partial(text_response("{\"answer\": \"x"))
                .is_none()
        );
    }
}
