//! [`LoggingPlugin`]: traces every hook of a run with `tracing`.

use adk_core::{
    Agent, CallbackContext, Content, Error, Event, InvocationContext, LlmRequest, LlmResponse,
    Result,
};
use adk_flow::Plugin;
use adk_telemetry::content::capture_message_content;
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use serde_json::Value;

/// Logs what a run does through `tracing` (target `adk_runner::plugins::logging`): the start and
/// end of each run and its errors at `info`/`warn`, agents, model calls, tool calls and events at
/// `debug`. It never changes anything.
///
/// Tool arguments and results may hold personal data and secrets, so they are logged only when
/// message content capture is on (`adk_telemetry::content::capture_message_content`, the same
/// opt-in that lets spans record content); otherwise only their size is.
///
/// ```
/// use std::sync::Arc;
/// use adk_runner::plugins::LoggingPlugin;
///
/// let plugin = Arc::new(LoggingPlugin::new());
/// # let _ = plugin;
/// ```
#[derive(Debug, Clone, Default)]
pub struct LoggingPlugin {
    _private: (),
}

impl LoggingPlugin {
    /// A logging plugin.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl Plugin for LoggingPlugin {
    fn name(&self) -> &str {
        "logging"
    }

    async fn on_user_message(
        &self,
        ctx: &InvocationContext,
        message: &Content,
    ) -> Result<Option<Content>> {
        tracing::info!(
            invocation_id = %ctx.invocation_id(),
            session_id = %ctx.session_key().session_id,
            user_id = %ctx.session_key().user_id,
            parts = message.parts.len(),
            "user message"
        );
        Ok(None)
    }

    async fn before_run(&self, ctx: &InvocationContext) -> Result<Option<Content>> {
        tracing::info!(
            invocation_id = %ctx.invocation_id(),
            agent = ctx.agent_name(),
            "run started",
        );
        Ok(None)
    }

    async fn on_event(&self, ctx: &InvocationContext, event: &Event) -> Result<Option<Event>> {
        tracing::debug!(
            invocation_id = %ctx.invocation_id(),
            event_id = %event.id,
            author = %event.author,
            partial = event.is_partial(),
            final_response = event.is_final_response(),
            function_calls = event.function_calls().count(),
            "event"
        );
        Ok(None)
    }

    async fn after_run(&self, ctx: &InvocationContext) -> Result<()> {
        tracing::info!(
            invocation_id = %ctx.invocation_id(),
            paused = ctx.is_paused(),
            "run finished",
        );
        Ok(())
    }

    async fn on_run_error(&self, ctx: &InvocationContext, error: &Error) -> Result<()> {
        tracing::warn!(invocation_id = %ctx.invocation_id(), error = %error, "run failed");
        Ok(())
    }

    async fn before_agent(
        &self,
        agent: &dyn Agent,
        ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        tracing::debug!(
            invocation_id = %ctx.invocation_id(),
            agent = agent.name(),
            branch = ctx.branch(),
            "agent started",
        );
        Ok(None)
    }

    async fn after_agent(
        &self,
        agent: &dyn Agent,
        ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        tracing::debug!(
            invocation_id = %ctx.invocation_id(),
            agent = agent.name(),
            "agent finished",
        );
        Ok(None)
    }

    async fn on_agent_error(
        &self,
        agent: &dyn Agent,
        ctx: &CallbackContext,
        error: &Error,
    ) -> Result<()> {
        tracing::warn!(
            invocation_id = %ctx.invocation_id(),
            agent = agent.name(),
            error = %error,
            "agent failed",
        );
        Ok(())
    }

    async fn before_model(
        &self,
        ctx: &CallbackContext,
        request: &mut LlmRequest,
    ) -> Result<Option<LlmResponse>> {
        tracing::debug!(
            invocation_id = %ctx.invocation_id(),
            agent = ctx.agent_name(),
            contents = request.contents.len(),
            "model call"
        );
        Ok(None)
    }

    async fn after_model(
        &self,
        ctx: &CallbackContext,
        response: &LlmResponse,
    ) -> Result<Option<LlmResponse>> {
        tracing::debug!(
            invocation_id = %ctx.invocation_id(),
            agent = ctx.agent_name(),
            partial = response.is_partial(),
            "model response"
        );
        Ok(None)
    }

    async fn on_model_error(
        &self,
        ctx: &CallbackContext,
        _request: &LlmRequest,
        error: &Error,
    ) -> Result<Option<LlmResponse>> {
        tracing::warn!(
            invocation_id = %ctx.invocation_id(),
            agent = ctx.agent_name(),
            error = %error,
            "model call failed",
        );
        Ok(None)
    }

    async fn before_tool(
        &self,
        tool: &dyn Tool,
        args: &mut Value,
        _ctx: &ToolContext,
    ) -> Result<Option<Value>> {
        if capture_message_content() {
            tracing::debug!(tool = tool.name(), args = %args, "tool call");
        } else {
            tracing::debug!(
                tool = tool.name(),
                args_bytes = json_size(args),
                "tool call"
            );
        }
        Ok(None)
    }

    async fn after_tool(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        result: &Value,
    ) -> Result<Option<Value>> {
        if capture_message_content() {
            tracing::debug!(tool = tool.name(), result = %result, "tool result");
        } else {
            tracing::debug!(
                tool = tool.name(),
                result_bytes = json_size(result),
                "tool result"
            );
        }
        Ok(None)
    }

    async fn on_tool_error(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        error: &Error,
    ) -> Result<Option<Value>> {
        tracing::warn!(tool = tool.name(), error = %error, "tool failed");
        Ok(None)
    }
}

/// The length of `value` as JSON text, for logs that leave the content out.
fn json_size(value: &Value) -> usize {
    value.to_string().len()
}
