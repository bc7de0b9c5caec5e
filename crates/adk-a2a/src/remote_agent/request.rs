//! The message a remote agent is sent: the user's answers to the calls it made, or the turns since
//! it last spoke, in the remote conversation (and task) it is in.

use adk_core::{Event, FunctionCall, FunctionResponse, InvocationContext, PartData, USER_AUTHOR};
use serde_json::Value;

use super::response::MOCK_INPUT_CALLS;
use super::{CONTEXT_ID_METADATA_KEY, TASK_ID_METADATA_KEY, TASK_STATE_METADATA_KEY};
use crate::convert::adk_part_to_a2a;
use crate::types::{Message, Part, Role, TaskState};

/// The message for this run of remote agent `agent`; `None` when there is nothing new to send.
pub(super) fn message_for(ctx: &InvocationContext, agent: &str) -> Option<Message> {
    ctx.with_session(|session| message_from(&session.events, agent))
}

/// [`message_for`] from the session's events.
fn message_from(events: &[Event], agent: &str) -> Option<Message> {
    if let Some(message) = answers_to_calls(events, agent) {
        return Some(message);
    }
    let since = events.iter().rposition(|event| {
        event.author == agent && metadata(event, CONTEXT_ID_METADATA_KEY).is_some()
    });
    let (context_id, task_id) = match since {
        Some(index) => {
            let last = &events[index];
            let paused = metadata(last, TASK_STATE_METADATA_KEY).is_some_and(|state| {
                state == TaskState::InputRequired.as_str()
                    || state == TaskState::AuthRequired.as_str()
            });
            (
                metadata(last, CONTEXT_ID_METADATA_KEY),
                paused
                    .then(|| metadata(last, TASK_ID_METADATA_KEY))
                    .flatten(),
            )
        }
        None => (None, None),
    };
    let start = since.map_or(0, |index| index + 1);
    let parts: Vec<Part> = events[start..]
        .iter()
        .filter(|event| !event.is_partial() && event.author != agent)
        .flat_map(|event| parts_of(event, agent, events))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut message = Message::new(Role::User, parts);
    message.context_id = context_id;
    message.task_id = task_id;
    Some(message)
}

/// When the latest event is the user's answer to calls this agent made (a remote task waiting
/// for input), the message carrying those answers in that task and context.
fn answers_to_calls(events: &[Event], agent: &str) -> Option<Message> {
    let latest = events.last().filter(|event| event.author == USER_AUTHOR)?;
    let responses: Vec<&FunctionResponse> = latest.function_responses().collect();
    let first_id = responses.first()?.id.as_ref()?;
    let call_event = events.iter().rev().skip(1).find(|event| {
        event.author == agent
            && event
                .function_calls()
                .any(|call| call.id.as_ref() == Some(first_id))
    })?;
    let calls: Vec<&FunctionCall> = call_event.function_calls().collect();
    let parts: Vec<Part> = responses
        .iter()
        .filter_map(|response| {
            let call = calls.iter().find(|call| call.id == response.id)?;
            if MOCK_INPUT_CALLS.contains(&call.name.as_str()) {
                // The remote agent asked in words, not with a call of its own: it gets words back.
                return Some(Part::text(answer_text(response)));
            }
            adk_part_to_a2a(&adk_core::Part::function_response((*response).clone()))
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut message = Message::new(Role::User, parts);
    message.task_id = metadata(call_event, TASK_ID_METADATA_KEY);
    message.context_id = metadata(call_event, CONTEXT_ID_METADATA_KEY);
    Some(message)
}

/// The text of an answer to a question the remote agent asked in words.
fn answer_text(response: &FunctionResponse) -> String {
    let value = response
        .response
        .get("response")
        .or_else(|| response.response.get("result"))
        .cloned()
        .unwrap_or_else(|| Value::Object(response.response.clone()));
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// The A2A parts of one event: the user's own parts as they are (a function response that
/// answers no call of the remote agent as text, since the remote agent has no call to resume),
/// another agent's turn as "For context" text without its thoughts.
fn parts_of(event: &Event, agent: &str, events: &[Event]) -> Vec<Part> {
    let Some(content) = event.content() else {
        return Vec::new();
    };
    if event.author == USER_AUTHOR {
        return content
            .parts
            .iter()
            .filter_map(|part| match &part.data {
                PartData::FunctionResponse(response) if !made_by(events, agent, response) => {
                    Some(Part::text(format!(
                        "Tool {} returned: {}",
                        response.name,
                        Value::Object(response.response.clone())
                    )))
                }
                _ => adk_part_to_a2a(part),
            })
            .collect();
    }
    let author = &event.author;
    let described: Vec<Part> = content
        .parts
        .iter()
        .filter(|part| !part.thought)
        .filter_map(|part| match &part.data {
            PartData::Text(text) if text.trim().is_empty() => None,
            PartData::Text(text) => Some(Part::text(format!("[{author}] said: {text}"))),
            PartData::FunctionCall(call) => Some(Part::text(format!(
                "[{author}] called tool `{}` with parameters: {}",
                call.name,
                Value::Object(call.args.clone())
            ))),
            PartData::FunctionResponse(response) => Some(Part::text(format!(
                "[{author}] `{}` tool returned result: {}",
                response.name,
                Value::Object(response.response.clone())
            ))),
            _ => adk_part_to_a2a(part),
        })
        .collect();
    if described.is_empty() {
        return described;
    }
    std::iter::once(Part::text("For context:"))
        .chain(described)
        .collect()
}

/// Whether `response` answers a call remote agent `agent` made.
fn made_by(events: &[Event], agent: &str, response: &FunctionResponse) -> bool {
    response.id.is_some()
        && events
            .iter()
            .filter(|event| event.author == agent)
            .flat_map(Event::function_calls)
            .any(|call| call.id == response.id)
}

fn metadata(event: &Event, key: &str) -> Option<String> {
    event
        .response
        .custom_metadata
        .as_ref()?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}
