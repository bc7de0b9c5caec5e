//! Plugins: cross-cutting hooks (logging, policy, retries) that apply to every agent, model call
//! and tool call of a run, installed once on the runner instead of on each agent.
//!
//! At each hook the plugins run in order before the agent's own callbacks; the first one that
//! returns a value wins, and the rest, plugins and callbacks alike, are skipped.

use std::sync::Arc;

use adk_core::{
    Agent, CallbackContext, Content, Error, Event, InvocationContext, LlmRequest, LlmResponse,
    Result,
};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use serde_json::Value;

/// A set of hooks into every run of an app. Every hook has a default that does nothing.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// The plugin's name, unique among the runner's plugins.
    fn name(&self) -> &str;

    /// Sees the user's message before it is stored; returning content replaces it.
    async fn on_user_message(
        &self,
        _ctx: &InvocationContext,
        _message: &Content,
    ) -> Result<Option<Content>> {
        Ok(None)
    }

    /// Runs before the agent tree; returning content ends the run with it as the answer.
    async fn before_run(&self, _ctx: &InvocationContext) -> Result<Option<Content>> {
        Ok(None)
    }

    /// Sees each event before it is stored and yielded; returning an event replaces it.
    async fn on_event(&self, _ctx: &InvocationContext, _event: &Event) -> Result<Option<Event>> {
        Ok(None)
    }

    /// Runs after the run finished without error.
    async fn after_run(&self, _ctx: &InvocationContext) -> Result<()> {
        Ok(())
    }

    /// Runs when the run failed.
    async fn on_run_error(&self, _ctx: &InvocationContext, _error: &Error) -> Result<()> {
        Ok(())
    }

    /// Runs before an agent; returning content skips the agent, as its before-agent callback can.
    async fn before_agent(
        &self,
        _agent: &dyn Agent,
        _ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        Ok(None)
    }

    /// Runs after an agent; returning content adds it as one more event of the agent.
    async fn after_agent(
        &self,
        _agent: &dyn Agent,
        _ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        Ok(None)
    }

    /// Runs when an agent failed.
    async fn on_agent_error(
        &self,
        _agent: &dyn Agent,
        _ctx: &CallbackContext,
        _error: &Error,
    ) -> Result<()> {
        Ok(())
    }

    /// Runs before a model call and may change the request; returning a response skips the call.
    async fn before_model(
        &self,
        _ctx: &CallbackContext,
        _request: &mut LlmRequest,
    ) -> Result<Option<LlmResponse>> {
        Ok(None)
    }

    /// Runs after each model response; returning a response replaces it.
    async fn after_model(
        &self,
        _ctx: &CallbackContext,
        _response: &LlmResponse,
    ) -> Result<Option<LlmResponse>> {
        Ok(None)
    }

    /// Runs when a model call failed; returning a response recovers with it.
    async fn on_model_error(
        &self,
        _ctx: &CallbackContext,
        _request: &LlmRequest,
        _error: &Error,
    ) -> Result<Option<LlmResponse>> {
        Ok(None)
    }

    /// Runs before a tool and may change its arguments; returning a value skips the tool.
    async fn before_tool(
        &self,
        _tool: &dyn Tool,
        _args: &mut Value,
        _ctx: &ToolContext,
    ) -> Result<Option<Value>> {
        Ok(None)
    }

    /// Runs after a tool, with its result; returning a value replaces the result.
    async fn after_tool(
        &self,
        _tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        _result: &Value,
    ) -> Result<Option<Value>> {
        Ok(None)
    }

    /// Runs when a tool failed; returning a value recovers with it as the result.
    async fn on_tool_error(
        &self,
        _tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        _error: &Error,
    ) -> Result<Option<Value>> {
        Ok(None)
    }

    /// Releases what the plugin holds; the runner calls it when it is closed.
    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// The plugins of an invocation, in order: invocation data the runner seeds, which the flow reads
/// at each hook; an invocation without them has none. Public for the runner only, not part of
/// the API.
#[derive(Clone, Default)]
pub struct Plugins(Arc<[Arc<dyn Plugin>]>);

impl Plugins {
    /// The plugins `plugins`, run in this order.
    pub fn new(plugins: impl IntoIterator<Item = Arc<dyn Plugin>>) -> Self {
        Self(plugins.into_iter().collect())
    }

    /// The plugins, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Plugin>> {
        self.0.iter()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

adk_core::__into_shared!(
    /// A [`Plugin`] as a builder takes it: the plugin itself, an `Arc` of it, or an
    /// `Arc<dyn Plugin>`.
    IntoPlugin,
    into_plugin,
    Plugin,
    "`{Self}` is not a plugin"
);
