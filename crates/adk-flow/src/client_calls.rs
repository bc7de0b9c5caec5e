//! The functions the flow calls on the client to ask the user something: `adk_request_credential`
//! for the credentials a tool asked for, and `adk_request_confirmation` for a call a tool wants
//! confirmed. Each request is a long-running call, so the invocation pauses until the user answers
//! (the flow's `resume` module reads the answers).

use adk_core::{Content, Event, FunctionCall, Part, Role};
use serde_json::json;

use crate::step::Step;

/// The function the flow calls to ask the user to confirm a tool call.
pub(crate) const REQUEST_CONFIRMATION_FUNCTION: &str = "adk_request_confirmation";

/// The function the flow calls to ask the user for a tool's credentials.
pub(crate) const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// The event that asks the user for the credentials tools requested, as calls of
/// `adk_request_credential` that the client answers.
pub(crate) fn auth_request_event(step: &Step, response_event: &Event) -> Option<Event> {
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
