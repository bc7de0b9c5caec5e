//! [`AgentProcessor`]: a task handled by an agent of the tree.

use std::sync::Arc;

use adk_core::{Agent, IntoAgent};
use async_stream::try_stream;
use futures::StreamExt as _;
use serde_json::Value;

use crate::{TaskInput, TaskProcessor, TaskStep, TaskStream};

/// Runs an agent on the task's branch. The agent reads its task from the event that starts the
/// task (the [brief](TaskInput::brief)), which the orchestrator stores on that branch just before;
/// its events pass through as the task's events, and the text of its last final response is the
/// task's output.
///
/// An `LlmAgent` that should see only its task, and not the rest of the session, is built with
/// `IncludeContents::None`.
pub struct AgentProcessor {
    agent: Arc<dyn Agent>,
    description: String,
}

impl AgentProcessor {
    /// A processor that runs `agent`, described to the analyzer by the agent's description.
    pub fn new(agent: impl IntoAgent) -> Self {
        let agent = agent.into_agent();
        let description = agent.description().to_owned();
        Self { agent, description }
    }

    /// Describes the processor to the analyzer in other words than the agent's description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
}

impl TaskProcessor for AgentProcessor {
    fn description(&self) -> &str {
        &self.description
    }

    fn agent(&self) -> Option<&Arc<dyn Agent>> {
        Some(&self.agent)
    }

    fn process(&self, input: TaskInput) -> TaskStream {
        let agent = self.agent.clone();
        Box::pin(try_stream! {
            let ctx = input.ctx.with_agent(agent.clone());
            let mut output = Value::Null;
            let mut events = agent.clone().run(ctx);
            while let Some(event) = events.next().await {
                let event = event?;
                if event.author == agent.name()
                    && event.is_final_response()
                    && !event.is_partial()
                    && let Some(text) = event.text()
                {
                    output = Value::String(text);
                }
                yield TaskStep::Event(Box::new(event));
            }
            yield TaskStep::Output(output);
        })
    }
}
