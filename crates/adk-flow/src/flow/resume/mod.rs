//! Resuming calls: a step first answers the calls a crash cut off (`interrupted`), then runs again
//! the calls the user's credentials (`auth`) or confirmations (`confirmation`) answered, before
//! the request is built, so that their events reach the session before the history is read. This
//! module holds what the last two share: finding the user's answers to the flow's requests, and the genuine calls those
//! answers resume.
//!
//! An answer only resumes a call when the request it answers was made by this agent, names a call
//! this agent made with exactly those arguments, and that call has no response yet. A continuation
//! forged into history (an answer to a request nobody made, or a request for a call nobody made)
//! is an error and runs nothing.

mod auth;
mod confirmation;
mod interrupted;

use std::collections::HashSet;

use adk_core::{Error, ErrorKind, Event, FunctionCall, FunctionCallId, Result, USER_AUTHOR};
use serde_json::{Map, Value};

use crate::step::Step;

/// Answers the calls a crash cut off (see `interrupted`), then runs again the calls the user's
/// latest credentials, then confirmations, answered; returns the events of the resumed calls.
pub(super) async fn answered_calls(step: &Step) -> Result<Vec<Event>> {
    let mut events = interrupted::process(step).await?;
    events.extend(auth::process(step).await?);
    events.extend(confirmation::process(step).await?);
    Ok(events)
}

/// The user's answer to one request: the request's call id and the response.
pub(super) type Answer = (FunctionCallId, Map<String, Value>);

/// The user's answers to requests named `function` in the latest user event, with that event's
/// index; `None` when it holds none.
pub(super) fn latest_answers(events: &[Event], function: &str) -> Option<(usize, Vec<Answer>)> {
    let index = events
        .iter()
        .rposition(|event| event.author == USER_AUTHOR)?;
    let answers: Vec<_> = events[index]
        .function_responses()
        .filter(|response| response.name == function)
        .filter_map(|response| Some((response.id.clone()?, response.response.clone())))
        .collect();
    (!answers.is_empty()).then_some((index, answers))
}

/// The request call `request_id` that agent `agent` made before event `before`, with the original
/// call it is about, read from the request's `argument` (`originalFunctionCall`, or `functionCallId`
/// for credential requests).
pub(super) fn requested_call<'e>(
    events: &'e [Event],
    before: usize,
    agent: &str,
    request_id: &FunctionCallId,
) -> Result<&'e FunctionCall> {
    events[..before]
        .iter()
        .rev()
        .filter(|event| event.author == agent)
        .flat_map(Event::function_calls)
        .find(|call| call.id.as_ref() == Some(request_id))
        .ok_or_else(|| {
            forged(format!(
                "the user answered request '{request_id}', which agent '{agent}' never made"
            ))
        })
}

/// The event in which `agent` made `call` exactly (same id, name and arguments).
pub(super) fn original_call_event<'e>(
    events: &'e [Event],
    before: usize,
    agent: &str,
    call: &FunctionCall,
) -> Result<&'e Event> {
    events[..before]
        .iter()
        .rev()
        .filter(|event| event.author == agent)
        .find(|event| event.function_calls().any(|made| made == call))
        .ok_or_else(|| {
            forged(format!(
                "a request of agent '{agent}' names call '{}' of `{}`, which it never made with those arguments",
                call.id.as_ref().map(FunctionCallId::as_str).unwrap_or_default(),
                call.name
            ))
        })
}

/// The ids among `ids` that no event after `index` answered yet: a call is resumed once.
pub(super) fn not_yet_answered(
    events: &[Event],
    index: usize,
    mut ids: HashSet<FunctionCallId>,
) -> HashSet<FunctionCallId> {
    for event in &events[index + 1..] {
        for response in event.function_responses() {
            if let Some(id) = &response.id {
                ids.remove(id);
            }
        }
    }
    ids
}

fn forged(message: String) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("{message}; the answer is ignored and no tool runs"),
    )
}
