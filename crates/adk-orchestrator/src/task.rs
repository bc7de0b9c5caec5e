//! [`Task`]: one unit of work of a plan, as the analyzer described it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One unit of work of a plan: what it is, which processor handles it, which tasks it waits for,
/// and how urgent it is.
///
/// ```
/// use adk_orchestrator::Task;
///
/// let task = Task::new("t2", "write", "writer")
///     .with_description("Write the summary.")
///     .with_dependencies(["t1"])
///     .with_priority(2)
///     .with_metadata("tone", "plain");
/// assert_eq!(task.dependencies, ["t1"]);
/// assert_eq!(task.metadata["tone"], "plain");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task's id, unique in its plan.
    pub id: String,
    /// What kind of work it is (`research`, `write`, ...), as the analyzer named it.
    #[serde(rename = "type")]
    pub task_type: String,
    /// The processor that handles it: a name registered with the orchestrator.
    pub processor_type: String,
    /// What to do, in the analyzer's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The ids of the tasks that must complete before this one starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,
    /// Lower numbers run first among tasks that are ready at the same time.
    #[serde(default)]
    pub priority: i64,
    /// Task-specific inputs, such as a tool's arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

impl Task {
    /// A task `id` of kind `task_type`, handled by the processor `processor_type`.
    pub fn new(
        id: impl Into<String>,
        task_type: impl Into<String>,
        processor_type: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            task_type: task_type.into(),
            processor_type: processor_type.into(),
            ..Self::default()
        }
    }

    /// Sets what to do.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the ids of the tasks this one waits for.
    pub fn with_dependencies<I, S>(mut self, dependencies: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.dependencies = dependencies.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the priority (lower runs first).
    pub fn with_priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }

    /// Adds a metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}
