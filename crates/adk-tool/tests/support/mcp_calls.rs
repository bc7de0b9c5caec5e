//! What the MCP tests do with a toolset: list its tools, find one, call it, and read the
//! `ToolError` behind a failure.

use std::sync::Arc;

use adk_tool::mcp::McpToolset;
use adk_tool::{Tool, ToolError, Toolset};
use serde_json::Value;

use super::{Readonly as _, TestToolContext};

/// The tools `toolset` lists for a plain context.
pub async fn tools_of(toolset: &McpToolset) -> Vec<Arc<dyn Tool>> {
    toolset
        .tools(&TestToolContext::plain().readonly())
        .await
        .unwrap()
}

/// The tool named `name` among `tools`.
pub fn find<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a Arc<dyn Tool> {
    tools
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}` among {:?}", names(tools)))
}

/// The names of `tools`, in their order.
pub fn names(tools: &[Arc<dyn Tool>]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name()).collect()
}

/// Runs `tool` with `args` in a plain context.
pub async fn call(tool: &Arc<dyn Tool>, args: Value) -> adk_core::Result<Value> {
    tool.run(TestToolContext::plain(), args).await
}

/// The `ToolError` a failed call carries as its source.
pub fn tool_error(error: &adk_core::Error) -> &ToolError {
    error
        .downcast_source::<ToolError>()
        .expect("a ToolError source")
}
