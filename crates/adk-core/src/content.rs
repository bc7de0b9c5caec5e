//! The content model, shaped like Gemini's JSON: a [`Content`] is a role and a list of [`Part`]s.
//!
//! JSON keys are camelCase, absent values are omitted, bytes are base64. Input is also accepted in
//! snake_case, as ADK Python accepts it.

use std::fmt;

use bytes::Bytes;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::FunctionCallId;

/// Who produced a [`Content`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or the client on the user's behalf (function responses are sent as the user).
    User,
    /// The model.
    Model,
}

impl Role {
    /// The role as its JSON string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Model => "model",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One message of a conversation: a role and its parts.
///
/// ```
/// use adk_core::{Content, Role};
///
/// let content = Content::user("What is the weather in Paris?");
/// assert_eq!(content.role, Some(Role::User));
/// assert_eq!(content.text().as_deref(), Some("What is the weather in Paris?"));
/// assert_eq!(
///     serde_json::to_value(&content).unwrap(),
///     serde_json::json!({"parts": [{"text": "What is the weather in Paris?"}], "role": "user"}),
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Content {
    /// The parts, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Who produced it; absent on some provider responses (an empty candidate, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

impl Content {
    /// Content of `role` with the given parts.
    pub fn new(role: Role, parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            parts: parts.into_iter().collect(),
            role: Some(role),
        }
    }

    /// A user message of one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, [Part::text(text)])
    }

    /// A model message of one text part.
    pub fn model(text: impl Into<String>) -> Self {
        Self::new(Role::Model, [Part::text(text)])
    }

    /// Appends a part.
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// The concatenated text of the parts that are text and not thoughts, or `None` if there is none.
    pub fn text(&self) -> Option<String> {
        let mut texts = self
            .parts
            .iter()
            .filter(|part| !part.thought)
            .filter_map(Part::as_text)
            .peekable();
        texts.peek()?;
        Some(texts.collect())
    }

    /// The function calls among the parts.
    pub fn function_calls(&self) -> impl Iterator<Item = &FunctionCall> {
        self.parts.iter().filter_map(Part::as_function_call)
    }

    /// The function responses among the parts.
    pub fn function_responses(&self) -> impl Iterator<Item = &FunctionResponse> {
        self.parts.iter().filter_map(Part::as_function_response)
    }

    /// Whether there are no parts.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// Text is a user's message: `runner.run("user", "s1", "Hello")`.
impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::user(text)
    }
}

/// Text is a user's message.
impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::user(text)
    }
}

/// The data one [`Part`] holds: exactly one kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PartData {
    /// Text (`"text"`).
    Text(String),
    /// Bytes sent inline (`"inlineData"`).
    InlineData(Blob),
    /// A reference to a file (`"fileData"`).
    FileData(FileData),
    /// A call the model asks the client to make (`"functionCall"`).
    FunctionCall(FunctionCall),
    /// The result of a function call (`"functionResponse"`).
    FunctionResponse(FunctionResponse),
    /// Code the model wrote for a code executor (`"executableCode"`).
    ExecutableCode(ExecutableCode),
    /// What running [`ExecutableCode`] gave (`"codeExecutionResult"`).
    CodeExecutionResult(CodeExecutionResult),
    /// A kind of data this version of adk-rs does not know, or none at all (a part holding only a
    /// thought signature, say). Its keys are kept in [`Part::extra`] and written back unchanged.
    Other,
}

/// One piece of a [`Content`]: its data, and whether it is a thought.
///
/// ```
/// use adk_core::{Part, PartData};
///
/// let part: Part = serde_json::from_str(r#"{"text": "hmm", "thought": true}"#).unwrap();
/// assert!(part.thought);
/// assert!(matches!(part.data, PartData::Text(ref text) if text == "hmm"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What the part holds.
    pub data: PartData,
    /// Whether the part is the model's reasoning rather than its answer (`"thought": true`).
    pub thought: bool,
    /// An opaque signature of the model's reasoning, to be sent back with the part
    /// (`"thoughtSignature"`, base64).
    pub thought_signature: Option<Bytes>,
    /// Keys this version does not know (for example `videoMetadata`), kept so that nothing read is
    /// lost when the part is written again.
    pub extra: Map<String, Value>,
}

impl Part {
    /// A part that holds `data`.
    pub fn new(data: PartData) -> Self {
        Self {
            data,
            thought: false,
            thought_signature: None,
            extra: Map::new(),
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartData::Text(text.into()))
    }

    /// A thought (reasoning) text part.
    pub fn thought(text: impl Into<String>) -> Self {
        Self {
            thought: true,
            ..Self::text(text)
        }
    }

    /// An inline-bytes part.
    pub fn inline_data(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Self::new(PartData::InlineData(Blob::new(mime_type, data)))
    }

    /// A function-call part.
    pub fn function_call(call: FunctionCall) -> Self {
        Self::new(PartData::FunctionCall(call))
    }

    /// A function-response part.
    pub fn function_response(response: FunctionResponse) -> Self {
        Self::new(PartData::FunctionResponse(response))
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.data {
            PartData::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The function call, if this is a function-call part.
    pub fn as_function_call(&self) -> Option<&FunctionCall> {
        match &self.data {
            PartData::FunctionCall(call) => Some(call),
            _ => None,
        }
    }

    /// The function response, if this is a function-response part.
    pub fn as_function_response(&self) -> Option<&FunctionResponse> {
        match &self.data {
            PartData::FunctionResponse(response) => Some(response),
            _ => None,
        }
    }

    /// The inline bytes, if this is an inline-data part.
    pub fn as_inline_data(&self) -> Option<&Blob> {
        match &self.data {
            PartData::InlineData(blob) => Some(blob),
            _ => None,
        }
    }
}

/// The JSON keys of the data kinds, camelCase first, then the snake_case spelling accepted on input.
const DATA_KEYS: [(&str, &str); 7] = [
    ("text", "text"),
    ("inlineData", "inline_data"),
    ("fileData", "file_data"),
    ("functionCall", "function_call"),
    ("functionResponse", "function_response"),
    ("executableCode", "executable_code"),
    ("codeExecutionResult", "code_execution_result"),
];

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.data {
            PartData::Text(text) => map.serialize_entry("text", text)?,
            PartData::InlineData(blob) => map.serialize_entry("inlineData", blob)?,
            PartData::FileData(file) => map.serialize_entry("fileData", file)?,
            PartData::FunctionCall(call) => map.serialize_entry("functionCall", call)?,
            PartData::FunctionResponse(response) => {
                map.serialize_entry("functionResponse", response)?
            }
            PartData::ExecutableCode(code) => map.serialize_entry("executableCode", code)?,
            PartData::CodeExecutionResult(result) => {
                map.serialize_entry("codeExecutionResult", result)?
            }
            PartData::Other => {}
        }
        if self.thought {
            map.serialize_entry("thought", &true)?;
        }
        if let Some(signature) = &self.thought_signature {
            map.serialize_entry("thoughtSignature", &crate::base64_bytes::encode(signature))?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PartVisitor)
    }
}

struct PartVisitor;

impl PartVisitor {
    fn data_kind(key: &str) -> Option<usize> {
        DATA_KEYS
            .iter()
            .position(|(camel, snake)| key == *camel || key == *snake)
    }

    /// Reads the value of data key number `kind`; `None` when it is null.
    fn read_data<'de, A: MapAccess<'de>>(
        map: &mut A,
        kind: usize,
    ) -> Result<Option<PartData>, A::Error> {
        Ok(match kind {
            0 => map.next_value::<Option<String>>()?.map(PartData::Text),
            1 => map.next_value::<Option<Blob>>()?.map(PartData::InlineData),
            2 => map
                .next_value::<Option<FileData>>()?
                .map(PartData::FileData),
            3 => map
                .next_value::<Option<FunctionCall>>()?
                .map(PartData::FunctionCall),
            4 => map
                .next_value::<Option<FunctionResponse>>()?
                .map(PartData::FunctionResponse),
            5 => map
                .next_value::<Option<ExecutableCode>>()?
                .map(PartData::ExecutableCode),
            _ => map
                .next_value::<Option<CodeExecutionResult>>()?
                .map(PartData::CodeExecutionResult),
        })
    }
}

impl<'de> Visitor<'de> for PartVisitor {
    type Value = Part;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content part object holding one kind of data")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
        let mut part = Part::new(PartData::Other);
        let mut data_key: Option<&'static str> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if let Some(kind) = Self::data_kind(&key) {
                let Some(data) = Self::read_data(&mut map, kind)? else {
                    continue;
                };
                let name = DATA_KEYS[kind].0;
                if let Some(first) = data_key {
                    return Err(de::Error::custom(format!(
                        "a part holds exactly one kind of data, found both `{first}` and `{name}`"
                    )));
                }
                data_key = Some(name);
                part.data = data;
            } else if key == "thought" {
                part.thought = map.next_value::<Option<bool>>()?.unwrap_or(false);
            } else if key == "thoughtSignature" || key == "thought_signature" {
                part.thought_signature = map
                    .next_value::<Option<std::borrow::Cow<'de, str>>>()?
                    .map(|text| crate::base64_bytes::decode(&text))
                    .transpose()
                    .map_err(|error| {
                        de::Error::custom(format!("thoughtSignature is not base64: {error}"))
                    })?;
            } else {
                let value = map.next_value::<Value>()?;
                if !value.is_null() {
                    part.extra.insert(key.into_owned(), value);
                }
            }
        }
        Ok(part)
    }
}

/// Bytes with their MIME type (`"inlineData"`). `data` is base64 in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blob {
    /// The MIME type, for example `image/png`.
    #[serde(alias = "mime_type")]
    pub mime_type: String,
    /// The bytes.
    #[serde(with = "crate::base64_bytes")]
    pub data: Bytes,
    /// A name to show for the bytes; not sent to Gemini.
    #[serde(
        default,
        alias = "display_name",
        skip_serializing_if = "Option::is_none"
    )]
    pub display_name: Option<String>,
}

impl Blob {
    /// A blob of `mime_type` holding `data`.
    pub fn new(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Self {
            mime_type: mime_type.into(),
            data: data.into(),
            display_name: None,
        }
    }
}

/// A reference to a file by URI (`"fileData"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileData {
    /// Where the file is.
    #[serde(alias = "file_uri")]
    pub file_uri: String,
    /// The MIME type, when known.
    #[serde(default, alias = "mime_type", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A name to show for the file; not sent to Gemini.
    #[serde(
        default,
        alias = "display_name",
        skip_serializing_if = "Option::is_none"
    )]
    pub display_name: Option<String>,
}

/// A call of a function (a tool) that the model asks for.
///
/// ```
/// use adk_core::FunctionCall;
/// use serde_json::json;
///
/// let call = FunctionCall::new("get_weather", json!({"city": "Paris"}));
/// assert_eq!(call.args["city"], "Paris");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Ties the call to its response; generated as `adk-<uuid>` when the model gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<FunctionCallId>,
    /// The arguments, a JSON object.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// The function's name.
    pub name: String,
}

impl FunctionCall {
    /// A call of `name` with `args`; a non-object `args` is taken as no arguments.
    pub fn new(name: impl Into<String>, args: Value) -> Self {
        let args = match args {
            Value::Object(args) => args,
            _ => Map::new(),
        };
        Self {
            id: None,
            args,
            name: name.into(),
        }
    }

    /// Sets the call id.
    pub fn with_id(mut self, id: impl Into<FunctionCallId>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// The result of a [`FunctionCall`], sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionResponse {
    /// The id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<FunctionCallId>,
    /// The function's name.
    pub name: String,
    /// The result, a JSON object (ADK wraps a non-object result as `{"result": ...}`).
    #[serde(default)]
    pub response: Map<String, Value>,
}

impl FunctionResponse {
    /// The response of `name`; a non-object `response` is wrapped as `{"result": response}`.
    pub fn new(name: impl Into<String>, response: Value) -> Self {
        let response = match response {
            Value::Object(response) => response,
            other => Map::from_iter([("result".to_owned(), other)]),
        };
        Self {
            id: None,
            name: name.into(),
            response,
        }
    }

    /// Sets the id of the call this answers.
    pub fn with_id(mut self, id: impl Into<FunctionCallId>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// The programming language of [`ExecutableCode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum Language {
    /// Not given.
    #[default]
    LanguageUnspecified,
    /// Python 3.
    Python,
}

/// Code the model wrote for a code executor to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutableCode {
    /// The code's language.
    #[serde(default)]
    pub language: Language,
    /// The source code.
    pub code: String,
}

/// How running [`ExecutableCode`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum Outcome {
    /// Not given.
    #[default]
    OutcomeUnspecified,
    /// The code ran to completion.
    OutcomeOk,
    /// The code failed; `output` holds the error.
    OutcomeFailed,
    /// The code ran too long and was stopped.
    OutcomeDeadlineExceeded,
}

/// What running [`ExecutableCode`] gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeExecutionResult {
    /// How it ended.
    #[serde(default)]
    pub outcome: Outcome,
    /// Standard output, or the error when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(json: Value) -> Part {
        let part: Part = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&part).unwrap(), json);
        part
    }

    #[test]
    fn every_data_kind_round_trips() {
        round_trip(json!({"text": "hi"}));
        round_trip(json!({"inlineData": {"mimeType": "image/png", "data": "-w=="}}));
        round_trip(json!({"fileData": {"fileUri": "gs://b/f.pdf", "mimeType": "application/pdf"}}));
        round_trip(json!({"functionCall": {"id": "c1", "args": {"a": 1}, "name": "f"}}));
        round_trip(json!({"functionResponse": {"id": "c1", "name": "f", "response": {"r": 2}}}));
        round_trip(json!({"executableCode": {"language": "PYTHON", "code": "print(1)"}}));
        round_trip(json!({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}));
    }

    #[test]
    fn thoughts_and_signatures_round_trip() {
        let part = round_trip(json!({"text": "", "thought": true, "thoughtSignature": "AAEC"}));
        assert_eq!(part.thought_signature.as_deref(), Some(&[0u8, 1, 2][..]));
        let signature_only = round_trip(json!({"thoughtSignature": "AAEC"}));
        assert_eq!(signature_only.data, PartData::Other);
    }

    #[test]
    fn unknown_keys_are_kept_and_nulls_dropped() {
        let part: Part = serde_json::from_value(json!({
            "text": "t", "videoMetadata": {"fps": 1}, "fileData": null, "thought": null
        }))
        .unwrap();
        assert_eq!(part.extra["videoMetadata"], json!({"fps": 1}));
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            json!({"text": "t", "videoMetadata": {"fps": 1}})
        );
    }

    #[test]
    fn snake_case_input_is_accepted() {
        let part: Part = serde_json::from_value(json!({
            "inline_data": {"mime_type": "text/plain", "data": "aGk="}
        }))
        .unwrap();
        assert_eq!(part.as_inline_data().unwrap().data.as_ref(), b"hi");
    }

    #[test]
    fn two_kinds_of_data_are_an_error_naming_both() {
        let error =
            serde_json::from_value::<Part>(json!({"text": "a", "functionCall": {"name": "f"}}))
                .unwrap_err();
        let message = error.to_string();
        assert!(message.contains("exactly one kind of data"), "{message}");
        assert!(
            message.contains("`text`") && message.contains("`functionCall`"),
            "{message}"
        );
    }

    #[test]
    fn content_text_skips_thoughts_and_non_text() {
        let content = Content::new(
            Role::Model,
            [
                Part::thought("thinking"),
                Part::text("It is "),
                Part::function_call(FunctionCall::new("f", json!({}))),
                Part::text("sunny"),
            ],
        );
        assert_eq!(content.text().as_deref(), Some("It is sunny"));
        assert_eq!(Content::new(Role::Model, []).text(), None);
    }

    #[test]
    fn non_object_function_response_is_wrapped_as_result() {
        let response = FunctionResponse::new("f", json!("sunny"));
        assert_eq!(Value::Object(response.response), json!({"result": "sunny"}));
    }
}
