//! The vocabulary and contracts of adk-rs.
//!
//! Every other crate of adk-rs speaks in these types:
//!
//! - **Content** ([`Content`], [`Part`], [`FunctionCall`], [`FunctionResponse`], [`Blob`]): messages
//!   shaped like Gemini's JSON.
//! - **Model contract** ([`Llm`], [`LlmRequest`], [`LlmResponse`], [`GenerateContentConfig`]): what an
//!   adapter receives and yields, with no provider named.
//! - **Events** ([`Event`], [`EventActions`]): the unit of a session's history and of a run's
//!   output. Their JSON is adk-rs's persistence and wire format and matches ADK Python's.
//! - **State and sessions** ([`State`], [`StateScope`], [`Session`]): `app:`, `user:` and `temp:`
//!   scoped state with delta tracking.
//! - **Agents and contexts** ([`Agent`], [`AgentTree`], [`InvocationContext`], [`ReadonlyContext`],
//!   [`CallbackContext`]).
//! - **Service contracts** ([`SessionService`], [`ArtifactService`], [`MemoryService`]).
//! - **Seams** ([`IdGen`], [`Clock`]) so that runs are deterministic in tests.
//!
//! This crate knows nothing of HTTP, databases or model providers: those live in the crates above
//! it, which see one another only through these traits.
//!
//! ```
//! use adk_core::{Content, Event, InvocationId};
//!
//! let event = Event::new(InvocationId::from("e-1"), "assistant")
//!     .with_content(Content::model("Hello"));
//! let json = serde_json::to_value(&event).unwrap();
//! assert_eq!(json["content"]["parts"][0]["text"], "Hello");
//! assert_eq!(json["actions"]["stateDelta"], serde_json::json!({}));
//! ```

mod agent;
mod base64_bytes;
mod content;
mod context;
mod error;
mod event;
mod ids;
mod model;
mod redact;
mod service;
mod session;
mod state;

pub use agent::{Agent, AgentTree, EventStream, USER_AUTHOR};
pub use content::{
    Blob, CodeExecutionResult, Content, ExecutableCode, FileData, FunctionCall, FunctionResponse,
    Language, Outcome, Part, PartData, Role,
};
pub use context::{
    AgentProgress, CallbackContext, DEFAULT_MAX_TOOL_RESULT_BYTES, InvocationContext,
    InvocationContextBuilder, ReadonlyContext, RunConfig, StreamingMode,
};
pub use error::{BoxError, Error, ErrorKind, Result};
pub use event::{Event, EventActions, EventCompaction, ToolConfirmation};
pub use ids::{
    CLIENT_FUNCTION_CALL_ID_PREFIX, Clock, EventId, FunctionCallId, INVOCATION_ID_PREFIX, IdGen,
    InvocationId, SessionId, SystemClock, UuidIdGen,
};
pub use model::{
    BuiltinTool, FinishReason, FunctionCallingConfig, FunctionCallingMode, FunctionDeclaration,
    GenerateContentConfig, Llm, LlmRequest, LlmResponse, LlmResponseStream, SafetySetting,
    ThinkingConfig, ThinkingLevel, ToolConfig, UsageMetadata,
};
pub use redact::url_without_credentials;
pub use service::{
    ArtifactService, ArtifactVersion, CreateSessionRequest, GetSessionRequest, MemoryEntry,
    MemoryService, SearchMemoryResponse, SessionService,
};
pub use session::{Session, SessionKey};
pub use state::{APP_PREFIX, ScopedState, State, StateScope, TEMP_PREFIX, USER_PREFIX};

// Types used across threads by every user of adk-rs: a compile-time check that they stay
// `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Event>();
    assert_send_sync::<Session>();
    assert_send_sync::<InvocationContext>();
    assert_send_sync::<CallbackContext>();
    assert_send_sync::<Error>();
};
