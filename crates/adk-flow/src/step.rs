//! [`Step`]: what one step of the flow works with (the agent, its invocation, its model and the
//! tools it offers), read by the request and response processors, the task delegations and the
//! flow that runs the step.

use std::sync::Arc;

use adk_core::{Agent as _, Content, Error, Event, InvocationContext, Llm, Result};
use adk_tool::Tool;

use crate::{LlmAgent, ToolMap};

/// The error code of the event that ends an agent's turn because the model repeated a tool call
/// past the loop guard's limit ([`LlmAgentBuilder::max_repeated_tool_calls`](crate::LlmAgentBuilder::max_repeated_tool_calls)).
pub const REPEATED_TOOL_CALLS: &str = "REPEATED_TOOL_CALLS";

/// What one step works with: the agent, its invocation, its model and the tools it offers.
pub(crate) struct Step {
    pub(crate) agent: Arc<LlmAgent>,
    pub(crate) ctx: InvocationContext,
    pub(crate) model: Arc<dyn Llm>,
    pub(crate) tools: ToolMap,
    /// The error a tool-call hook failed with: the step stores the response event that holds the
    /// results of the other calls first, then ends the run with it.
    pub(crate) hook_failure: parking_lot::Mutex<Option<Error>>,
    /// Why the agent stops: a call was repeated past the loop guard's limit. The step stores the
    /// response event first, then ends the agent's turn with this message.
    pub(crate) loop_stop: parking_lot::Mutex<Option<String>>,
    /// The agent's own tools and its toolsets' tools, in the order given: the order their request
    /// hooks run in.
    pub(crate) ordered_tools: Vec<Arc<dyn Tool>>,
}

impl Step {
    pub(crate) fn new(agent: Arc<LlmAgent>, ctx: InvocationContext) -> Result<Self> {
        let model = agent.resolve_model(&ctx)?;
        Ok(Self {
            agent,
            ctx,
            model,
            tools: ToolMap::new(),
            hook_failure: parking_lot::Mutex::new(None),
            loop_stop: parking_lot::Mutex::new(None),
            ordered_tools: Vec::new(),
        })
    }

    /// Ends the step with the failure of a tool-call hook, if one failed.
    pub(crate) fn check_hooks(&self) -> Result<()> {
        match self.hook_failure.lock().take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The event that ends the agent's turn when the loop guard stopped it: the agent's final
    /// answer saying why, with the error code [`REPEATED_TOOL_CALLS`], so that the user reads
    /// what happened and the next message starts a fresh turn.
    pub(crate) fn loop_stop_event(&self) -> Option<Event> {
        let message = self.loop_stop.lock().take()?;
        tracing::warn!(agent = self.agent.name(), "{message}");
        let mut event = self.ctx.new_event();
        event.response.content = Some(Content::model(message));
        event.response.error_code = Some(REPEATED_TOOL_CALLS.to_owned());
        Some(event)
    }
}
