//! The JSON-RPC 2.0 envelope of A2A, the parameters of its methods, and its error codes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Message, Metadata};

/// The method names this crate serves and calls.
pub mod methods {
    /// Send a message and get the task (or a message) back.
    pub const SEND: &str = "message/send";
    /// Send a message and stream the task's events back over SSE.
    pub const STREAM: &str = "message/stream";
    /// Get a task.
    pub const GET_TASK: &str = "tasks/get";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "tasks/cancel";
    /// Stream a running task's events again.
    pub const RESUBSCRIBE: &str = "tasks/resubscribe";
    /// The push-notification methods, which this crate does not support.
    pub const PUSH_NOTIFICATION_PREFIX: &str = "tasks/pushNotificationConfig/";
    /// The authenticated extended card, which this crate does not offer.
    pub const EXTENDED_CARD: &str = "agent/getAuthenticatedExtendedCard";
}

/// The error codes of JSON-RPC and of A2A.
pub mod error_codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// No such task.
    pub const TASK_NOT_FOUND: i64 = -32001;
    /// The task is finished and cannot be cancelled.
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    /// Push notifications are not supported.
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: i64 = -32003;
    /// The operation is not supported.
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    /// A content type is not supported.
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    /// The agent's response was invalid.
    pub const INVALID_AGENT_RESPONSE: i64 = -32006;
    /// No authenticated extended card is configured.
    pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
}

/// A request id: a string, a number, or null.
pub type RequestId = Value;

/// A JSON-RPC 2.0 request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id the response answers with.
    #[serde(default)]
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl JsonRpcRequest {
    /// A request of `method` with `params` and a fresh uuid id.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id: Value::String(uuid::Uuid::new_v4().to_string()),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A JSON-RPC 2.0 response: a result or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcResponse {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request it answers (null when the request could not be read).
    pub id: RequestId,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

impl JsonRpcResponse {
    /// A successful response to `id`.
    pub fn success(id: RequestId, result: Value) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// A failed response to `id`.
    pub fn failure(id: RequestId, error: JsonRpcError) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// A JSON-RPC error: a code from [`error_codes`], a message and optional data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcError {
    /// The code.
    pub code: i64,
    /// What was wrong.
    pub message: String,
    /// More detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// An error of `code` saying `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// The parameters of `message/send` and `message/stream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MessageSendParams {
    /// The message.
    pub message: Message,
    /// How to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl MessageSendParams {
    /// Parameters sending `message` with the default configuration.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            configuration: None,
            metadata: None,
        }
    }
}

/// How the server should answer `message/send`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MessageSendConfiguration {
    /// The MIME types the client accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// How many recent messages of the history to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<usize>,
    /// Where to push notifications (not supported here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<Value>,
    /// Wait for the task to finish or pause before answering (the default), or answer at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
}

/// The parameters of `tasks/cancel`: a task id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task.
    pub id: String,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskIdParams {
    /// Parameters naming task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            metadata: None,
        }
    }
}

/// The parameters of `tasks/get`: a task id and how much history to return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskQueryParams {
    /// The task.
    pub id: String,
    /// How many recent messages of the history to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<usize>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskQueryParams {
    /// Parameters naming task `id`, with its whole history.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            history_length: None,
            metadata: None,
        }
    }
}
