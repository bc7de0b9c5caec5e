//! One part at a time: an ADK [`Part`](adk_core::Part) to an A2A [`Part`] and back.

use adk_core::{
    Blob, CodeExecutionResult, ExecutableCode, FileData, FunctionCall, FunctionResponse, PartData,
};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;

use crate::types::{DataPart, FileContent, FilePart, FileSource, Metadata, Part, TextPart};

/// The prefix of the metadata keys ADK adds to A2A objects.
pub const ADK_METADATA_PREFIX: &str = "adk_";

/// The metadata key that says what an ADK data part holds.
pub const TYPE_KEY: &str = "adk_type";

/// The metadata key that marks a function call as long-running.
pub const IS_LONG_RUNNING_KEY: &str = "adk_is_long_running";

const THOUGHT_KEY: &str = "adk_thought";
const THOUGHT_SIGNATURE_KEY: &str = "adk_thought_signature";
const FUNCTION_CALL: &str = "function_call";
const FUNCTION_RESPONSE: &str = "function_response";
const EXECUTABLE_CODE: &str = "executable_code";
const CODE_EXECUTION_RESULT: &str = "code_execution_result";

/// A data part that is none of ADK's kinds travels as an inline text blob wrapped in these tags,
/// and is unwrapped again on the way out, as ADK Python does.
const DATA_PART_MIME_TYPE: &str = "text/plain";
const DATA_PART_START_TAG: &[u8] = b"<a2a_datapart_json>";
const DATA_PART_END_TAG: &[u8] = b"</a2a_datapart_json>";

/// What an ADK data part holds, by its `adk_type` metadata: `function_call`,
/// `function_response`, `executable_code`, `code_execution_result`, or `None`.
pub fn data_part_type(part: &Part) -> Option<&str> {
    match part {
        Part::Data(data) => data.metadata.as_ref()?.get(TYPE_KEY)?.as_str(),
        _ => None,
    }
}

/// The A2A part for an ADK part; `None` for a part that holds nothing A2A can carry.
///
/// ```
/// use adk_a2a::convert::adk_part_to_a2a;
/// use adk_core::{FunctionCall, Part};
/// use serde_json::json;
///
/// let call = Part::function_call(FunctionCall::new("get_weather", json!({"city": "Paris"})).with_id("c1"));
/// let part = adk_part_to_a2a(&call).unwrap();
/// assert_eq!(
///     serde_json::to_value(&part).unwrap(),
///     json!({"kind": "data", "data": {"id": "c1", "args": {"city": "Paris"}, "name": "get_weather"},
///            "metadata": {"adk_type": "function_call"}}),
/// );
/// ```
pub fn adk_part_to_a2a(part: &adk_core::Part) -> Option<Part> {
    let typed = |kind: &str, data: Value| -> Option<Part> {
        let Value::Object(data) = data else {
            return None;
        };
        let mut metadata = Metadata::new();
        metadata.insert(TYPE_KEY.to_owned(), Value::from(kind));
        if let Some(signature) = &part.thought_signature {
            metadata.insert(
                THOUGHT_SIGNATURE_KEY.to_owned(),
                Value::from(base64::engine::general_purpose::STANDARD.encode(signature)),
            );
        }
        Some(Part::Data(DataPart {
            data,
            metadata: Some(metadata),
        }))
    };
    match &part.data {
        PartData::Text(text) => {
            let metadata = part
                .thought
                .then(|| Metadata::from_iter([(THOUGHT_KEY.to_owned(), Value::Bool(true))]));
            Some(Part::Text(TextPart {
                text: text.clone(),
                metadata,
            }))
        }
        PartData::FileData(file) => {
            let mut content = FileContent::new(FileSource::Uri(file.file_uri.clone()));
            content.mime_type = file.mime_type.clone();
            content.name = file.display_name.clone();
            Some(Part::File(FilePart::new(content)))
        }
        PartData::InlineData(blob) => Some(blob_to_a2a(blob)),
        PartData::FunctionCall(call) => typed(FUNCTION_CALL, serde_json::to_value(call).ok()?),
        PartData::FunctionResponse(response) => {
            typed(FUNCTION_RESPONSE, serde_json::to_value(response).ok()?)
        }
        PartData::ExecutableCode(code) => typed(EXECUTABLE_CODE, serde_json::to_value(code).ok()?),
        PartData::CodeExecutionResult(result) => {
            typed(CODE_EXECUTION_RESULT, serde_json::to_value(result).ok()?)
        }
        _ => None,
    }
}

/// Inline bytes: a wrapped data part is unwrapped back into one, anything else is a file.
fn blob_to_a2a(blob: &Blob) -> Part {
    let data = blob.data.as_ref();
    if blob.mime_type == DATA_PART_MIME_TYPE
        && data.starts_with(DATA_PART_START_TAG)
        && data.ends_with(DATA_PART_END_TAG)
        && data.len() >= DATA_PART_START_TAG.len() + DATA_PART_END_TAG.len()
        && let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(
            &data[DATA_PART_START_TAG.len()..data.len() - DATA_PART_END_TAG.len()],
        )
    {
        return Part::data(object);
    }
    let mut content = FileContent::new(FileSource::Bytes(blob.data.clone()));
    content.mime_type = Some(blob.mime_type.clone());
    content.name = blob.display_name.clone();
    Part::File(FilePart::new(content))
}

/// The ADK part for an A2A part; `None` when a data part marked as an ADK kind does not hold
/// that kind (it is logged and skipped, as ADK Python skips it).
pub fn a2a_part_to_adk(part: &Part) -> Option<adk_core::Part> {
    match part {
        Part::Text(text) => {
            let mut adk = adk_core::Part::text(text.text.clone());
            adk.thought = text
                .metadata
                .as_ref()
                .and_then(|metadata| metadata.get(THOUGHT_KEY))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Some(adk)
        }
        Part::File(file) => {
            let data = match &file.file.source {
                FileSource::Uri(uri) => PartData::FileData(FileData {
                    file_uri: uri.clone(),
                    mime_type: file.file.mime_type.clone(),
                    display_name: file.file.name.clone(),
                }),
                FileSource::Bytes(bytes) => PartData::InlineData(Blob {
                    mime_type: file
                        .file
                        .mime_type
                        .clone()
                        .unwrap_or_else(|| "application/octet-stream".to_owned()),
                    data: bytes.clone(),
                    display_name: file.file.name.clone(),
                }),
            };
            Some(adk_core::Part::new(data))
        }
        Part::Data(data) => data_to_adk(data),
    }
}

fn data_to_adk(part: &DataPart) -> Option<adk_core::Part> {
    let value = Value::Object(part.data.clone());
    let kind = part
        .metadata
        .as_ref()
        .and_then(|metadata| metadata.get(TYPE_KEY))
        .and_then(Value::as_str);
    let read = |value: Value| -> Option<PartData> {
        let data = match kind? {
            FUNCTION_CALL => PartData::FunctionCall(from_value::<FunctionCall>(value)?),
            FUNCTION_RESPONSE => PartData::FunctionResponse(from_value::<FunctionResponse>(value)?),
            EXECUTABLE_CODE => PartData::ExecutableCode(from_value::<ExecutableCode>(value)?),
            CODE_EXECUTION_RESULT => {
                PartData::CodeExecutionResult(from_value::<CodeExecutionResult>(value)?)
            }
            _ => return None,
        };
        Some(data)
    };
    if let Some(data) = read(value) {
        let mut adk = adk_core::Part::new(data);
        adk.thought_signature = part
            .metadata
            .as_ref()
            .and_then(|metadata| metadata.get(THOUGHT_SIGNATURE_KEY))
            .and_then(Value::as_str)
            .and_then(|text| base64::engine::general_purpose::STANDARD.decode(text).ok())
            .map(Bytes::from);
        return Some(adk);
    }
    if kind.is_some_and(|kind| {
        [
            FUNCTION_CALL,
            FUNCTION_RESPONSE,
            EXECUTABLE_CODE,
            CODE_EXECUTION_RESULT,
        ]
        .contains(&kind)
    }) {
        tracing::warn!(
            kind,
            "an A2A data part does not hold what its adk_type says; skipped"
        );
        return None;
    }
    let json = serde_json::to_vec(&part.data).ok()?;
    let wrapped = [DATA_PART_START_TAG, json.as_slice(), DATA_PART_END_TAG].concat();
    Some(adk_core::Part::new(PartData::InlineData(Blob::new(
        DATA_PART_MIME_TYPE,
        wrapped,
    ))))
}

fn from_value<T: serde::de::DeserializeOwned>(value: Value) -> Option<T> {
    serde_json::from_value(value).ok()
}

/// Marks `part` as a long-running function call.
pub(crate) fn mark_long_running(part: &mut Part) {
    part.metadata_mut()
        .insert(IS_LONG_RUNNING_KEY.to_owned(), Value::Bool(true));
}

/// Whether `part` is a function call marked long-running.
pub(crate) fn is_long_running_call(part: &Part) -> bool {
    data_part_type(part) == Some(FUNCTION_CALL)
        && part
            .metadata()
            .and_then(|metadata| metadata.get(IS_LONG_RUNNING_KEY))
            .and_then(Value::as_bool)
            == Some(true)
}

/// The `id` of a function-call data part.
pub(crate) fn call_id(part: &Part) -> Option<&str> {
    match part {
        Part::Data(data) => data.data.get("id")?.as_str(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn round_trip(part: adk_core::Part) {
        let a2a = adk_part_to_a2a(&part).unwrap();
        assert_eq!(a2a_part_to_adk(&a2a).unwrap(), part);
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(adk_core::Part::text("hi"));
        round_trip(adk_core::Part::thought("hmm"));
        round_trip(adk_core::Part::inline_data("image/png", vec![0u8, 1, 2]));
        let mut call =
            adk_core::Part::function_call(FunctionCall::new("f", json!({"a": 1})).with_id("c1"));
        call.thought_signature = Some(Bytes::from_static(b"sig"));
        round_trip(call);
        round_trip(adk_core::Part::function_response(
            FunctionResponse::new("f", json!({"r": 2})).with_id("c1"),
        ));
    }

    #[test]
    fn a_foreign_data_part_travels_wrapped_and_comes_back() {
        let part = Part::data(Map::from_iter([("k".to_owned(), json!([1, 2]))]));
        let adk = a2a_part_to_adk(&part).unwrap();
        let blob = adk.as_inline_data().unwrap();
        assert!(blob.data.starts_with(DATA_PART_START_TAG));
        assert_eq!(adk_part_to_a2a(&adk).unwrap(), part);
    }

    #[test]
    fn a_mislabelled_data_part_is_skipped() {
        let mut part = Part::data(Map::from_iter([("nonsense".to_owned(), json!(1))]));
        part.metadata_mut()
            .insert(TYPE_KEY.to_owned(), json!("function_call"));
        assert_eq!(a2a_part_to_adk(&part), None);
    }
}
