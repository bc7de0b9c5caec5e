//! `tools`: collects the agent's tools and its toolsets' tools for this step, so that resumed calls
//! find them; then, once the history is in the request, lets each change the request (most add
//! their declaration, some add what they read from the history, as `load_artifacts` does).
//!
//! The request hooks run after the `contents` processor, as ADK Python runs them after its request
//! processors: a hook that reads the history or appends to it must see the contents of the step,
//! not an empty request that `contents` then replaces.

use std::sync::Arc;

use adk_core::{BuiltinTool, Error, ErrorKind, LlmRequest, ReadonlyContext, Result};
use adk_tool::{Tool, ToolContext, builtin};

use super::agent_transfer;
use crate::step::Step;
use crate::{AgentTool, LlmAgent};

/// The name of the agent that runs Google Search for an agent with other tools, as ADK names it.
const SEARCH_AGENT_NAME: &str = "google_search_agent";

/// Collects the tools of the step, in the order the agent gives them.
pub(super) async fn collect(step: &mut Step) -> Result<()> {
    let mut tools: Vec<Arc<dyn Tool>> = step.agent.tools.clone();
    let readonly = ReadonlyContext::new(step.ctx.clone());
    for toolset in &step.agent.toolsets {
        tools.extend(toolset.tools(&readonly).await?);
    }
    tools.extend(crate::task::implicit_tools(&step.agent));
    place_provider_tools(step, &mut tools)?;
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

/// Applies ADK's rules for provider-side tools. Gemini before version 3 refuses a built-in tool
/// in the same request as function declarations (the agent's other tools, or the transfer tool
/// when it has agents to transfer to). Beside other tools, a Google Search that asked for it is
/// replaced by an agent of its own on the step's model, offered as a tool whose grounding metadata
/// reaches the caller's answers, as ADK does whatever the model; any other built-in tool mixed
/// with functions on such a model is refused with what to do instead.
fn place_provider_tools(step: &Step, tools: &mut [Arc<dyn Tool>]) -> Result<()> {
    let transfers = agent_transfer::has_transfer_targets(step);
    if tools.len() < 2 && !transfers {
        return Ok(());
    }
    for tool in tools.iter_mut() {
        if let Some(side) = tool.provider_side()
            && side.wrap_beside_other_tools
            && side.tool == BuiltinTool::GoogleSearch
        {
            *tool = search_agent_tool(step)?;
        }
    }
    let declares_functions = transfers || tools.iter().any(|tool| tool.declaration().is_some());
    if !declares_functions || builtin::mixes_with_functions(step.model.name()) {
        return Ok(());
    }
    let Some((tool, side)) = tools
        .iter()
        .find_map(|tool| tool.provider_side().map(|side| (tool, side)))
    else {
        return Ok(());
    };
    Err(Error::new(
        ErrorKind::Config,
        format!(
            "agent '{}' has the built-in tool `{}` beside {}, and `{}` (Gemini before 3) runs a \
             built-in tool only without function declarations: give it to an agent of its own \
             and offer that agent as an `AgentTool`{}, or use a Gemini 3 model",
            step.agent.base.name,
            tool.name(),
            if transfers {
                "agents to transfer to"
            } else {
                "function tools"
            },
            step.model.name(),
            if side.tool == BuiltinTool::GoogleSearch {
                ", or build it with `bypass_multi_tools_limit(true)`"
            } else {
                ""
            }
        ),
    ))
}

/// An agent that answers with Google Search alone on the step's model, as a tool.
fn search_agent_tool(step: &Step) -> Result<Arc<dyn Tool>> {
    let agent = LlmAgent::builder(SEARCH_AGENT_NAME)
        .description("Searches the web with Google Search and answers from what it finds.")
        .instruction(
            "You are a search agent. Answer the request with Google Search, the built-in tool \
             of your model, and cite what you found. Call no functions.",
        )
        .model(step.model.clone())
        .tool(Arc::new(builtin::google_search()))
        .build()?;
    Ok(Arc::new(
        AgentTool::new(Arc::new(agent)).propagate_grounding_metadata(true),
    ))
}

/// Runs each tool's request hook, in order.
pub(super) async fn process_request(step: &Step, request: &mut LlmRequest) -> Result<()> {
    let tool_ctx = ToolContext::new(step.ctx.clone(), None);
    for tool in &step.ordered_tools {
        tool.process_request(&tool_ctx, request).await?;
    }
    // State a request hook set (preload_memory, say) belongs to no event; ADK drops it too.
    drop(tool_ctx);
    Ok(())
}
