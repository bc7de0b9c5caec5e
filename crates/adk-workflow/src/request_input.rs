//! [`RequestInput`]: a node's question to the user (ADK's `RequestInput`), sent as a call of the
//! long-running function `adk_request_input` whose id is the question's id.

use serde_json::{Map, Value, json};

/// The function a workflow calls to ask the user for input.
pub const REQUEST_INPUT_FUNCTION: &str = "adk_request_input";

/// A question a node asks the user. The user answers with a function response to
/// `adk_request_input` carrying the question's id; the node then completes with the answer as its
/// output, or, when it is rerun on resume, runs again and reads the answer with
/// [`NodeContext::resume_input`](crate::NodeContext::resume_input).
///
/// ```
/// use adk_workflow::RequestInput;
/// use serde_json::json;
///
/// let question = RequestInput::new("approve-1")
///     .message("Approve the draft?")
///     .payload(json!({"draft": "..."}));
/// assert_eq!(question.interrupt_id, "approve-1");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestInput {
    /// The question's id, which the answer carries back.
    pub interrupt_id: String,
    /// What to show the user.
    pub message: Option<String>,
    /// Data for the user to see or fill in.
    pub payload: Option<Value>,
    /// The JSON Schema the answer should follow.
    pub response_schema: Option<Value>,
}

impl RequestInput {
    /// A question with id `interrupt_id`.
    pub fn new(interrupt_id: impl Into<String>) -> Self {
        Self {
            interrupt_id: interrupt_id.into(),
            message: None,
            payload: None,
            response_schema: None,
        }
    }

    /// Sets what to show the user.
    #[must_use]
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets the data shown with the question.
    #[must_use]
    pub fn payload(mut self, payload: Value) -> Self {
        self.payload = Some(payload);
        self
    }

    /// Sets the JSON Schema the answer should follow.
    #[must_use]
    pub fn response_schema(mut self, schema: Value) -> Self {
        self.response_schema = Some(schema);
        self
    }

    /// The arguments of the `adk_request_input` call, as ADK writes them.
    pub(crate) fn to_args(&self) -> Map<String, Value> {
        let args = json!({
            "interruptId": self.interrupt_id,
            "payload": self.payload,
            "message": self.message,
            "response_schema": self.response_schema,
        });
        match args {
            Value::Object(map) => map,
            _ => unreachable!("a json! object literal is an object"),
        }
    }
}
