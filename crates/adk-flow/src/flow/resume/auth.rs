//! Credentials (ADK's `auth` processor): when the user answered the flow's `adk_request_credential` requests, stores each
//! credential in the invocation's `temp:` state (never persisted) under the `credentialKey` of the
//! request the flow made, and runs the calls that asked for it again, the calls of each model
//! event in turn.
//!
//! The key comes from the stored request, never from the client's answer: a client that could
//! name the key could overwrite any `temp:` value of the invocation.

use std::collections::{HashMap, HashSet};

use adk_core::internal::InvocationControl as _;
use adk_core::{Error, ErrorKind, Event, FunctionCallId, Result, Session};
use serde_json::Value;

use super::{latest_answers, not_yet_answered, original_call_event, requested_call};
use crate::client_calls::REQUEST_CREDENTIAL_FUNCTION;
use crate::flow::function_calls::handle_function_calls;
use crate::step::Step;

pub(super) async fn process(step: &Step) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    for (call_event, ids) in calls_to_resume(step)? {
        events.extend(handle_function_calls(step, &call_event, &HashMap::new(), Some(&ids)).await);
    }
    Ok(events)
}

/// The model events whose calls the user's credentials resume, each with the ids of its calls not
/// resumed yet; the credentials are put into the invocation's `temp:` state on the way.
fn calls_to_resume(step: &Step) -> Result<Vec<(Event, HashSet<FunctionCallId>)>> {
    step.ctx
        .with_session_mut(|session| calls_in_session(step, session))
}

/// [`calls_to_resume`] on the locked session.
fn calls_in_session(
    step: &Step,
    session: &mut Session,
) -> Result<Vec<(Event, HashSet<FunctionCallId>)>> {
    let events = &session.events;
    let Some((answer_index, answers)) = latest_answers(events, REQUEST_CREDENTIAL_FUNCTION) else {
        return Ok(Vec::new());
    };
    let agent = step.agent.base.name.as_str();
    let mut credentials = Vec::new();
    let mut by_event: Vec<(&Event, HashSet<FunctionCallId>)> = Vec::new();
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
        match by_event.iter_mut().find(|(seen, _)| seen.id == event.id) {
            Some((_, ids)) => {
                ids.insert(call_id);
            }
            None => by_event.push((event, HashSet::from([call_id]))),
        }
        let key = request
            .args
            .get("authConfig")
            .and_then(|config| config.get("credentialKey"))
            .and_then(Value::as_str);
        match key {
            Some(key) => {
                let credential = answer
                    .get("exchangedAuthCredential")
                    .or_else(|| answer.get("rawAuthCredential"))
                    .cloned()
                    .unwrap_or(Value::Object(answer.clone()));
                credentials.push((format!("temp:{key}"), credential));
            }
            None => tracing::warn!(
                agent,
                request = %request_id,
                "a credential request names no `authConfig.credentialKey`; the answer is not stored"
            ),
        }
    }
    let resumptions: Vec<_> = by_event
        .into_iter()
        .filter_map(|(event, ids)| {
            let ids = not_yet_answered(events, answer_index, ids);
            (!ids.is_empty()).then(|| (event.clone(), ids))
        })
        .collect();
    session.state.extend(credentials);
    Ok(resumptions)
}
