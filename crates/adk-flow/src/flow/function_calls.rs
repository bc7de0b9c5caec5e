//! The flow's side of function calls: running the calls of a step's model event through the
//! [`ToolInvoker`](crate::ToolInvoker) with the agent's tools, callbacks and loop guard, and the
//! events that ask the user for the credentials or confirmations tools requested.

use std::collections::{HashMap, HashSet};

use adk_core::{Content, Event, FunctionCall, FunctionCallId, Part, Role, ToolConfirmation};
use serde_json::json;

use super::Step;
use crate::ToolInvoker;

/// The function the flow calls to ask the user to confirm a tool call.
pub(crate) const REQUEST_CONFIRMATION_FUNCTION: &str = "adk_request_confirmation";

/// The function the flow calls to ask the user for a tool's credentials.
pub(crate) const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// Runs the function calls of `call_event` (only those in `only`, when given) with the step's
/// tools, the agent's callbacks and loop guard, handing calls answered by a confirmation their
/// answer; returns the screened response event, `None` when no call produced a response or an
/// action.
///
/// A call whose hooks fail (a plugin or callback returned an error) is answered with that error,
/// and the error is kept in the step, which ends the run with it once the event is stored: its
/// siblings may already have acted, so their results are stored rather than dropped with the run.
pub(crate) async fn handle_function_calls(
    step: &Step,
    call_event: &Event,
    confirmations: &HashMap<FunctionCallId, ToolConfirmation>,
    only: Option<&HashSet<FunctionCallId>>,
) -> Option<Event> {
    let mut invoker = ToolInvoker::new(&step.ctx, &step.tools)
        .callbacks(&step.agent.callbacks.tools)
        .max_repeated_calls(step.agent.max_repeated_tool_calls)
        .confirmations(confirmations);
    if let Some(only) = only {
        invoker = invoker.only(only);
    }
    let responses = invoker.run(call_event).await;
    if let Some(error) = responses.hook_error {
        step.hook_failure.lock().get_or_insert(error);
    }
    responses.event
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
pub(crate) fn confirmation_request_event(
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
