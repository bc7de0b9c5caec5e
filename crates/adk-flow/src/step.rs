//! [`Step`]: what one step of the flow works with (the agent, its invocation, its model and the
//! tools it offers), read by the request and response processors, the task delegations and the
//! flow that runs the step.

use std::sync::Arc;

use adk_core::{Error, InvocationContext, Llm, Result};
use adk_tool::Tool;

use crate::{LlmAgent, ToolMap};

/// What one step works with: the agent, its invocation, its model and the tools it offers.
pub(crate) struct Step {
    pub(crate) agent: Arc<LlmAgent>,
    pub(crate) ctx: InvocationContext,
    pub(crate) model: Arc<dyn Llm>,
    pub(crate) tools: ToolMap,
    /// The error a tool-call hook failed with: the step stores the response event that holds the
    /// results of the other calls first, then ends the run with it.
    pub(crate) hook_failure: parking_lot::Mutex<Option<Error>>,
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
}
