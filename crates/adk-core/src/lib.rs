#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
mod base64_bytes;
mod content;
mod credential;
mod embed;
mod error;
mod event;
mod ids;
mod journal;
mod model;
mod node;
pub mod ranking;
mod redact;
mod service;
mod session;
mod shared;
mod state;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

/// What the crates of adk-rs do to an invocation that agents and tools never do themselves.
///
/// Public only so that sibling crates can reach it; not part of the API, and changed in any
/// release.
#[doc(hidden)]
pub mod internal {
    pub use crate::agent::context::AgentProgress;
    pub use crate::agent::context::control::InvocationControl;
}

pub use agent::context::{
    CallbackContext, DEFAULT_MAX_REPEATED_TOOL_CALLS, DEFAULT_MAX_TOOL_RESULT_BYTES,
    InvocationContext, InvocationContextBuilder, ReadonlyContext, RunConfig, Services,
};
pub use agent::{Agent, AgentTree, EventStream, IntoAgent, USER_AUTHOR};
pub use content::{
    Blob, CodeExecutionResult, Content, ExecutableCode, FileData, FunctionCall, FunctionResponse,
    Language, Outcome, Part, PartData, Role,
};
pub use credential::{CredentialKey, CredentialService, IntoCredentialService, StoredCredential};
pub use embed::{Embedder, IntoEmbedder, check_embeddings};
pub use error::{BoxError, Error, ErrorKind, Result, cause_after};
pub use event::{Event, EventActions, EventCompaction, ToolConfirmation};
pub use ids::{
    CLIENT_FUNCTION_CALL_ID_PREFIX, Clock, EventId, FunctionCallId, INVOCATION_ID_PREFIX, IdGen,
    InvocationId, SessionId, SystemClock, UuidIdGen,
};
pub use journal::{JournalEntry, ToolIntent};
pub use model::{
    BuiltinTool, FinishReason, FunctionCallingConfig, FunctionCallingMode, FunctionDeclaration,
    GenerateContentConfig, IntoLlm, Llm, LlmRequest, LlmResponse, LlmResponseStream, SafetySetting,
    StreamingMode, ThinkingConfig, ThinkingLevel, ToolConfig, UsageMetadata,
};
pub use node::{NodeInfo, NodePath, Route, RouteValue};
pub use ranking::Ranking;
pub use redact::url_without_credentials;
pub use service::{
    ArtifactService, ArtifactVersion, CANCEL_REQUEST_CALL_PREFIX, CancelSignals,
    CreateSessionRequest, GetSessionRequest, IntoArtifactService, IntoMemoryService,
    IntoSessionService, MemoryEntry, MemoryService, SearchMemoryResponse, SessionService,
    cancel_request_intent,
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
