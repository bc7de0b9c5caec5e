//! Running one tool call outside the flow, for the tool processor and the run loop: the tool's
//! context, its `execute_tool` span, a timeout, and a panic or an error turned into a response
//! the model can read.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{
    CallbackContext, Error, ErrorKind, EventActions, FunctionCall, FunctionCallId,
    FunctionResponse, InvocationContext, Part, PartData, Result, ToolConfirmation,
};
use adk_telemetry::ToolCall;
use adk_tool::{Tool, ToolContext};
use futures::FutureExt as _;
use serde_json::{Value, json};
use tracing::Instrument as _;

/// What a tool sees while answering one call: a callback context on the caller's invocation and
/// branch, and the call's id. Confirmations are a flow feature and are never answered here.
struct CallContext {
    callback: CallbackContext,
    call_id: Option<FunctionCallId>,
}

impl ToolContext for CallContext {
    fn callback_context(&self) -> &CallbackContext {
        &self.callback
    }

    fn function_call_id(&self) -> Option<&FunctionCallId> {
        self.call_id.as_ref()
    }

    fn tool_confirmation(&self) -> Option<&ToolConfirmation> {
        None
    }
}

/// What one call gave: the response part for the model, the actions the tool recorded (state
/// changes and the like), and the tool's own result or failure.
pub(crate) struct ToolOutcome {
    pub(crate) response: Part,
    pub(crate) actions: EventActions,
    pub(crate) result: Result<Value>,
}

/// Runs `call` on `tool` in its `execute_tool` span (a child of the current span), within
/// `timeout` when one is given. A failure, a panic or a timeout is the outcome's error, and the
/// response then tells the model what went wrong.
pub(crate) async fn call_tool(
    ctx: &InvocationContext,
    tool: &Arc<dyn Tool>,
    call: &FunctionCall,
    timeout: Option<Duration>,
) -> ToolOutcome {
    let trace = ToolCall::start(ctx, tool.description(), call);
    let tool_ctx = Arc::new(CallContext {
        callback: CallbackContext::new(ctx.clone()),
        call_id: call.id.clone(),
    });
    let run = AssertUnwindSafe(tool.run(tool_ctx.clone(), Value::Object(call.args.clone())))
        .catch_unwind()
        .instrument(trace.span().clone());
    let finished = match timeout {
        Some(limit) => tokio::time::timeout(limit, run).await.map_err(|_| {
            Error::new(
                ErrorKind::Tool,
                format!(
                    "tool '{}' did not answer within {limit:?}; it was stopped",
                    call.name
                ),
            )
        }),
        None => Ok(run.await),
    };
    let result = match finished {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(Error::new(
            ErrorKind::Tool,
            format!("tool '{}' panicked: {}", call.name, panic_message(&panic)),
        )),
        Err(timed_out) => Err(timed_out),
    };
    let value = match &result {
        Ok(value) => value.clone(),
        Err(error) => {
            trace.record_error(error);
            json!({"error": error.message()})
        }
    };
    let mut response = FunctionResponse::new(call.name.clone(), value);
    response.id = call.id.clone();
    let response = Part::function_response(response);
    trace.finish(match &response.data {
        PartData::FunctionResponse(response) => Some(&response.response),
        _ => None,
    });
    ToolOutcome {
        response,
        actions: tool_ctx.callback.take_actions(),
        result,
    }
}

/// The response to a call of a tool that is not on offer: it names the tools that are, so that
/// the model can correct itself.
pub(crate) fn unknown_tool(call: &FunctionCall, available: &[&str]) -> Part {
    let listed = if available.is_empty() {
        "none".to_owned()
    } else {
        available.join(", ")
    };
    let mut response = FunctionResponse::new(
        call.name.clone(),
        json!({"error": format!("there is no tool named '{}'; the tools are: {listed}", call.name)}),
    );
    response.id = call.id.clone();
    Part::function_response(response)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}
