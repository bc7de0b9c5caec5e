//! [`SequentialAgent`]: runs its sub-agents one after another on the same branch.

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use serde_json::json;

use crate::agent_builder::{agent_base_accessors, agent_base_builder_methods};
use crate::agent_lifecycle::{AgentBase, checkpoint, ended, resumed_state};
use crate::next_on_heap::next_on_heap;

/// The key of a workflow agent's checkpoint that names the child running (ADK's
/// `current_sub_agent`).
pub(super) const CURRENT_SUB_AGENT: &str = "current_sub_agent";

/// Runs its sub-agents in order, each seeing what the earlier ones wrote; stops early when the
/// invocation ends.
///
/// In a resumable invocation it checkpoints `{"current_sub_agent": name}` before each child, and a
/// resumed run starts again at that child.
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
    agent_base_accessors!();

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let children = self.base.sub_agents.clone();
        self.base.run_with_callbacks(ctx, move |ctx| {
            Box::pin(try_stream! {
                // A resumed run starts at the child it checkpointed, which continues from its own
                // checkpoints; that child's start was recorded already.
                let resumed_at = resumed_state(&ctx)
                    .as_ref()
                    .and_then(|state| state.get(CURRENT_SUB_AGENT)?.as_str().map(str::to_owned))
                    .and_then(|name| children.iter().position(|child| child.name() == name));
                let mut resuming = resumed_at.is_some();
                for child in children.into_iter().skip(resumed_at.unwrap_or(0)) {
                    if resuming && ended(&ctx, child.as_ref()) {
                        // The invocation stopped right after this child ended.
                        resuming = false;
                        continue;
                    }
                    if ctx.is_resumable() && !resuming {
                        yield checkpoint(&ctx, json!({CURRENT_SUB_AGENT: child.name()}));
                    }
                    resuming = false;
                    let mut paused = false;
                    let mut events = child.clone().run(ctx.with_agent(child));
                    while let Some(event) = next_on_heap(&mut events).await {
                        let event = event?;
                        paused |= ctx.should_pause_after(&event);
                        yield *event;
                    }
                    if paused || ctx.is_ended() {
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
