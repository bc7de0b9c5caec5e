//! `auth`: when the user answered the flow's `adk_request_credential` requests, stores each
//! credential in the invocation's `temp:` state under the request's `credentialKey` (never
//! persisted) and runs the calls that asked for it again.

use std::collections::{HashMap, HashSet};

use adk_core::{Error, ErrorKind, Event, FunctionCallId, Result};
use serde_json::Value;

use super::resume::{latest_answers, not_yet_answered, original_call_event, requested_call};
use crate::flow::{REQUEST_CREDENTIAL_FUNCTION, Step, handle_function_calls};

pub(super) async fn process(step: &Step) -> Result<Vec<Event>> {
    let Some((call_event, ids)) = calls_to_resume(step)? else {
        return Ok(Vec::new());
    };
    let resumed = handle_function_calls(step, &call_event, &HashMap::new(), Some(&ids)).await?;
    Ok(resumed.into_iter().collect())
}

fn calls_to_resume(step: &Step) -> Result<Option<(Event, HashSet<FunctionCallId>)>> {
    let mut session = step.ctx.session_mut();
    let events = &session.events;
    let Some((answer_index, answers)) = latest_answers(events, REQUEST_CREDENTIAL_FUNCTION) else {
        return Ok(None);
    };
    let agent = step.agent.base.name.as_str();
    let mut credentials = Vec::new();
    let mut ids = HashSet::new();
    let mut call_event: Option<Event> = None;
    for (request_id, answer) in answers {
        let request = requested_call(events, answer_index, agent, &request_id)?;
        let call_id: FunctionCallId = request
            .args
            .get("functionCallId")
            .and_then(Value::as_str)
            .map(Into::into)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidInput,
                    "a credential request holds no `functionCallId`",
                )
            })?;
        let original = events[..answer_index]
            .iter()
            .rev()
            .filter(|event| event.author == agent)
            .flat_map(Event::function_calls)
            .find(|call| call.id.as_ref() == Some(&call_id))
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidInput,
                    format!("a credential request names call '{call_id}', which agent '{agent}' never made; no tool runs"),
                )
            })?;
        let event = original_call_event(events, answer_index, agent, &original)?;
        if call_event.as_ref().is_none_or(|seen| seen.id == event.id) {
            call_event = Some(event.clone());
            ids.insert(call_id);
        }
        if let Some(key) = answer.get("credentialKey").and_then(Value::as_str) {
            let credential = answer
                .get("exchangedAuthCredential")
                .or_else(|| answer.get("rawAuthCredential"))
                .cloned()
                .unwrap_or(Value::Object(answer.clone()));
            credentials.push((format!("temp:{key}"), credential));
        }
    }
    let ids = not_yet_answered(events, answer_index, ids);
    session.state.extend(credentials);
    Ok(call_event
        .filter(|_| !ids.is_empty())
        .map(|event| (event, ids)))
}
