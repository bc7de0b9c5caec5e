//! What every agent of this crate shares: its identity and sub-agents, the before/after-agent
//! callbacks that run around its body (the agent lifecycle), and, in a resumable
//! invocation, pausing after long-running calls and the checkpoints of its progress.

use std::sync::Arc;

use adk_core::internal::{AgentProgress, InvocationControl as _};
use adk_core::{Agent, CallbackContext, Content, Event, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use serde_json::Value;

use crate::callbacks::{AfterAgentCallback, BeforeAgentCallback, first_answer};
use crate::next_on_heap::next_on_heap;
use crate::plugin::Plugins;

/// An agent's name, description, sub-agents and lifecycle callbacks.
#[derive(Clone)]
pub(crate) struct AgentBase {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) sub_agents: Vec<Arc<dyn Agent>>,
    pub(crate) before_agent: Vec<BeforeAgentCallback>,
    pub(crate) after_agent: Vec<AfterAgentCallback>,
}

impl AgentBase {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            sub_agents: Vec::new(),
            before_agent: Vec::new(),
            after_agent: Vec::new(),
        }
    }

    /// Checks what every agent needs: a name that is an identifier, as the model refers to agents
    /// by name in `transfer_to_agent`.
    pub(crate) fn validate(&self) -> Result<()> {
        let mut chars = self.name.chars();
        let starts_well = chars
            .next()
            .is_some_and(|first| first.is_alphabetic() || first == '_');
        if !starts_well || !chars.all(|c| c.is_alphanumeric() || c == '_') {
            return Err(adk_core::Error::new(
                adk_core::ErrorKind::Config,
                format!(
                    "agent name '{}' is not an identifier: use letters, digits and '_', not starting with a digit",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// Runs `body` between the before- and after-agent callbacks.
    ///
    /// Plugins run first at each hook, then the agent's own callbacks. A before-callback that
    /// returns content skips the body: the content becomes the agent's event
    /// and the invocation ends. An after-callback's content becomes one more event. State the
    /// callbacks set travels in those events, or in an event of its own when they return nothing.
    ///
    /// In a resumable invocation, an event of the body with a long-running call pauses the
    /// invocation, and an agent whose run completes without a pause checkpoints that it ended, with
    /// an `end_of_agent` event. The calls of the pausing step still run. On the main branch the
    /// agent that made the call then ends the invocation, so no agent takes another step; on a
    /// parallel branch the siblings go on (as in ADK), and the paused agent stops because its last
    /// event, the one with the long-running call, is a final response. (A long-running tool that returns an interim result on a parallel
    /// branch lets its agent call the model once more; the flow would have to check for the pause
    /// to prevent it.)
    ///
    /// All of it runs in the agent's `invoke_agent` span.
    pub(crate) fn run_with_callbacks(
        &self,
        ctx: InvocationContext,
        body: impl FnOnce(InvocationContext) -> EventStream + Send + 'static,
    ) -> EventStream {
        adk_telemetry::trace_agent(ctx.clone(), self.run_callbacks_and_body(ctx, body))
    }

    fn run_callbacks_and_body(
        &self,
        ctx: InvocationContext,
        body: impl FnOnce(InvocationContext) -> EventStream + Send + 'static,
    ) -> EventStream {
        let before = self.before_agent.clone();
        let after = self.after_agent.clone();
        Box::pin(try_stream! {
            let plugins = ctx.invocation_data::<Plugins>();
            let agent = ctx.agent().clone();
            // Boxed, here and below: the context outlives the body's events, and inline it would
            // take room in this stream's state while the body waits on its model.
            let callback_ctx = Box::new(CallbackContext::new(ctx.clone()));
            let mut skipped_with = None;
            for plugin in plugins.iter() {
                skipped_with = plugin.before_agent(agent.as_ref(), &callback_ctx).await?;
                if skipped_with.is_some() {
                    break;
                }
            }
            if skipped_with.is_none() {
                skipped_with = first_answer(&before, |callback| callback(&callback_ctx))?;
            }
            let ends_run = skipped_with.is_some();
            if let Some(event) = callback_event(&ctx, &callback_ctx, skipped_with) {
                yield event;
            }
            if ends_run {
                ctx.end_invocation();
            }
            let mut paused_here = false;
            if !ctx.is_ended() {
                let mut events = body(ctx.clone());
                while let Some(event) = next_on_heap(&mut events).await {
                    match event {
                        Ok(event) => {
                            if ctx.should_pause_after(&event) {
                                paused_here = true;
                                ctx.pause();
                                if event.author == agent.name() && ctx.branch().is_none() {
                                    ctx.end_invocation();
                                }
                            }
                            yield *event;
                        }
                        Err(error) => {
                            for plugin in plugins.iter() {
                                plugin.on_agent_error(agent.as_ref(), &callback_ctx, &error).await?;
                            }
                            Err(error)?;
                        }
                    }
                }
            }
            if !ctx.is_ended() {
                let callback_ctx = Box::new(CallbackContext::new(ctx.clone()));
                let mut added = None;
                for plugin in plugins.iter() {
                    added = plugin.after_agent(agent.as_ref(), &callback_ctx).await?;
                    if added.is_some() {
                        break;
                    }
                }
                if added.is_none() {
                    added = first_answer(&after, |callback| callback(&callback_ctx))?;
                }
                if let Some(event) = callback_event(&ctx, &callback_ctx, added) {
                    yield event;
                }
            }
            if ctx.is_resumable() && !paused_here {
                ctx.set_agent_progress(agent.name(), Some(AgentProgress::Ended));
                let mut event = ctx.new_event();
                event.actions.end_of_agent = Some(true);
                yield event;
            }
        })
    }
}

/// The state the running agent of `ctx` checkpointed earlier in this invocation, when it is being
/// resumed.
pub(crate) fn resumed_state(ctx: &InvocationContext) -> Option<Value> {
    match ctx.agent_progress(ctx.agent_name()) {
        Some(AgentProgress::Running(state)) => Some(state),
        _ => None,
    }
}

/// Whether `agent` checkpointed its end earlier in the invocation of `ctx`.
pub(crate) fn ended(ctx: &InvocationContext, agent: &dyn Agent) -> bool {
    matches!(ctx.agent_progress(agent.name()), Some(AgentProgress::Ended))
}

/// Records `state` as the progress of the running agent of `ctx`, and the event that checkpoints it
/// in the session (`actions.agent_state`), from which a resumed invocation reads it back.
pub(crate) fn checkpoint(ctx: &InvocationContext, state: Value) -> Event {
    ctx.set_agent_progress(
        ctx.agent_name(),
        Some(AgentProgress::Running(state.clone())),
    );
    let mut event = ctx.new_event();
    event.actions.agent_state = Some(state);
    event
}

/// The event a lifecycle callback produced: its content with the state it set, or only the state,
/// or nothing when it did neither.
fn callback_event(
    ctx: &InvocationContext,
    callback_ctx: &CallbackContext,
    content: Option<Content>,
) -> Option<adk_core::Event> {
    let actions = callback_ctx.take_actions();
    if content.is_none() && actions.is_empty() {
        return None;
    }
    let mut event = ctx.new_event().with_actions(actions);
    event.response.content = content;
    Some(event)
}
