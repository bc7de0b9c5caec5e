//! [`ParallelAgent`]: runs its sub-agents concurrently, each on a branch of its own.

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use serde_json::json;

use crate::agent_builder::{agent_base_accessors, agent_base_builder_methods};
use crate::agent_lifecycle::{AgentBase, checkpoint, ended, resumed_state};
use crate::next_on_heap::next_on_heap;

/// Runs its sub-agents concurrently and yields their events as they come. Each child runs on the
/// branch `parallel_name.child_name` below the current one, so the children do not see each
/// other's events. Dropping the stream cancels every child.
///
/// In a resumable invocation it checkpoints that it started, and a resumed run runs only the
/// children that did not checkpoint their end.
pub struct ParallelAgent {
    base: AgentBase,
}

impl ParallelAgent {
    /// Starts building a parallel agent named `name`.
    pub fn builder(name: impl Into<String>) -> ParallelAgentBuilder {
        ParallelAgentBuilder {
            base: AgentBase::new(name),
        }
    }
}

impl Agent for ParallelAgent {
    agent_base_accessors!();

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let name = self.base.name.clone();
        let children = self.base.sub_agents.clone();
        self.base.run_with_callbacks(ctx, move |ctx| {
            Box::pin(try_stream! {
                if ctx.is_resumable() && resumed_state(&ctx).is_none() {
                    yield checkpoint(&ctx, json!({}));
                }
                // A resumed run skips the children that checkpointed their end.
                let streams = children
                    .into_iter()
                    .filter(|child| !ended(&ctx, child.as_ref()))
                    .map(|child| {
                        let branch = format!("{name}.{}", child.name());
                        child.clone().run(ctx.branched(child, &branch))
                    })
                    .collect::<Vec<_>>();
                let mut events = futures::stream::select_all(streams);
                while let Some(event) = next_on_heap(&mut events).await {
                    yield *event?;
                }
            })
        })
    }
}

/// Builds a [`ParallelAgent`]; made by [`ParallelAgent::builder`].
#[must_use]
pub struct ParallelAgentBuilder {
    base: AgentBase,
}

agent_base_builder_methods!(ParallelAgentBuilder, base);

impl ParallelAgentBuilder {
    /// Builds the agent; fails when the name is not an identifier.
    pub fn build(self) -> Result<ParallelAgent> {
        self.base.validate()?;
        Ok(ParallelAgent { base: self.base })
    }
}
