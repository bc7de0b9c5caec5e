//! [`LoopAgent`]: runs its sub-agents in order, again and again.

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Agent, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use serde_json::json;

use super::sequential::CURRENT_SUB_AGENT;
use crate::agent_builder::{agent_base_accessors, agent_base_builder_methods};
use crate::agent_lifecycle::{AgentBase, checkpoint, ended, resumed_state};
use crate::next_on_heap::next_on_heap;

/// The key of a loop agent's checkpoint that counts the rounds done (ADK's `times_looped`).
const TIMES_LOOPED: &str = "times_looped";

/// Runs its sub-agents in order, repeatedly, until one of them escalates (the `exit_loop` tool
/// does), the invocation ends, or `max_iterations` rounds are done.
///
/// In a resumable invocation it checkpoints `{"current_sub_agent": name, "times_looped": n}` before
/// each child, and a resumed run starts again at that round and child.
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
    agent_base_accessors!();

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let children = self.base.sub_agents.clone();
        let max_iterations = self.max_iterations;
        self.base.run_with_callbacks(ctx, move |ctx| {
            Box::pin(try_stream! {
                // A resumed run starts at the round and child it checkpointed; that child's start
                // was recorded already.
                let resumed = resumed_state(&ctx);
                let resumed_at = resumed
                    .as_ref()
                    .and_then(|state| state.get(CURRENT_SUB_AGENT)?.as_str().map(str::to_owned))
                    .and_then(|name| children.iter().position(|child| child.name() == name));
                let mut iteration = match (&resumed, resumed_at) {
                    (Some(state), Some(_)) => state
                        .get(TIMES_LOOPED)
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|times| u32::try_from(times).ok())
                        .unwrap_or(0),
                    _ => 0,
                };
                let mut start = resumed_at.unwrap_or(0);
                let mut resuming = resumed_at.is_some();
                while max_iterations.is_none_or(|max| iteration < max) {
                    for child in children.iter().skip(start) {
                        if resuming && ended(&ctx, child.as_ref()) {
                            // The invocation stopped right after this child ended.
                            resuming = false;
                            continue;
                        }
                        if ctx.is_resumable() && !resuming {
                            yield checkpoint(
                                &ctx,
                                json!({CURRENT_SUB_AGENT: child.name(), TIMES_LOOPED: iteration}),
                            );
                        }
                        resuming = false;
                        let mut escalated = false;
                        let mut paused = false;
                        let mut events = child.clone().run(ctx.with_agent(child.clone()));
                        while let Some(event) = next_on_heap(&mut events).await {
                            let event = event?;
                            escalated |= event.actions.escalate == Some(true);
                            paused |= ctx.should_pause_after(&event);
                            yield *event;
                        }
                        if escalated || paused || ctx.is_ended() {
                            return;
                        }
                    }
                    start = 0;
                    iteration += 1;
                    // The next round runs every child afresh, whatever they checkpointed.
                    ctx.reset_sub_agent_progress(ctx.agent_name());
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
