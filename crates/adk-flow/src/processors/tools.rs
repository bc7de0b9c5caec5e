//! `tools`: collects the agent's tools and its toolsets' tools for this step, and lets each change
//! the request (most add their declaration).

use std::sync::Arc;

use adk_core::{Error, ErrorKind, LlmRequest, ReadonlyContext, Result};
use adk_tool::Tool;

use crate::flow::{FlowToolContext, Step};

pub(super) async fn process(step: &mut Step, request: &mut LlmRequest) -> Result<()> {
    let mut tools: Vec<Arc<dyn Tool>> = step.agent.tools.clone();
    let readonly = ReadonlyContext::new(step.ctx.clone());
    for toolset in &step.agent.toolsets {
        tools.extend(toolset.tools(&readonly).await?);
    }
    let tool_ctx = FlowToolContext::new(step.ctx.clone(), None, None);
    for tool in tools {
        tool.process_request(&tool_ctx, request).await?;
        let name = tool.name().to_owned();
        if step.tools.insert(name.clone(), tool).is_some() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "agent '{}' offers two tools named '{name}' (check its toolsets); tool names must be unique",
                    step.agent.base.name
                ),
            ));
        }
    }
    // State a request hook set (preload_memory, say) belongs to no event; ADK drops it too.
    drop(tool_ctx);
    Ok(())
}
