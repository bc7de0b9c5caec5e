//! `tools`: collects the agent's tools and its toolsets' tools for this step, so that resumed calls
//! find them; then, once the history is in the request, lets each change the request (most add
//! their declaration, some add what they read from the history, as `load_artifacts` does).
//!
//! The request hooks run after the `contents` processor, as ADK Python runs them after its request
//! processors: a hook that reads the history or appends to it must see the contents of the step,
//! not an empty request that `contents` then replaces.

use std::sync::Arc;

use adk_core::{Error, ErrorKind, LlmRequest, ReadonlyContext, Result};
use adk_tool::Tool;

use crate::flow::{FlowToolContext, Step};

/// Collects the tools of the step, in the order the agent gives them.
pub(super) async fn collect(step: &mut Step) -> Result<()> {
    let mut tools: Vec<Arc<dyn Tool>> = step.agent.tools.clone();
    let readonly = ReadonlyContext::new(step.ctx.clone());
    for toolset in &step.agent.toolsets {
        tools.extend(toolset.tools(&readonly).await?);
    }
    tools.extend(crate::task::implicit_tools(&step.agent));
    for tool in &tools {
        let name = tool.name().to_owned();
        if step.tools.insert(name.clone(), tool.clone()).is_some() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "agent '{}' offers two tools named '{name}' (check its toolsets); tool names must be unique",
                    step.agent.base.name
                ),
            ));
        }
    }
    step.ordered_tools = tools;
    Ok(())
}

/// Runs each tool's request hook, in order.
pub(super) async fn process_request(step: &Step, request: &mut LlmRequest) -> Result<()> {
    let tool_ctx = FlowToolContext::new(step.ctx.clone(), None, None);
    for tool in &step.ordered_tools {
        tool.process_request(&tool_ctx, request).await?;
    }
    // State a request hook set (preload_memory, say) belongs to no event; ADK drops it too.
    drop(tool_ctx);
    Ok(())
}
