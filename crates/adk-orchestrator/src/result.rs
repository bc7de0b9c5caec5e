//! [`OrchestratorResult`]: what an orchestrator run did, task by task; also written to the
//! session state.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The outcome of one orchestrator run: the outputs of the tasks that completed, why the others
/// failed, the analyzer's reasoning and the phases it ran.
///
/// The orchestrator writes it, as JSON, to the session state under its result key (by default
/// [`DEFAULT_RESULT_KEY`](crate::DEFAULT_RESULT_KEY)), in its last event.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OrchestratorResult {
    /// The output of each completed task, by task id.
    pub completed_tasks: BTreeMap<String, Value>,
    /// Why each other task failed, by task id.
    pub failed_tasks: BTreeMap<String, TaskFailure>,
    /// The analyzer's reasoning: what it wrote besides the tasks.
    pub analysis: String,
    /// The ids of each phase's tasks, in the order the phases ran.
    pub phases: Vec<Vec<String>>,
    /// Whether the run was cancelled before every phase ran.
    pub cancelled: bool,
    /// Anything else worth keeping.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl OrchestratorResult {
    /// Whether every task completed.
    pub fn is_success(&self) -> bool {
        self.failed_tasks.is_empty() && !self.cancelled
    }

    /// The result stored in a state value, as the orchestrator wrote it.
    pub fn from_value(value: &Value) -> Option<Self> {
        Self::deserialize(value).ok()
    }
}

/// Why a task failed, after how many attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskFailure {
    /// What kind of failure it was.
    pub reason: FailureReason,
    /// What went wrong, from the last attempt.
    pub message: String,
    /// How many attempts were made (0 when the task never started).
    pub attempts: u32,
}

impl TaskFailure {
    /// A failure of `reason` after `attempts`, saying `message`.
    pub fn new(reason: FailureReason, message: impl Into<String>, attempts: u32) -> Self {
        Self {
            reason,
            message: message.into(),
            attempts,
        }
    }
}

impl fmt::Display for TaskFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.reason)
    }
}

/// What kind of failure ended a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureReason {
    /// The processor failed.
    Error,
    /// An attempt took longer than the task timeout.
    Timeout,
    /// No processor is registered under the task's processor name.
    NoProcessor,
    /// A task it depends on failed, so it did not run.
    DependencyFailed,
    /// The run was cancelled before the task completed.
    Cancelled,
}

impl FailureReason {
    /// The reason as a short lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::NoProcessor => "no_processor",
            Self::DependencyFailed => "dependency_failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
