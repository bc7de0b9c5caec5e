//! The A2A 0.3 protocol types, as serde types whose JSON is the protocol's own: camelCase keys,
//! absent values omitted, every object that the protocol tags carrying its `kind`.
//!
//! - [`card`]: the agent card a server publishes at `/.well-known/agent-card.json`.
//! - [`message`]: messages and their parts (text, file, data).
//! - [`task`]: tasks, their states and artifacts, and the streaming events that update them.
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, the method parameters and the error codes.
//!
//! Unknown keys are ignored on input, as the official SDK's models ignore them; a value of the
//! wrong type or a missing required key is an error that names it.

pub mod card;
pub mod jsonrpc;
mod kind;
pub mod message;
pub mod task;

pub use card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
    SecurityScheme, TransportProtocol,
};
pub use jsonrpc::{
    JsonRpcError, JsonRpcRequest, JsonRpcResponse, MessageSendConfiguration, MessageSendParams,
    RequestId, TaskIdParams, TaskQueryParams, error_codes, methods,
};
pub use message::{DataPart, FileContent, FilePart, FileSource, Message, Part, Role, TextPart};
pub use task::{
    Artifact, SendMessageResult, StreamEvent, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

/// The A2A protocol version these types implement, as an agent card states it.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// Free-form metadata attached to protocol objects.
pub type Metadata = serde_json::Map<String, serde_json::Value>;
