//! Confirmations (ADK's `request_confirmation` processor): when the user answered the flow's `adk_request_confirmation` requests,
//! runs the confirmed (or rejected) calls again with the user's answer in their tool context, the
//! calls of each model event that asked for confirmations in turn.

use std::collections::{HashMap, HashSet};

use adk_core::{Error, ErrorKind, Event, FunctionCall, Result, ToolConfirmation};
use serde_json::{Map, Value};

use super::{latest_answers, not_yet_answered, original_call_event, requested_call};
use crate::client_calls::REQUEST_CONFIRMATION_FUNCTION;
use crate::flow::function_calls::handle_function_calls;
use crate::step::Step;

pub(super) async fn process(step: &Step) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    for (call_event, confirmations, ids) in calls_to_resume(step)? {
        events.extend(handle_function_calls(step, &call_event, &confirmations, Some(&ids)).await);
    }
    Ok(events)
}

type Resumption = (
    Event,
    HashMap<adk_core::FunctionCallId, ToolConfirmation>,
    HashSet<adk_core::FunctionCallId>,
);

/// For each model event whose calls the user's latest message confirmed (or rejected) and that
/// were not resumed yet: the event, the user's confirmation of each call, and their ids. One
/// message may answer calls of several model events (a model that asked twice before the user
/// answered); every one of them is resumed.
fn calls_to_resume(step: &Step) -> Result<Vec<Resumption>> {
    step.ctx
        .with_session(|session| calls_in_events(step, &session.events))
}

/// [`calls_to_resume`] on the session's events.
fn calls_in_events(step: &Step, events: &[Event]) -> Result<Vec<Resumption>> {
    let Some((answer_index, answers)) = latest_answers(events, REQUEST_CONFIRMATION_FUNCTION)
    else {
        return Ok(Vec::new());
    };
    let agent = step.agent.base.name.as_str();
    let mut by_event: Vec<(&Event, HashMap<adk_core::FunctionCallId, ToolConfirmation>)> =
        Vec::new();
    for (request_id, answer) in answers {
        let request = requested_call(events, answer_index, agent, &request_id)?;
        let original = original_call(request)?;
        let event = original_call_event(events, answer_index, agent, &original)?;
        let id = original.id.clone().unwrap_or_default();
        let mut confirmation = parse_confirmation(&answer)?;
        // The request's payload says what the confirmation is about (an interrupted call, say)
        // when the answer does not carry it back.
        if confirmation.payload.is_none() {
            confirmation.payload = request
                .args
                .get("toolConfirmation")
                .and_then(|asked| asked.get("payload"))
                .cloned();
        }
        match by_event.iter_mut().find(|(seen, _)| seen.id == event.id) {
            Some((_, confirmations)) => {
                confirmations.insert(id, confirmation);
            }
            None => by_event.push((event, HashMap::from([(id, confirmation)]))),
        }
    }
    let mut resumptions = Vec::new();
    for (call_event, confirmations) in by_event {
        let ids = not_yet_answered(
            events,
            answer_index,
            confirmations.keys().cloned().collect(),
        );
        if !ids.is_empty() {
            resumptions.push((call_event.clone(), confirmations, ids));
        }
    }
    Ok(resumptions)
}

fn original_call(request: &FunctionCall) -> Result<FunctionCall> {
    let original = request
        .args
        .get("originalFunctionCall")
        .cloned()
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                "a confirmation request holds no `originalFunctionCall`",
            )
        })?;
    Ok(serde_json::from_value(original)?)
}

/// The user's answer: the confirmation object itself, or ADK web's `{"response": "<json>"}`.
fn parse_confirmation(answer: &Map<String, Value>) -> Result<ToolConfirmation> {
    if let (1, Some(Value::String(json))) = (answer.len(), answer.get("response")) {
        return Ok(serde_json::from_str(json)?);
    }
    Ok(serde_json::from_value(Value::Object(answer.clone()))?)
}
