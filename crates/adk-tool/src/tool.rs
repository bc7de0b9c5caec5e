//! The [`Tool`] and [`Toolset`] traits, and [`ProviderSide`], what a tool the model's provider
//! runs tells the flow about itself.

use std::sync::Arc;

use adk_core::{BuiltinTool, FunctionDeclaration, LlmRequest, ReadonlyContext, Result};
use async_trait::async_trait;
use serde_json::Value;

use crate::{ToolContext, ToolEffect};

/// Something the model can call.
///
/// A tool declares itself through [`declaration`](Tool::declaration) and runs through
/// [`run`](Tool::run). A tool's error is not the end of the run: the flow turns it into a function
/// response that tells the model what went wrong, so messages should say what to do differently.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The declaration sent to the model; `None` for a tool that only changes requests.
    fn declaration(&self) -> Option<FunctionDeclaration>;

    /// Whether the tool starts work that finishes later: its call gets no response in this turn,
    /// and the run pauses until one is sent back.
    fn is_long_running(&self) -> bool {
        false
    }

    /// What running the tool does outside the session (see [`ToolEffect`]): whether its calls are
    /// recorded in the effect journal, and whether an interrupted call may run again on resume.
    /// By default [`ToolEffect::Effectful`], the safe choice: such a call is never silently run
    /// twice.
    fn effect(&self) -> ToolEffect {
        ToolEffect::Effectful
    }

    /// For a tool the model's provider runs (Gemini's Google Search, say), what it is and how the
    /// flow may place it; `None` for every tool that runs here.
    fn provider_side(&self) -> Option<ProviderSide> {
        None
    }

    /// Changes the model request before it is sent. By default it adds the tool's declaration.
    async fn process_request(&self, ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        let _ = ctx;
        if let Some(declaration) = self.declaration() {
            request.append_tools([declaration]);
        }
        Ok(())
    }

    /// Runs the tool on the arguments the model gave.
    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value>;
}

/// How the flow treats a provider-side tool, as [`Tool::provider_side`] reports it.
///
/// Gemini before version 3 refuses a built-in tool in the same request as function declarations,
/// so the flow refuses an agent that has one beside function tools (or agents to transfer to) on
/// such a model, unless the tool asks to be wrapped: then the flow gives it to an agent of its own
/// and offers that agent as a tool instead, as ADK does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderSide {
    /// The tool the provider runs.
    pub tool: BuiltinTool,
    /// Beside other tools, run it through an agent of its own instead of refusing the agent.
    pub wrap_beside_other_tools: bool,
}

/// A source of tools, asked once per invocation (an MCP server, a generated API client, ...).
#[async_trait]
pub trait Toolset: Send + Sync {
    /// The toolset's name, for messages and filters.
    fn name(&self) -> &str;

    /// The tools available to the agent in this invocation.
    async fn tools(&self, ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>>;

    /// Releases what the toolset holds (connections, child processes).
    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

adk_core::__into_shared!(
    /// A [`Tool`] as a builder takes it: the tool itself, an `Arc` of it, or an `Arc<dyn Tool>`.
    ///
    /// ```
    /// use adk_tool::{FunctionTool, IntoTool, ToolContext};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Args {}
    ///
    /// async fn ping(_args: Args) -> Result<&'static str, String> {
    ///     Ok("pong")
    /// }
    ///
    /// let tool = FunctionTool::new("ping", "Answers pong.", ping).into_tool();
    /// assert_eq!(tool.name(), "ping");
    /// ```
    IntoTool,
    into_tool,
    Tool,
    "`{Self}` is not a tool: make it one with `#[adk::tool]` or `FunctionTool::new`"
);

adk_core::__into_shared!(
    /// A [`Toolset`] as a builder takes it: the toolset itself, an `Arc` of it, or an
    /// `Arc<dyn Toolset>`.
    IntoToolset,
    into_toolset,
    Toolset,
    "`{Self}` is not a toolset"
);
