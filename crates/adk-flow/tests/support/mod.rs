//! Helpers of the flow's tests: tools made from closures, and agents built on a scripted model.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::sync::Arc;

use adk_core::Result;
use adk_flow::{LlmAgent, LlmAgentBuilder};
use adk_test::{ClosureTool, ScriptedModel};
use adk_tool::{Tool, ToolContext};
use serde_json::{Value, json};

/// A tool named `name` that runs `body`.
pub(crate) fn tool(
    name: &str,
    body: impl Fn(&ToolContext, Value) -> Result<Value> + Send + Sync + 'static,
) -> Arc<dyn Tool> {
    ClosureTool::shared(name, body)
}

/// A long-running tool named `name` that runs `body`.
pub(crate) fn long_running_tool(
    name: &str,
    body: impl Fn(&ToolContext, Value) -> Result<Value> + Send + Sync + 'static,
) -> Arc<dyn Tool> {
    ClosureTool::long_running(name, body)
}

/// `get_weather`: sunny everywhere, and remembers the city in `user:last_city`.
pub(crate) fn weather_tool() -> Arc<dyn Tool> {
    tool("get_weather", |ctx, args| {
        ctx.set_state("user:last_city", &args["city"])?;
        Ok(json!({"weather": "sunny", "city": args["city"]}))
    })
}

/// An agent builder on `model`.
pub(crate) fn agent(name: &str, model: &ScriptedModel) -> LlmAgentBuilder {
    LlmAgent::builder(name).model(model.clone())
}
