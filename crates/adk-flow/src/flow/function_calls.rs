//! `handle_function_calls` of seed 000: runs the calls of one model response in parallel (at most
//! [`RunConfig::max_concurrent_tool_calls`](adk_core::RunConfig) at once), each through its tool
//! callbacks, and merges the responses into one event; and the events that ask the user for
//! credentials or confirmations that tools requested.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use adk_core::{
    Content, Error, ErrorKind, Event, EventActions, FunctionCall, FunctionCallId, FunctionResponse,
    Part, PartData, Result, Role, ToolConfirmation,
};
use adk_telemetry::ToolCall;
use adk_tool::{Tool, ToolContext as _};
use async_trait::async_trait;
use futures::{FutureExt as _, StreamExt as _};
use serde_json::{Map, Value, json};
use tracing::{Instrument as _, Span};

use super::{FlowToolContext, Step};
use crate::Plugins;
use crate::callbacks::first_some;

/// The function the flow calls to ask the user to confirm a tool call.
pub(crate) const REQUEST_CONFIRMATION_FUNCTION: &str = "adk_request_confirmation";

/// The function the flow calls to ask the user for a tool's credentials.
pub(crate) const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// Runs the function calls of `call_event` (only those in `only`, when given) concurrently, at
/// most `max_concurrent_tool_calls` of the run config at once, and merges their responses into one
/// event authored by the agent. Calls answered by a confirmation get it in their tool context.
/// `None` when no call produced a response or an action.
///
/// A call whose hooks fail (a plugin or callback returned an error) is answered with that error,
/// and the error is kept in the step, which ends the run with it once the event is stored: its
/// siblings may already have acted, so their results are stored rather than dropped with the run.
pub(crate) async fn handle_function_calls(
    step: &Step,
    call_event: &Event,
    confirmations: &HashMap<FunctionCallId, ToolConfirmation>,
    only: Option<&HashSet<FunctionCallId>>,
) -> Result<Option<Event>> {
    let calls: Vec<&FunctionCall> = call_event
        .function_calls()
        .filter(|call| only.is_none_or(|only| call.id.as_ref().is_some_and(|id| only.contains(id))))
        .collect();
    // Several calls run in parallel inside one `execute_tool (merged)` span, as ADK traces them.
    let merged_span = if calls.len() > 1 {
        adk_telemetry::merged_tools_span()
    } else {
        Span::none()
    };
    let limit = match step.ctx.run_config().max_concurrent_tool_calls {
        0 => calls.len().max(1),
        limit => limit,
    };
    // `buffered` keeps the responses in the order of the calls while running at most `limit`.
    // Collected first so that the stream's type names no closure: a closure over borrowed calls
    // inside the step's `try_stream!` trips the compiler's higher-ranked lifetime check.
    let pending: Vec<_> = calls
        .iter()
        .map(|&call| {
            let confirmation = call
                .id
                .as_ref()
                .and_then(|id| confirmations.get(id))
                .cloned();
            call_tool(step, call, confirmation)
        })
        .collect();
    let outcomes: Vec<_> = futures::stream::iter(pending)
        .buffered(limit)
        .collect()
        .instrument(merged_span.clone())
        .await;

    let mut parts = Vec::new();
    let mut actions = EventActions::default();
    for (call, outcome) in calls.iter().zip(outcomes) {
        match outcome {
            Ok((part, tool_actions)) => {
                parts.extend(part);
                actions.merge(tool_actions);
            }
            Err(error) => {
                parts.push(response_part(call, json!({"error": error.message()})));
                let mut failure = step.hook_failure.lock();
                if failure.is_none() {
                    *failure = Some(error);
                }
            }
        }
    }
    if parts.is_empty() && actions.is_empty() {
        return Ok(None);
    }
    let mut event = step.ctx.new_event().with_actions(actions);
    if !parts.is_empty() {
        event.response.content = Some(Content::new(Role::User, parts));
    }
    adk_telemetry::record_merged_tools(&merged_span, &event);
    Ok(Some(event))
}

/// Runs one call in its `execute_tool` span, recording its result, failure and duration.
async fn call_tool(
    step: &Step,
    call: &FunctionCall,
    confirmation: Option<ToolConfirmation>,
) -> Result<(Option<Part>, EventActions)> {
    let description = step
        .tools
        .get(&call.name)
        .map_or("", |tool| tool.description());
    let trace = ToolCall::start(&step.ctx, description, call);
    let outcome = run_call(step, call, confirmation, &trace)
        .instrument(trace.span().clone())
        .await;
    match &outcome {
        Ok((part, _)) => trace.finish(part.as_ref().and_then(function_response_of)),
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

/// Runs one call: before-tool hooks, the tool (a failure or a panic becomes an error result, which
/// on-tool-error hooks may replace), then after-tool hooks; at each hook plugins run first. A call
/// of an unknown tool goes to the on-tool-error hooks only, as ADK does, and is answered with an
/// error naming the available tools unless one recovers; a call repeated past the agent's limit is
/// answered with an error without any hook. Returns the response part (none for a long-running
/// tool that gave no result yet) and the actions the tool recorded.
async fn run_call(
    step: &Step,
    call: &FunctionCall,
    confirmation: Option<ToolConfirmation>,
    trace: &ToolCall,
) -> Result<(Option<Part>, EventActions)> {
    let tool_ctx = Arc::new(FlowToolContext::new(
        step.ctx.clone(),
        call.id.clone(),
        confirmation,
    ));
    let callbacks = &step.agent.callbacks;
    let plugins = Plugins::of(&step.ctx);
    let Some(tool) = step.tools.get(&call.name) else {
        let missing = MissingTool {
            name: call.name.clone(),
        };
        let error = Error::new(ErrorKind::Tool, tool_not_found(&call.name, &step.tools));
        trace.record_error(&error);
        let args = Value::Object(call.args.clone());
        let result = recover(&plugins, step, &missing, &args, tool_ctx.as_ref(), &error).await?;
        let actions = tool_ctx.callback_context().take_actions();
        return Ok((Some(response_part(call, result)), actions));
    };
    if let Some(response) = super::repeated_calls::refusal(step, call) {
        return Ok((Some(response_part(call, response)), EventActions::default()));
    }
    let mut args = Value::Object(call.args.clone());

    let mut result = None;
    for plugin in plugins.iter() {
        result = plugin
            .before_tool(tool.as_ref(), &mut args, tool_ctx.as_ref())
            .await?;
        if result.is_some() {
            break;
        }
    }
    if result.is_none() {
        result = first_some(&callbacks.before_tool, |callback| {
            callback(tool_ctx.as_ref(), tool.as_ref(), &mut args)
        })?;
    }
    let result = match result {
        Some(result) => result,
        None => match run_tool(tool, tool_ctx.clone(), args.clone()).await {
            Ok(result) => result,
            Err(error) => {
                trace.record_error(&error);
                recover(
                    &plugins,
                    step,
                    tool.as_ref(),
                    &args,
                    tool_ctx.as_ref(),
                    &error,
                )
                .await?
            }
        },
    };
    let mut replaced = None;
    for plugin in plugins.iter() {
        replaced = plugin
            .after_tool(tool.as_ref(), &args, tool_ctx.as_ref(), &result)
            .await?;
        if replaced.is_some() {
            break;
        }
    }
    if replaced.is_none() {
        replaced = first_some(&callbacks.after_tool, |callback| {
            callback(tool_ctx.as_ref(), tool.as_ref(), &args, &result)
        })?;
    }
    let result = replaced.unwrap_or(result);

    let actions = tool_ctx.callback_context().take_actions();
    if tool.is_long_running() && result.is_null() {
        return Ok((None, actions));
    }
    Ok((Some(response_part(call, result)), actions))
}

/// The result of a failed call: the first on-tool-error hook (plugins first) that recovers gives
/// it, otherwise the error itself as `{"error": message}`.
async fn recover(
    plugins: &Plugins,
    step: &Step,
    tool: &dyn Tool,
    args: &Value,
    tool_ctx: &FlowToolContext,
    error: &Error,
) -> Result<Value> {
    for plugin in plugins.iter() {
        if let Some(recovered) = plugin.on_tool_error(tool, args, tool_ctx, error).await? {
            return Ok(recovered);
        }
    }
    let recovered = first_some(&step.agent.callbacks.on_tool_error, |callback| {
        callback(tool_ctx, tool, args, error)
    })?;
    Ok(recovered.unwrap_or_else(|| json!({"error": error.message()})))
}

/// What the on-tool-error hooks see for a call of a tool the agent does not have: a tool of the
/// called name that cannot run.
struct MissingTool {
    name: String,
}

#[async_trait]
impl Tool for MissingTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a tool the agent does not have"
    }

    fn declaration(&self) -> Option<adk_core::FunctionDeclaration> {
        None
    }

    async fn run(&self, _ctx: Arc<dyn adk_tool::ToolContext>, _args: Value) -> Result<Value> {
        Err(Error::new(
            ErrorKind::Tool,
            format!("tool '{}' is not registered with this agent", self.name),
        ))
    }
}

/// Runs the tool, turning a panic into an error so that one faulty tool cannot end the run.
async fn run_tool(tool: &Arc<dyn Tool>, ctx: Arc<FlowToolContext>, args: Value) -> Result<Value> {
    match AssertUnwindSafe(tool.run(ctx, args)).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            Err(Error::new(
                ErrorKind::Tool,
                format!("tool '{}' panicked: {message}", tool.name()),
            ))
        }
    }
}

fn response_part(call: &FunctionCall, result: Value) -> Part {
    let mut response = FunctionResponse::new(call.name.clone(), result);
    response.id = call.id.clone();
    Part::function_response(response)
}

/// The error of a call of a tool the agent does not have: it names the tools it has, so that the
/// model can correct itself.
fn tool_not_found(name: &str, tools: &super::ToolMap) -> String {
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

/// The event that asks the user for the credentials tools requested, as calls of
/// `adk_request_credential` that the client answers.
pub(super) fn auth_request_event(step: &Step, response_event: &Event) -> Option<Event> {
    let requested = &response_event.actions.requested_auth_configs;
    if requested.is_empty() {
        return None;
    }
    let calls = requested.iter().map(|(call_id, auth_config)| {
        FunctionCall::new(
            REQUEST_CREDENTIAL_FUNCTION,
            json!({"functionCallId": call_id, "authConfig": auth_config}),
        )
    });
    Some(request_event(step, calls))
}

/// The event that asks the user to confirm the calls tools marked, as calls of
/// `adk_request_confirmation` carrying the original call and the confirmation asked for.
pub(super) fn confirmation_request_event(
    step: &Step,
    call_event: &Event,
    response_event: &Event,
) -> Option<Event> {
    let requested = &response_event.actions.requested_tool_confirmations;
    if requested.is_empty() {
        return None;
    }
    let calls = requested.iter().filter_map(|(call_id, confirmation)| {
        let original = call_event
            .function_calls()
            .find(|call| call.id.as_ref() == Some(call_id))?;
        Some(FunctionCall::new(
            REQUEST_CONFIRMATION_FUNCTION,
            json!({"originalFunctionCall": original, "toolConfirmation": confirmation}),
        ))
    });
    Some(request_event(step, calls))
}

/// An event of client-side calls, each with a fresh id and marked long-running so that the
/// invocation pauses until the user answers.
fn request_event(step: &Step, calls: impl Iterator<Item = FunctionCall>) -> Event {
    let calls: Vec<FunctionCall> = calls
        .map(|call| call.with_id(step.ctx.ids().function_call_id()))
        .collect();
    let ids = calls.iter().filter_map(|call| call.id.clone()).collect();
    let mut event = step.ctx.new_event().with_content(Content::new(
        Role::User,
        calls.into_iter().map(Part::function_call),
    ));
    event.long_running_tool_ids = Some(ids);
    event
}
