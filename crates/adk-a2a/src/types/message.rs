//! [`Message`] and its [`Part`]s: text, a file (inline bytes or a URI) or structured data.

use base64::Engine as _;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::Metadata;
use super::kind::MessageKind;

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client, on behalf of its user.
    User,
    /// The remote agent.
    Agent,
}

/// One turn of communication between a client and an agent.
///
/// ```
/// use adk_a2a::types::{Message, Part, Role};
///
/// let message = Message::new(Role::User, vec![Part::text("Hello")]).with_context_id("ctx-1");
/// let json = serde_json::to_value(&message).unwrap();
/// assert_eq!(json["kind"], "message");
/// assert_eq!(json["parts"][0], serde_json::json!({"kind": "text", "text": "Hello"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// Who sent it.
    pub role: Role,
    /// Its content.
    pub parts: Vec<Part>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The URIs of extensions that contributed to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Tasks it refers to for context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
    /// Its id, made by its sender.
    pub message_id: String,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    #[serde(default)]
    kind: MessageKind,
}

impl Message {
    /// A message of `role` with `parts` and a fresh uuid id.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self {
            role,
            parts,
            metadata: None,
            extensions: None,
            reference_task_ids: None,
            message_id: uuid::Uuid::new_v4().to_string(),
            task_id: None,
            context_id: None,
            kind: MessageKind,
        }
    }

    /// Sets the conversation it belongs to.
    pub fn with_context_id(mut self, context_id: impl Into<String>) -> Self {
        self.context_id = Some(context_id.into());
        self
    }

    /// Sets the task it belongs to.
    pub fn with_task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// Sets its id.
    pub fn with_message_id(mut self, message_id: impl Into<String>) -> Self {
        self.message_id = message_id.into();
        self
    }

    /// The concatenated text of its text parts, or `None` if it has none.
    pub fn text(&self) -> Option<String> {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        (!texts.is_empty()).then(|| texts.concat())
    }
}

/// A piece of a message or artifact, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Part {
    /// `"kind": "text"`.
    Text(TextPart),
    /// `"kind": "file"`.
    File(FilePart),
    /// `"kind": "data"`.
    Data(DataPart),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextPart {
            text: text.into(),
            metadata: None,
        })
    }

    /// A data part holding `data`.
    pub fn data(data: Metadata) -> Self {
        Self::Data(DataPart {
            data,
            metadata: None,
        })
    }

    /// The part's metadata.
    pub fn metadata(&self) -> Option<&Metadata> {
        match self {
            Self::Text(part) => part.metadata.as_ref(),
            Self::File(part) => part.metadata.as_ref(),
            Self::Data(part) => part.metadata.as_ref(),
        }
    }

    /// The part's metadata, to change (created empty when absent).
    pub fn metadata_mut(&mut self) -> &mut Metadata {
        let metadata = match self {
            Self::Text(part) => &mut part.metadata,
            Self::File(part) => &mut part.metadata,
            Self::Data(part) => &mut part.metadata,
        };
        metadata.get_or_insert_with(Metadata::new)
    }
}

/// Text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextPart {
    /// The text.
    pub text: String,
    /// Metadata of the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A file, inline or by URI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FilePart {
    /// The file.
    pub file: FileContent,
    /// Metadata of the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl FilePart {
    /// A file part holding `file`.
    pub fn new(file: FileContent) -> Self {
        Self {
            file,
            metadata: None,
        }
    }
}

/// Structured data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DataPart {
    /// The data, a JSON object.
    pub data: Metadata,
    /// Metadata of the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Where a file's content is: inline, or at a URI.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileSource {
    /// The bytes themselves (`"bytes"`, base64 in JSON).
    Bytes(Bytes),
    /// A URI to fetch them from (`"uri"`).
    Uri(String),
}

/// A file: its content or URI, with an optional name and MIME type. Exactly one of `bytes` and
/// `uri` is present in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawFile", into = "RawFile")]
#[non_exhaustive]
pub struct FileContent {
    /// The content or its URI.
    pub source: FileSource,
    /// The file's name.
    pub name: Option<String>,
    /// The file's MIME type.
    pub mime_type: Option<String>,
}

impl FileContent {
    /// A file of `source` with no name or MIME type.
    pub fn new(source: FileSource) -> Self {
        Self {
            source,
            name: None,
            mime_type: None,
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The JSON shape of [`FileContent`].
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

impl TryFrom<RawFile> for FileContent {
    type Error = String;

    fn try_from(raw: RawFile) -> Result<Self, String> {
        let source = match (raw.bytes, raw.uri) {
            (Some(bytes), None) => FileSource::Bytes(decode_base64(&bytes)?),
            (None, Some(uri)) => FileSource::Uri(uri),
            (Some(_), Some(_)) => {
                return Err("a file holds either `bytes` or `uri`, not both".to_owned());
            }
            (None, None) => return Err("a file needs `bytes` or `uri`".to_owned()),
        };
        Ok(Self {
            source,
            name: raw.name,
            mime_type: raw.mime_type,
        })
    }
}

impl From<FileContent> for RawFile {
    fn from(file: FileContent) -> Self {
        let (bytes, uri) = match file.source {
            FileSource::Bytes(bytes) => (
                Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
                None,
            ),
            FileSource::Uri(uri) => (None, Some(uri)),
        };
        Self {
            bytes,
            uri,
            mime_type: file.mime_type,
            name: file.name,
        }
    }
}

/// Decodes base64 in the standard or the URL-safe alphabet, padded or not.
fn decode_base64(text: &str) -> Result<Bytes, String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .map(Bytes::from)
        .ok_or_else(|| "a file's `bytes` is not base64".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_round_trip_with_their_kind() {
        for json in [
            json!({"kind": "text", "text": "hi", "metadata": {"adk_thought": true}}),
            json!({"kind": "file", "file": {"bytes": "AAEC", "mimeType": "image/png", "name": "a.png"}}),
            json!({"kind": "file", "file": {"uri": "gs://b/f.pdf", "mimeType": "application/pdf"}}),
            json!({"kind": "data", "data": {"name": "f", "args": {}}, "metadata": {"adk_type": "function_call"}}),
        ] {
            let part: Part = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(serde_json::to_value(&part).unwrap(), json);
        }
    }

    #[test]
    fn a_file_with_both_or_neither_source_is_an_error() {
        let both = json!({"kind": "file", "file": {"bytes": "AA==", "uri": "x"}});
        let error = serde_json::from_value::<Part>(both).unwrap_err();
        assert!(error.to_string().contains("not both"), "{error}");
        let neither = json!({"kind": "file", "file": {"name": "x"}});
        assert!(serde_json::from_value::<Part>(neither).is_err());
    }

    #[test]
    fn a_message_of_another_kind_is_refused() {
        let error = serde_json::from_value::<Message>(json!({
            "kind": "task", "role": "user", "parts": [], "messageId": "m"
        }))
        .unwrap_err();
        assert!(
            error.to_string().contains("expected kind \"message\""),
            "{error}"
        );
    }
}
