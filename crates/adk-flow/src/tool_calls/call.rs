//! One function call: its hooks, the tool, and what becomes of a failure, in the call's
//! `execute_tool` span.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Error, ErrorKind, EventActions, EventId, FunctionCall, FunctionDeclaration, FunctionResponse,
    Part, PartData, Result, ToolConfirmation,
};
use adk_telemetry::ToolCall;
use adk_tool::{Tool, ToolContext, ToolEffect};
use async_trait::async_trait;
use futures::FutureExt as _;
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::repeated::{self, Verdict};
use super::{ToolInvoker, ToolMap, journal};
use crate::callbacks::first_answer;
use crate::plugin::Plugins;

/// What one call gave: its response part (none for a long-running tool that gave no result yet),
/// the actions its tool recorded, the tool's failure when no hook recovered from it, and the
/// message that ends the step when the call was repeated past the loop guard's limit. An error is
/// a hook's (a plugin or a callback failed).
pub(super) type Outcome = Result<CallOutcome>;

pub(super) struct CallOutcome {
    pub(super) part: Option<Part>,
    pub(super) actions: EventActions,
    pub(super) failure: Option<Error>,
    pub(super) stop: Option<String>,
}

/// Runs one call in its `execute_tool` span, recording its result, failure and duration.
pub(super) async fn run(
    invoker: ToolInvoker<'_>,
    call: &FunctionCall,
    response: &EventId,
    confirmation: Option<ToolConfirmation>,
) -> Outcome {
    let description = invoker
        .tools
        .get(&call.name)
        .map_or("", |tool| tool.description());
    let trace = ToolCall::start(invoker.ctx, description, call);
    let outcome = run_hooked(invoker, call, response, confirmation, &trace)
        .instrument(trace.span().clone())
        .await;
    match &outcome {
        Ok(outcome) => trace.finish(outcome.part.as_ref().and_then(function_response_of)),
        Err(error) => {
            trace.record_error(error);
            trace.finish(None);
        }
    }
    outcome
}

fn function_response_of(part: &Part) -> Option<&Map<String, Value>> {
    match &part.data {
        PartData::FunctionResponse(response) => Some(&response.response),
        _ => None,
    }
}

/// Runs one call: before-tool hooks, the tool (a failure, a panic or a timeout becomes an error
/// result, which on-tool-error hooks may replace), then after-tool hooks; at each hook plugins run
/// first. A call of an unknown tool goes to the on-tool-error hooks only, as ADK does, and is
/// answered with an error naming the available tools unless one recovers. A repeated call is
/// answered by the loop guard without any hook: with the latest result while within the
/// limit, with an error (and the message that ends the step) past it.
async fn run_hooked(
    invoker: ToolInvoker<'_>,
    call: &FunctionCall,
    response_id: &EventId,
    confirmation: Option<ToolConfirmation>,
    trace: &ToolCall,
) -> Outcome {
    let ctx = invoker.ctx;
    let tool_ctx = ToolContext::with_confirmation(ctx.clone(), call.id.clone(), confirmation);
    let plugins = ctx.invocation_data::<Plugins>();
    let hooks = Hooks {
        plugins: &plugins,
        callbacks: invoker.callbacks,
        ctx: &tool_ctx,
    };
    let Some(tool) = invoker.tools.get(&call.name) else {
        let missing = MissingTool {
            name: call.name.clone(),
        };
        let error = Error::new(ErrorKind::Tool, tool_not_found(&call.name, invoker.tools));
        trace.record_error(&error);
        let args = Value::Object(call.args.clone());
        let (result, failure) = hooks.recover(&missing, &args, error).await?;
        return Ok(CallOutcome {
            part: Some(response_part(call, result)),
            actions: tool_ctx.take_actions(),
            failure,
            stop: None,
        });
    };
    let verdict = repeated::verdict(ctx, invoker.max_repeated_calls, call, response_id);
    let first = matches!(verdict, Verdict::First);
    let (response, stop) = match verdict {
        Verdict::Run | Verdict::First => (None, None),
        Verdict::Replay(response) => (Some(response), None),
        Verdict::Stop { response, message } => (Some(response), Some(message)),
    };
    if let Some(response) = response {
        return Ok(CallOutcome {
            part: Some(response_part(call, response)),
            actions: EventActions::default(),
            failure: None,
            stop,
        });
    }
    if let Some(response) = tool_ctx
        .tool_confirmation()
        .and_then(|confirmation| journal::declined(call, confirmation))
    {
        return Ok(CallOutcome {
            part: Some(response_part(call, response)),
            actions: EventActions::default(),
            failure: None,
            stop: None,
        });
    }
    let mut args = Value::Object(call.args.clone());

    // Only an answer the tool (or a before-hook) gave is given back to a repeat: a failure,
    // even one a hook recovered from, may pass, so a repeat runs the tool again.
    let mut answered = true;
    let (result, failure) = match hooks.before(tool.as_ref(), &mut args).await? {
        Some(result) => (result, None),
        None => {
            // The intent is stored before the tool starts: a call whose intent cannot be
            // recorded does not run, so that no effect ever goes unrecorded.
            let ran = match journal::record_intent(ctx, tool.as_ref(), call).await {
                Ok(()) => run_tool(tool, tool_ctx.clone(), args.clone(), invoker.timeout).await,
                Err(error) => Err(error),
            };
            match ran {
                Ok(result) => (result, None),
                Err(error) => {
                    answered = false;
                    trace.record_error(&error);
                    hooks.recover(tool.as_ref(), &args, error).await?
                }
            }
        }
    };
    let result = match hooks.after(tool.as_ref(), &args, &result).await? {
        Some(replaced) => replaced,
        None => result,
    };

    let actions = tool_ctx.take_actions();
    if tool.is_long_running() && result.is_null() {
        return Ok(CallOutcome {
            part: None,
            actions,
            failure,
            stop: None,
        });
    }
    if first && answered {
        repeated::record(ctx, call, &result);
    }
    Ok(CallOutcome {
        part: Some(response_part(call, result)),
        actions,
        failure,
        stop: None,
    })
}

/// The hooks of one call: the invocation's plugins first, then the invoker's callbacks; the first
/// that gives a value wins.
struct Hooks<'a> {
    plugins: &'a Plugins,
    callbacks: Option<&'a crate::ToolCallbacks>,
    ctx: &'a ToolContext,
}

impl Hooks<'_> {
    async fn before(&self, tool: &dyn Tool, args: &mut Value) -> Result<Option<Value>> {
        for plugin in self.plugins.iter() {
            if let Some(result) = plugin.before_tool(tool, args, self.ctx).await? {
                return Ok(Some(result));
            }
        }
        let Some(callbacks) = self.callbacks else {
            return Ok(None);
        };
        first_answer(&callbacks.before, |callback| callback(self.ctx, tool, args))
    }

    async fn after(&self, tool: &dyn Tool, args: &Value, result: &Value) -> Result<Option<Value>> {
        for plugin in self.plugins.iter() {
            if let Some(replaced) = plugin.after_tool(tool, args, self.ctx, result).await? {
                return Ok(Some(replaced));
            }
        }
        let Some(callbacks) = self.callbacks else {
            return Ok(None);
        };
        first_answer(&callbacks.after, |callback| {
            callback(self.ctx, tool, args, result)
        })
    }

    /// The result of a failed call: the first on-tool-error hook that recovers gives it (and the
    /// call did not fail), otherwise the error itself as `{"error": message}`.
    async fn recover(
        &self,
        tool: &dyn Tool,
        args: &Value,
        error: Error,
    ) -> Result<(Value, Option<Error>)> {
        for plugin in self.plugins.iter() {
            if let Some(recovered) = plugin.on_tool_error(tool, args, self.ctx, &error).await? {
                return Ok((recovered, None));
            }
        }
        if let Some(callbacks) = self.callbacks
            && let Some(recovered) = first_answer(&callbacks.on_error, |callback| {
                callback(self.ctx, tool, args, &error)
            })?
        {
            return Ok((recovered, None));
        }
        Ok((json!({"error": error.message()}), Some(error)))
    }
}

/// What the on-tool-error hooks see for a call of a tool that is not on offer: a tool of the
/// called name that cannot run.
struct MissingTool {
    name: String,
}

#[async_trait]
impl Tool for MissingTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn effect(&self) -> ToolEffect {
        // It never runs a tool.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        "a tool the agent does not have"
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        None
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        Err(Error::new(
            ErrorKind::Tool,
            format!("tool '{}' is not registered with this agent", self.name),
        ))
    }
}

/// Runs the tool within `timeout`, turning a panic into an error so that one faulty tool cannot
/// end the run.
async fn run_tool(
    tool: &Arc<dyn Tool>,
    ctx: ToolContext,
    args: Value,
    timeout: Option<Duration>,
) -> Result<Value> {
    let running = AssertUnwindSafe(tool.run(ctx, args)).catch_unwind();
    let finished = match timeout {
        Some(limit) => tokio::time::timeout(limit, running).await.map_err(|_| {
            Error::new(
                ErrorKind::Tool,
                format!(
                    "tool '{}' did not answer within {limit:?} and was stopped; it may succeed \
                     with a smaller request or later",
                    tool.name()
                ),
            )
        })?,
        None => running.await,
    };
    finished.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Err(Error::new(
            ErrorKind::Tool,
            format!("tool '{}' panicked: {message}", tool.name()),
        ))
    })
}

/// The function response part that answers `call` with `result`.
pub(super) fn response_part(call: &FunctionCall, result: Value) -> Part {
    let mut response = FunctionResponse::new(call.name.clone(), result);
    response.id = call.id.clone();
    Part::function_response(response)
}

/// The error of a call of a tool that is not on offer: it names the tools that are, so that the
/// model can correct itself.
fn tool_not_found(name: &str, tools: &ToolMap) -> String {
    let mut available: Vec<&str> = tools.keys().map(String::as_str).collect();
    available.sort_unstable();
    format!(
        "tool '{name}' not found. Available tools: {}. The name may be misspelled or made up, \
         or the tool is not registered with this agent; call one of the available tools instead.",
        if available.is_empty() {
            "none".to_owned()
        } else {
            available.join(", ")
        }
    )
}
