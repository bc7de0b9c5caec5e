//! [`Task`]s, their [`TaskState`]s and [`Artifact`]s, and the events of a streamed task.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use super::kind::{ArtifactUpdateKind, MessageKind, StatusUpdateKind, TaskKind, kind_of};
use super::{Message, Metadata, Part};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TaskState {
    /// Received, not started.
    Submitted,
    /// Running.
    Working,
    /// Paused until the client sends more input (an answer, a confirmation).
    InputRequired,
    /// Done.
    Completed,
    /// Cancelled by the client.
    Canceled,
    /// Failed.
    Failed,
    /// Refused by the agent.
    Rejected,
    /// Paused until the client authenticates.
    AuthRequired,
    /// Not known.
    Unknown,
}

impl TaskState {
    /// Whether the task can change no more: completed, canceled, failed or rejected.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Canceled | Self::Failed | Self::Rejected
        )
    }

    /// Whether the task waits for the client: input or authentication required.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// The state as its JSON string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::AuthRequired => "auth-required",
            Self::Unknown => "unknown",
        }
    }
}

/// A task's state, with an optional message and when it was set (ISO 8601).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// What the agent says with it (the question when input is required, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status of `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(now_iso8601()),
        }
    }

    /// Attaches a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// The current time in ISO 8601, as A2A stamps statuses.
pub(crate) fn now_iso8601() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A unit of work an agent carries out for a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Its id, made by the server.
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Its current status.
    pub status: TaskStatus,
    /// The messages exchanged so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// What it produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default)]
    kind: TaskKind,
}

impl Task {
    /// A task `id` in `context_id` with `status` and nothing else yet.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, status: TaskStatus) -> Self {
        Self {
            id: id.into(),
            context_id: context_id.into(),
            status,
            history: None,
            artifacts: None,
            metadata: None,
            kind: TaskKind,
        }
    }
}

/// Something a task produced: a document, an answer, an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Artifact {
    /// Its id, unique within the task.
    pub artifact_id: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A description for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The content.
    pub parts: Vec<Part>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The URIs of extensions that contributed to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
}

impl Artifact {
    /// An artifact of `parts` with a fresh uuid id.
    pub fn new(parts: Vec<Part>) -> Self {
        Self {
            artifact_id: uuid::Uuid::new_v4().to_string(),
            name: None,
            description: None,
            parts,
            metadata: None,
            extensions: None,
        }
    }
}

/// A streamed change of a task's status; `final` marks the last event of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Whether this is the last event of the stream.
    #[serde(rename = "final")]
    pub is_final: bool,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default)]
    kind: StatusUpdateKind,
}

impl TaskStatusUpdateEvent {
    /// The status `status` of task `task_id` in `context_id`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
        is_final: bool,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            status,
            is_final,
            metadata: None,
            kind: StatusUpdateKind,
        }
    }
}

/// A streamed artifact, or a chunk of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact or chunk.
    pub artifact: Artifact,
    /// Whether the chunk extends an artifact sent before with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Whether this is the artifact's last chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default)]
    kind: ArtifactUpdateKind,
}

impl TaskArtifactUpdateEvent {
    /// Artifact `artifact` of task `task_id` in `context_id`, whole (its last chunk).
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact,
            append: None,
            last_chunk: Some(true),
            metadata: None,
            kind: ArtifactUpdateKind,
        }
    }
}

/// The result of `message/send`: a task, or a direct message when the agent made none.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SendMessageResult {
    /// `"kind": "task"`.
    Task(Task),
    /// `"kind": "message"`.
    Message(Message),
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        match kind_of(&value) {
            Some(TaskKind::TAG) => serde_json::from_value(value)
                .map(Self::Task)
                .map_err(D::Error::custom),
            Some(MessageKind::TAG) => serde_json::from_value(value)
                .map(Self::Message)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "a message/send result is a task or a message, found kind {other:?}"
            ))),
        }
    }
}

/// One event of `message/stream`: a task, a message, or an update of a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum StreamEvent {
    /// `"kind": "task"`.
    Task(Task),
    /// `"kind": "message"`.
    Message(Message),
    /// `"kind": "status-update"`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `"kind": "artifact-update"`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamEvent {
    /// Whether the event ends the stream: a message, a final status update, or a task in a
    /// terminal or interrupted state.
    pub fn ends_stream(&self) -> bool {
        match self {
            Self::Message(_) => true,
            Self::StatusUpdate(update) => update.is_final,
            Self::Task(task) => {
                task.status.state.is_terminal() || task.status.state.is_interrupted()
            }
            Self::ArtifactUpdate(_) => false,
        }
    }
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let read = |value| -> Result<Self, serde_json::Error> {
            Ok(match kind_of(&value) {
                Some(TaskKind::TAG) => Self::Task(serde_json::from_value(value)?),
                Some(MessageKind::TAG) => Self::Message(serde_json::from_value(value)?),
                Some(StatusUpdateKind::TAG) => Self::StatusUpdate(serde_json::from_value(value)?),
                Some(ArtifactUpdateKind::TAG) => {
                    Self::ArtifactUpdate(serde_json::from_value(value)?)
                }
                other => {
                    return Err(serde_json::Error::custom(format!(
                        "a stream event is a task, a message, a status-update or an artifact-update, found kind {other:?}"
                    )));
                }
            })
        };
        read(value).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_are_kebab_case() {
        assert_eq!(
            serde_json::to_value(TaskState::InputRequired).unwrap(),
            json!("input-required")
        );
        assert!(TaskState::Completed.is_terminal());
        assert!(TaskState::AuthRequired.is_interrupted());
    }

    #[test]
    fn stream_events_dispatch_on_kind() {
        let update: StreamEvent = serde_json::from_value(json!({
            "kind": "status-update", "taskId": "t", "contextId": "c", "final": true,
            "status": {"state": "completed"}
        }))
        .unwrap();
        assert!(update.ends_stream());
        let error = serde_json::from_value::<StreamEvent>(json!({"kind": "nonsense"})).unwrap_err();
        assert!(error.to_string().contains("\"nonsense\""), "{error}");
    }
}
