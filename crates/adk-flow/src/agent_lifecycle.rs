//! What every agent of this crate shares: its identity and sub-agents, and the before/after-agent
//! callbacks that run around its body (seed 002's agent lifecycle).

use std::sync::Arc;

use adk_core::{Agent, CallbackContext, Content, EventStream, InvocationContext, Result};
use async_stream::try_stream;
use futures::StreamExt as _;

use crate::Plugins;
use crate::callbacks::{AfterAgentCallback, BeforeAgentCallback, first_some};

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
    pub(crate) fn run_with_callbacks(
        &self,
        ctx: InvocationContext,
        body: impl FnOnce(InvocationContext) -> EventStream + Send + 'static,
    ) -> EventStream {
        let before = self.before_agent.clone();
        let after = self.after_agent.clone();
        Box::pin(try_stream! {
            let plugins = Plugins::of(&ctx);
            let agent = ctx.agent().clone();
            let callback_ctx = CallbackContext::new(ctx.clone());
            let mut skipped_with = None;
            for plugin in plugins.iter() {
                skipped_with = plugin.before_agent(agent.as_ref(), &callback_ctx).await?;
                if skipped_with.is_some() {
                    break;
                }
            }
            if skipped_with.is_none() {
                skipped_with = first_some(&before, |callback| callback(&callback_ctx))?;
            }
            let ends_run = skipped_with.is_some();
            if let Some(event) = callback_event(&ctx, &callback_ctx, skipped_with) {
                yield event;
            }
            if ends_run {
                ctx.end_invocation();
            }
            if !ctx.is_ended() {
                let mut events = body(ctx.clone());
                while let Some(event) = events.next().await {
                    match event {
                        Ok(event) => yield event,
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
                let callback_ctx = CallbackContext::new(ctx.clone());
                let mut added = None;
                for plugin in plugins.iter() {
                    added = plugin.after_agent(agent.as_ref(), &callback_ctx).await?;
                    if added.is_some() {
                        break;
                    }
                }
                if added.is_none() {
                    added = first_some(&after, |callback| callback(&callback_ctx))?;
                }
                if let Some(event) = callback_event(&ctx, &callback_ctx, added) {
                    yield event;
                }
            }
        })
    }
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
