//! [`LoopAgent`]: runs its sub-agents in order, again and again.

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use futures::StreamExt as _;

use super::builder::agent_base_builder_methods;
use crate::agent_lifecycle::AgentBase;

/// Runs its sub-agents in order, repeatedly, until one of them escalates (the `exit_loop` tool
/// does), the invocation ends, or `max_iterations` rounds are done.
pub struct LoopAgent {
    base: AgentBase,
    max_iterations: Option<u32>,
}

impl LoopAgent {
    /// Starts building a loop agent named `name`.
    pub fn builder(name: impl Into<String>) -> LoopAgentBuilder {
        LoopAgentBuilder {
            base: AgentBase::new(name),
            max_iterations: None,
        }
    }
}

impl Agent for LoopAgent {
    fn name(&self) -> &str {
        &self.base.name
    }

    fn description(&self) -> &str {
        &self.base.description
    }

    fn sub_agents(&self) -> &[Arc<dyn Agent>] {
        &self.base.sub_agents
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let children = self.base.sub_agents.clone();
        let max_iterations = self.max_iterations;
        self.base.run_with_callbacks(ctx, move |ctx| {
            Box::pin(try_stream! {
                let mut iteration = 0;
                while max_iterations.is_none_or(|max| iteration < max) {
                    for child in &children {
                        let mut escalated = false;
                        let mut events = child.clone().run(ctx.with_agent(child.clone()));
                        while let Some(event) = events.next().await {
                            let event = event?;
                            escalated |= event.actions.escalate == Some(true);
                            yield event;
                        }
                        if escalated || ctx.is_ended() {
                            return;
                        }
                    }
                    iteration += 1;
                }
            })
        })
    }
}

/// Builds a [`LoopAgent`]; made by [`LoopAgent::builder`].
#[must_use]
pub struct LoopAgentBuilder {
    base: AgentBase,
    max_iterations: Option<u32>,
}

agent_base_builder_methods!(LoopAgentBuilder, base);

impl LoopAgentBuilder {
    /// Stops after this many rounds; without it the loop runs until a sub-agent escalates.
    pub fn max_iterations(mut self, max_iterations: u32) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Builds the agent; fails when the name is not an identifier.
    pub fn build(self) -> Result<LoopAgent> {
        self.base.validate()?;
        Ok(LoopAgent {
            base: self.base,
            max_iterations: self.max_iterations,
        })
    }
}
