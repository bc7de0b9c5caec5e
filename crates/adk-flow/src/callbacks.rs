//! The callbacks an agent runs around itself, its model calls and its tool calls.
//!
//! Callbacks are plain functions, as in ADK Go: they inspect and change what passes through them
//! and may short-circuit it by returning a value. They run in order; the first one that returns
//! `Some` wins and the rest are skipped. State they set through the context travels in the state
//! delta of the event they affect. Work that needs `.await` belongs in a tool or a plugin.

use std::sync::Arc;

use adk_core::{CallbackContext, Content, Error, LlmRequest, LlmResponse, Result};
use adk_tool::{Tool, ToolContext};
use serde_json::Value;

/// Runs before an agent. Returning content skips the agent's run: the content is emitted as the
/// agent's event and the invocation ends.
pub type BeforeAgentCallback =
    Arc<dyn Fn(&CallbackContext) -> Result<Option<Content>> + Send + Sync>;

/// Runs after an agent. Returning content emits it as one more event of the agent.
pub type AfterAgentCallback =
    Arc<dyn Fn(&CallbackContext) -> Result<Option<Content>> + Send + Sync>;

/// Runs before a model call and may change the request. Returning a response skips the call.
pub type BeforeModelCallback =
    Arc<dyn Fn(&CallbackContext, &mut LlmRequest) -> Result<Option<LlmResponse>> + Send + Sync>;

/// Runs after each model response. Returning a response replaces it.
pub type AfterModelCallback =
    Arc<dyn Fn(&CallbackContext, &LlmResponse) -> Result<Option<LlmResponse>> + Send + Sync>;

/// Runs when a model call fails. Returning a response recovers with it; otherwise the error ends
/// the run.
pub type OnModelErrorCallback =
    Arc<dyn Fn(&CallbackContext, &LlmRequest, &Error) -> Result<Option<LlmResponse>> + Send + Sync>;

/// Runs before a tool and may change its arguments. Returning a value skips the tool and uses the
/// value as its result.
pub type BeforeToolCallback =
    Arc<dyn Fn(&ToolContext, &dyn Tool, &mut Value) -> Result<Option<Value>> + Send + Sync>;

/// Runs after a tool succeeded, with its arguments and result. Returning a value replaces the result.
pub type AfterToolCallback =
    Arc<dyn Fn(&ToolContext, &dyn Tool, &Value, &Value) -> Result<Option<Value>> + Send + Sync>;

/// Runs when a tool failed, with its arguments and error. Returning a value recovers with it as the
/// result; otherwise the model is told the error.
pub type OnToolErrorCallback =
    Arc<dyn Fn(&ToolContext, &dyn Tool, &Value, &Error) -> Result<Option<Value>> + Send + Sync>;

/// The callbacks around an `LlmAgent`'s model calls and tool calls (its lifecycle callbacks live
/// with every agent's, in `AgentBase`).
#[derive(Clone, Default)]
pub(crate) struct Callbacks {
    pub(crate) before_model: Vec<BeforeModelCallback>,
    pub(crate) after_model: Vec<AfterModelCallback>,
    pub(crate) on_model_error: Vec<OnModelErrorCallback>,
    pub(crate) tools: ToolCallbacks,
}

/// The callbacks around tool calls, run by a [`ToolInvoker`](crate::ToolInvoker) after the
/// invocation's plugins: before a tool (may change its arguments, or answer in its place), after
/// it succeeded (may replace its result), and when it failed (may recover with a result).
///
/// An `LlmAgent` gathers its own through its builder; an agent that runs tools itself (the
/// orchestrator's run loop, say) takes one of these.
///
/// ```
/// use adk_flow::ToolCallbacks;
/// use serde_json::json;
///
/// let callbacks = ToolCallbacks::new()
///     .before_tool(|_ctx, tool, _args| {
///         Ok((tool.name() == "delete_everything").then(|| json!({"error": "not allowed"})))
///     })
///     .on_tool_error(|_ctx, _tool, _args, error| Ok(Some(json!({"error": error.message()}))));
/// # let _ = callbacks;
/// ```
#[derive(Clone, Default)]
pub struct ToolCallbacks {
    pub(crate) before: Vec<BeforeToolCallback>,
    pub(crate) after: Vec<AfterToolCallback>,
    pub(crate) on_error: Vec<OnToolErrorCallback>,
}

impl ToolCallbacks {
    /// No callbacks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a callback run before each tool call; see [`BeforeToolCallback`].
    pub fn before_tool(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &mut Value) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.before.push(Arc::new(callback));
        self
    }

    /// Adds a callback run after each successful tool call; see [`AfterToolCallback`].
    pub fn after_tool(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &Value, &Value) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.after.push(Arc::new(callback));
        self
    }

    /// Adds a callback run when a tool call fails; see [`OnToolErrorCallback`].
    pub fn on_tool_error(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &Value, &Error) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.on_error.push(Arc::new(callback));
        self
    }

    /// Whether there are no callbacks.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && self.on_error.is_empty()
    }
}

impl std::fmt::Debug for ToolCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallbacks")
            .field("before", &self.before.len())
            .field("after", &self.after.len())
            .field("on_error", &self.on_error.len())
            .finish()
    }
}

/// Calls `callbacks` in order until one answers (returns `Some`), and returns that answer.
pub(crate) fn first_answer<C, T>(
    callbacks: &[C],
    mut call: impl FnMut(&C) -> Result<Option<T>>,
) -> Result<Option<T>> {
    for callback in callbacks {
        if let Some(value) = call(callback)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}
