//! The service contracts: where sessions, artifacts and memories are kept. Implementations live in
//! `adk-session`; the flow and the runner see only these traits.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{
    Content, Event, InvocationId, JournalEntry, Part, Result, Session, SessionId, SessionKey,
    ToolIntent,
};

/// The prefix of the call id under which the effect journal keeps a request to cancel an
/// invocation ([`SessionService::request_cancel`]); the invocation's id follows it, so each
/// invocation of a session has its own. It has the prefix of the ids adk-rs generates, which the
/// flow never keeps from a provider, and no uuid follows it, so no real call has it.
pub const CANCEL_REQUEST_CALL_PREFIX: &str = "adk-cancel-request-";

/// The tool name the effect journal records with a cancel request.
const CANCEL_REQUEST_TOOL: &str = "adk_cancel_invocation";

/// The journal entry that keeps a request to cancel invocation `invocation_id`
/// ([`SessionService::request_cancel`]).
pub fn cancel_request_intent(invocation_id: &InvocationId) -> ToolIntent {
    ToolIntent::new(
        invocation_id.clone(),
        cancel_request_call_id(invocation_id).into(),
        CANCEL_REQUEST_TOOL,
        "",
    )
}

/// The call id of a request to cancel invocation `invocation_id`.
fn cancel_request_call_id(invocation_id: &InvocationId) -> String {
    format!("{CANCEL_REQUEST_CALL_PREFIX}{invocation_id}")
}

/// Signals that someone asked to cancel an invocation of one session
/// ([`SessionService::cancel_signals`]): each item says "read
/// [`cancel_requested`](SessionService::cancel_requested) again". An item may come for another
/// invocation of the session, or for nothing (after a lost connection, say), never too few.
pub type CancelSignals = futures::stream::BoxStream<'static, ()>;

/// What to create: a session of `user_id` in `app_name`, with an id or a generated one, and a state
/// to start from (any scope).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CreateSessionRequest {
    /// The app.
    pub app_name: String,
    /// The user.
    pub user_id: String,
    /// The id to use; the service generates one when `None`.
    pub session_id: Option<SessionId>,
    /// The initial state (`app:` and `user:` keys update the shared scopes).
    pub state: Map<String, Value>,
}

impl CreateSessionRequest {
    /// A request for a new session of `user_id` in `app_name`.
    pub fn new(app_name: impl Into<String>, user_id: impl Into<String>) -> Self {
        Self {
            app_name: app_name.into(),
            user_id: user_id.into(),
            ..Self::default()
        }
    }

    /// Uses `session_id` instead of a generated id.
    pub fn with_session_id(mut self, session_id: impl Into<SessionId>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Starts from `state`.
    pub fn with_state(mut self, state: Map<String, Value>) -> Self {
        self.state = state;
        self
    }
}

/// What to load: a session and which of its events.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct GetSessionRequest {
    /// The session.
    pub key: SessionKey,
    /// Only the most recent this many events; `Some(0)` means all of them, as in ADK (see
    /// [`recent_limit`](Self::recent_limit)).
    pub num_recent_events: Option<usize>,
    /// Only events with a timestamp at or after this one.
    pub after_timestamp: Option<f64>,
}

impl GetSessionRequest {
    /// A request for all of `key`'s events.
    pub fn new(key: SessionKey) -> Self {
        Self {
            key,
            num_recent_events: None,
            after_timestamp: None,
        }
    }

    /// Loads only the `count` most recent events; `0` loads all of them, as ADK reads it.
    pub fn recent(mut self, count: usize) -> Self {
        self.num_recent_events = Some(count);
        self
    }

    /// How many of the most recent events to load, `None` for all: ADK treats
    /// `num_recent_events = 0` as "no limit", and so does every backend here.
    ///
    /// ```
    /// use adk_core::{GetSessionRequest, SessionKey};
    ///
    /// let request = GetSessionRequest::new(SessionKey::new("app", "u", "s"));
    /// assert_eq!(request.clone().recent(3).recent_limit(), Some(3));
    /// assert_eq!(request.clone().recent(0).recent_limit(), None);
    /// assert_eq!(request.recent_limit(), None);
    /// ```
    pub fn recent_limit(&self) -> Option<usize> {
        self.num_recent_events.filter(|&count| count > 0)
    }

    /// Loads only the events at or after `timestamp`.
    pub fn after(mut self, timestamp: f64) -> Self {
        self.after_timestamp = Some(timestamp);
        self
    }
}

/// Keeps sessions: their state in every scope and their events.
///
/// Appending is split in two so that nobody holds a session lock across storage I/O:
/// [`persist_event`](SessionService::persist_event) writes to storage only, and
/// [`Session::apply_event`] updates an in-memory copy. [`append_event`](SessionService::append_event)
/// does both for the common case.
#[async_trait]
pub trait SessionService: Send + Sync {
    /// Creates a session. An id that exists already is an [`ErrorKind::AlreadyExists`](crate::ErrorKind::AlreadyExists) error.
    async fn create_session(&self, request: CreateSessionRequest) -> Result<Session>;

    /// Loads a session with its state and the events asked for; `None` if it does not exist.
    async fn get_session(&self, request: GetSessionRequest) -> Result<Option<Session>>;

    /// Lists the sessions of `user_id` in `app_name`, without their events.
    async fn list_sessions(&self, app_name: &str, user_id: &str) -> Result<Vec<Session>>;

    /// Deletes a session and its events; deleting a missing session is not an error.
    async fn delete_session(&self, key: &SessionKey) -> Result<()>;

    /// Stores `event` (not partial, `temp:` keys already removed) in session `key` and applies its
    /// state delta to every scope, in one transaction. `revision` is the session revision the writer
    /// last saw; if storage has moved on, nothing is written and the error is of kind
    /// [`ErrorKind::StaleSession`](crate::ErrorKind::StaleSession). Returns the new revision.
    async fn persist_event(&self, key: &SessionKey, revision: u64, event: &Event) -> Result<u64>;

    /// Records in the effect journal that the call of `intent` in session `key` is about to run
    /// (see [`ToolIntent`]). Recording a call again counts one more attempt. A service that keeps
    /// no journal records nothing (the default), and [`tool_journal`](Self::tool_journal) says so.
    ///
    /// A service that keeps a journal also records, in [`persist_event`](Self::persist_event)'s
    /// transaction, that each call the event answers with a function response is complete.
    async fn record_tool_intent(&self, key: &SessionKey, intent: &ToolIntent) -> Result<()> {
        let _ = (key, intent);
        Ok(())
    }

    /// The journal of invocation `invocation_id` in session `key`, in the order the intents were
    /// first recorded; `None` when this service keeps no journal (the default).
    async fn tool_journal(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<Option<Vec<JournalEntry>>> {
        let _ = (key, invocation_id);
        Ok(None)
    }

    /// Asks whoever runs invocation `invocation_id` of session `key` to cancel it, on any replica
    /// sharing this store: the request is kept in the effect journal, under a call id no model
    /// call has ([`CANCEL_REQUEST_CALL_PREFIX`] and the invocation's id), where
    /// [`cancel_requested`](Self::cancel_requested) finds it. Returns `false` when this service
    /// keeps no journal, so nobody else can see the request. A request stays with its invocation:
    /// a later resume of the same invocation finds it too.
    async fn request_cancel(&self, key: &SessionKey, invocation_id: &InvocationId) -> Result<bool> {
        if self.tool_journal(key, invocation_id).await?.is_none() {
            return Ok(false);
        }
        self.record_tool_intent(key, &cancel_request_intent(invocation_id))
            .await?;
        Ok(true)
    }

    /// Subscribes to the cancel requests of session `key`
    /// ([`request_cancel`](Self::request_cancel)), so a run learns it was cancelled when it is
    /// asked instead of asking the store over and over: the stream yields once for every request
    /// made after this call returns, on this process and, where the store can tell them, on
    /// other processes sharing it. `None` when this service cannot tell (the default): the caller
    /// then asks [`cancel_requested`](Self::cancel_requested) from time to time.
    async fn cancel_signals(&self, key: &SessionKey) -> Result<Option<CancelSignals>> {
        let _ = key;
        Ok(None)
    }

    /// Whether someone asked to cancel invocation `invocation_id` of session `key`
    /// ([`request_cancel`](Self::request_cancel)); always `false` for a service that keeps no
    /// journal.
    async fn cancel_requested(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<bool> {
        let journal = self.tool_journal(key, invocation_id).await?;
        let call_id = cancel_request_call_id(invocation_id);
        Ok(journal.is_some_and(|entries| {
            entries
                .iter()
                .any(|entry| entry.intent.function_call_id.as_str() == call_id)
        }))
    }

    /// Appends `event` to `session`, in storage and in memory, as ADK's `append_event` does: partial
    /// events are returned unchanged and not stored; `temp:` keys reach the in-memory state but not
    /// storage. Returns the event as stored.
    async fn append_event(&self, session: &mut Session, mut event: Event) -> Result<Event> {
        if event.is_partial() {
            return Ok(event);
        }
        let temp_delta = event.actions.state_delta.clone();
        event.trim_temp_state();
        let revision = self
            .persist_event(&session.key(), session.revision, &event)
            .await?;
        event.actions.state_delta = temp_delta;
        Ok(session.apply_event(event, revision).clone())
    }
}

/// Keeps versioned files (artifacts) of sessions. A file name starting with `user:` is shared by
/// every session of the user.
#[async_trait]
pub trait ArtifactService: Send + Sync {
    /// Saves a new version of `filename` and returns its number (the first is 0).
    async fn save_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        artifact: Part,
        custom_metadata: Map<String, Value>,
    ) -> Result<u64>;

    /// Loads version `version` of `filename`, or the latest when `None`; `None` if there is none.
    async fn load_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<Part>>;

    /// The file names of the session's artifacts and the user's `user:` artifacts, sorted.
    async fn list_artifact_keys(&self, session: &SessionKey) -> Result<Vec<String>>;

    /// Deletes every version of `filename`.
    async fn delete_artifact(&self, session: &SessionKey, filename: &str) -> Result<()>;

    /// The version numbers of `filename`, oldest first.
    async fn list_versions(&self, session: &SessionKey, filename: &str) -> Result<Vec<u64>>;

    /// What is known of version `version` of `filename` (the latest when `None`).
    async fn artifact_version(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<ArtifactVersion>>;
}

/// What is known of one version of an artifact.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ArtifactVersion {
    /// The version number.
    pub version: u64,
    /// The MIME type of the saved part, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata given when it was saved.
    #[serde(default)]
    pub custom_metadata: Map<String, Value>,
    /// When it was saved, in seconds since the Unix epoch.
    pub create_time: f64,
    /// Where the backend keeps it, when it has a URI for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_uri: Option<String>,
}

impl ArtifactVersion {
    /// Version `version`, saved at `create_time`.
    pub fn new(version: u64, create_time: f64) -> Self {
        Self {
            version,
            create_time,
            ..Self::default()
        }
    }
}

/// Long-term memory of a user across sessions.
#[async_trait]
pub trait MemoryService: Send + Sync {
    /// Adds what was said in `session` to the memory of its user.
    async fn add_session_to_memory(&self, session: &Session) -> Result<()>;

    /// Finds memories of `user_id` in `app_name` that match `query`.
    async fn search_memory(
        &self,
        app_name: &str,
        user_id: &str,
        query: &str,
    ) -> Result<SearchMemoryResponse>;
}

/// The memories a search found, best first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchMemoryResponse {
    /// The memories.
    pub memories: Vec<MemoryEntry>,
}

impl SearchMemoryResponse {
    /// A response holding `memories`.
    pub fn new(memories: Vec<MemoryEntry>) -> Self {
        Self { memories }
    }
}

/// One remembered piece of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MemoryEntry {
    /// What was said.
    pub content: Content,
    /// Who said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<f64>,
}

impl MemoryEntry {
    /// A memory of `content`.
    pub fn new(content: Content) -> Self {
        Self {
            content,
            author: None,
            timestamp: None,
        }
    }

    /// Sets who said it and when.
    pub fn with_origin(mut self, author: impl Into<String>, timestamp: f64) -> Self {
        self.author = Some(author.into());
        self.timestamp = Some(timestamp);
        self
    }
}

crate::__into_shared!(
    /// A [`SessionService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn SessionService>`.
    IntoSessionService,
    into_session_service,
    SessionService,
    "`{Self}` is not a session service"
);

crate::__into_shared!(
    /// An [`ArtifactService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn ArtifactService>`.
    IntoArtifactService,
    into_artifact_service,
    ArtifactService,
    "`{Self}` is not an artifact service"
);

crate::__into_shared!(
    /// A [`MemoryService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn MemoryService>`.
    IntoMemoryService,
    into_memory_service,
    MemoryService,
    "`{Self}` is not a memory service"
);
