//! [`NodeInput`]: what a node is triggered with (the user's message at `START`, a predecessor's
//! output after it), and how it becomes the typed argument of a function node or the message of
//! an agent node.

use adk_core::{Content, Part, Role};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::NodeError;

/// What a node is triggered with.
///
/// ```
/// use adk_core::Content;
/// use adk_workflow::NodeInput;
/// use serde_json::json;
///
/// // The user's message reads as its text, or as the JSON it holds.
/// let message = NodeInput::Content(Content::user(r#"{"n": 2}"#));
/// assert_eq!(message.parse::<String>().unwrap(), r#"{"n": 2}"#);
/// assert_eq!(message.parse::<serde_json::Value>().unwrap(), json!({"n": 2}));
/// // A predecessor's output reads as the value it is.
/// assert_eq!(NodeInput::Value(json!(3)).parse::<u32>().unwrap(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum NodeInput {
    /// No input.
    #[default]
    None,
    /// A message (the user's, at `START`).
    Content(Content),
    /// A value: a predecessor's output, a join's map of outputs, an item of a parallel worker.
    Value(Value),
}

impl NodeInput {
    /// The input as `T`: a value is deserialized; a message is read as its text when `T` reads
    /// a string, else as the JSON its text holds; no input reads as JSON `null`.
    ///
    /// # Errors
    ///
    /// A `WorkflowDataError` naming `T` when the input does not fit it.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, NodeError> {
        let value = match self {
            Self::None => Value::Null,
            Self::Value(value) => value.clone(),
            Self::Content(content) => {
                let text = content_text(content);
                let json = serde_json::from_str::<Value>(&text).ok();
                if let Some(json @ (Value::Object(_) | Value::Array(_))) = &json
                    && let Ok(parsed) = serde_json::from_value::<T>(json.clone())
                {
                    return Ok(parsed);
                }
                if let Ok(parsed) = serde_json::from_value::<T>(Value::String(text.clone())) {
                    return Ok(parsed);
                }
                json.unwrap_or(Value::String(text))
            }
        };
        serde_json::from_value(value).map_err(|error| {
            NodeError::new(
                "WorkflowDataError",
                format!(
                    "the node's input does not fit {}: {error}",
                    std::any::type_name::<T>()
                ),
            )
        })
    }

    /// The input as a JSON value: a message becomes its text (or the JSON its text holds, when it
    /// holds JSON).
    pub fn to_value(&self) -> Value {
        match self {
            Self::None => Value::Null,
            Self::Value(value) => value.clone(),
            Self::Content(content) => {
                let text = content_text(content);
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            }
        }
    }

    /// The input as a user message, for an agent: a message as it is, a string as its text, any
    /// other value as its JSON text (written as ADK Python writes it, so the model sees the same
    /// request); `None` for no input.
    pub fn to_user_content(&self) -> Option<Content> {
        let text = match self {
            Self::None | Self::Value(Value::Null) => return None,
            Self::Content(content) => {
                return Some(Content::new(Role::User, content.parts.iter().cloned()));
            }
            Self::Value(Value::String(text)) => text.clone(),
            Self::Value(value) => adk_flow::task::user_text(value),
        };
        Some(Content::new(Role::User, [Part::text(text)]))
    }

    /// Whether there is no input.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None | Self::Value(Value::Null))
    }
}

impl From<Value> for NodeInput {
    fn from(value: Value) -> Self {
        if value.is_null() {
            Self::None
        } else {
            Self::Value(value)
        }
    }
}

impl From<Content> for NodeInput {
    fn from(content: Content) -> Self {
        Self::Content(content)
    }
}

/// The text of a message's non-thought text parts.
pub(crate) fn content_text(content: &Content) -> String {
    content.text().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_content_of_each_input() {
        let text = |input: NodeInput| input.to_user_content().unwrap().text().unwrap();
        assert_eq!(text(NodeInput::Value(json!("hi"))), "hi");
        assert_eq!(text(NodeInput::Value(json!({"k": 1}))), r#"{"k": 1}"#);
        assert_eq!(text(NodeInput::Content(Content::user("m"))), "m");
        assert!(NodeInput::None.to_user_content().is_none());
    }

    #[test]
    fn a_mismatch_names_the_type() {
        let error = NodeInput::Value(json!("x")).parse::<u32>().unwrap_err();
        assert_eq!(error.code(), "WorkflowDataError");
        assert!(error.message().contains("u32"), "{}", error.message());
    }
}
