//! `request_confirmation`: when the user answered the flow's `adk_request_confirmation` requests,
//! runs the confirmed (or rejected) calls again with the user's answer in their tool context.

use std::collections::{HashMap, HashSet};

use adk_core::{Error, ErrorKind, Event, FunctionCall, Result, ToolConfirmation};
use serde_json::{Map, Value};

use super::resume::{latest_answers, not_yet_answered, original_call_event, requested_call};
use crate::flow::{REQUEST_CONFIRMATION_FUNCTION, Step, handle_function_calls};

pub(super) async fn process(step: &Step) -> Result<Vec<Event>> {
    let Some((call_event, confirmations, ids)) = calls_to_resume(step)? else {
        return Ok(Vec::new());
    };
    let resumed = handle_function_calls(step, &call_event, &confirmations, Some(&ids)).await?;
    Ok(resumed.into_iter().collect())
}

type Resumption = (
    Event,
    HashMap<adk_core::FunctionCallId, ToolConfirmation>,
    HashSet<adk_core::FunctionCallId>,
);

/// The event of the calls to resume, the user's confirmation of each, and their ids.
fn calls_to_resume(step: &Step) -> Result<Option<Resumption>> {
    let session = step.ctx.session();
    let events = &session.events;
    let Some((answer_index, answers)) = latest_answers(events, REQUEST_CONFIRMATION_FUNCTION)
    else {
        return Ok(None);
    };
    let agent = step.agent.base.name.as_str();
    let mut confirmations = HashMap::new();
    let mut call_event: Option<&Event> = None;
    for (request_id, answer) in answers {
        let request = requested_call(events, answer_index, agent, &request_id)?;
        let original = original_call(request)?;
        let event = original_call_event(events, answer_index, agent, &original)?;
        if call_event.is_some_and(|seen| seen.id != event.id) {
            // Confirmations of calls from different model responses are resumed one response
            // per step; the rest wait for the next step.
            continue;
        }
        call_event = Some(event);
        let id = original.id.clone().unwrap_or_default();
        confirmations.insert(id, parse_confirmation(&answer)?);
    }
    let Some(call_event) = call_event else {
        return Ok(None);
    };
    let ids = not_yet_answered(
        events,
        answer_index,
        confirmations.keys().cloned().collect(),
    );
    if ids.is_empty() {
        return Ok(None);
    }
    Ok(Some((call_event.clone(), confirmations, ids)))
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
