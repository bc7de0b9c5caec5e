//! [`SequentialAgent`]: runs its sub-agents one after another on the same branch.

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use futures::StreamExt as _;

use super::builder::agent_base_builder_methods;
use crate::agent_lifecycle::AgentBase;

/// Runs its sub-agents in order, each seeing what the earlier ones wrote; stops early when the
/// invocation ends.
pub struct SequentialAgent {
    base: AgentBase,
}

impl SequentialAgent {
    /// Starts building a sequential agent named `name`.
    pub fn builder(name: impl Into<String>) -> SequentialAgentBuilder {
        SequentialAgentBuilder {
            base: AgentBase::new(name),
        }
    }
}

impl Agent for SequentialAgent {
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
        self.base.run_with_callbacks(ctx, move |ctx| {
            Box::pin(try_stream! {
                for child in children {
                    let mut events = child.clone().run(ctx.with_agent(child));
                    while let Some(event) = events.next().await {
                        yield event?;
                    }
                    if ctx.is_ended() {
                        break;
                    }
                }
            })
        })
    }
}

/// Builds a [`SequentialAgent`]; made by [`SequentialAgent::builder`].
#[must_use]
pub struct SequentialAgentBuilder {
    base: AgentBase,
}

agent_base_builder_methods!(SequentialAgentBuilder, base);

impl SequentialAgentBuilder {
    /// Builds the agent; fails when the name is not an identifier.
    pub fn build(self) -> Result<SequentialAgent> {
        self.base.validate()?;
        Ok(SequentialAgent { base: self.base })
    }
}
