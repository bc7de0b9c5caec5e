//! The [`TaskProcessor`] contract: what handles one task of a plan, and what it is given.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use adk_core::{Agent, Event, InvocationContext, Result};
use futures::stream::BoxStream;
use serde_json::Value;

use crate::Task;

/// What a processor gets for one attempt at a task.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaskInput {
    /// The task.
    pub task: Task,
    /// The user's request that the plan answers.
    pub request: String,
    /// The outputs of the tasks this one depends on, by task id.
    pub dependency_outputs: BTreeMap<String, Value>,
    /// Which attempt this is, from 1.
    pub attempt: u32,
    /// The invocation, on the task's own branch (`orchestrator.task_id`) and with the
    /// orchestrator as its agent: events made with [`InvocationContext::new_event`] belong to the
    /// task.
    pub ctx: InvocationContext,
}

impl TaskInput {
    /// The task as text for a model: what to do, its metadata, the results it builds on, and the
    /// user's request. The orchestrator shows it as the event that starts the task, which is how
    /// an agent processor learns its task.
    pub fn brief(&self) -> String {
        let task = &self.task;
        let mut brief = format!(
            "Task {} ({}): {}",
            task.id, task.task_type, task.description
        );
        if !task.metadata.is_empty() {
            brief.push_str("\nDetails:");
            for (key, value) in &task.metadata {
                let _ = write!(brief, "\n- {key}: {value}");
            }
        }
        if !self.dependency_outputs.is_empty() {
            brief.push_str("\nResults of the tasks it builds on:");
            for (id, output) in &self.dependency_outputs {
                let _ = write!(brief, "\n- {id}: {}", output_text(output));
            }
        }
        let _ = write!(brief, "\nThe user's request: {}", self.request);
        brief
    }
}

/// An output as text: a string as it is, anything else as JSON.
pub(crate) fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One item a processor yields: an event to show and store, or the task's output, which ends the
/// attempt.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskStep {
    /// An event of the task's work (boxed: an event is far larger than an output).
    Event(Box<Event>),
    /// The task's result, read by the tasks that depend on it.
    Output(Value),
}

/// What a processor yields for one attempt, in order. A processor that ends without an output
/// completes the task with `null`; an error fails the attempt. Dropping the stream stops the work.
pub type TaskStream = BoxStream<'static, Result<TaskStep>>;

/// Handles the tasks whose `processor` names it: an agent ([`AgentProcessor`](crate::AgentProcessor)),
/// a tool ([`ToolProcessor`](crate::ToolProcessor)) or a closure
/// ([`FnProcessor`](crate::FnProcessor)).
pub trait TaskProcessor: Send + Sync {
    /// What the processor does, shown to the analyzer so that it picks the right processor.
    fn description(&self) -> &str;

    /// The agent the processor runs, if it runs one: it joins the orchestrator's sub-agents, so
    /// that it is part of the agent tree.
    fn agent(&self) -> Option<&Arc<dyn Agent>> {
        None
    }

    /// Processes one attempt at a task.
    fn process(&self, input: TaskInput) -> TaskStream;
}
