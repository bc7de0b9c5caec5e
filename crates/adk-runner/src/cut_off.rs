//! Invocations that stopped before they ended: the calls of an invocation that no event answers,
//! and the session's last invocation when a crash (or a dropped run) cut it off.
//!
//! An invocation has ended when its last stored event is a final response: an answer, a pause
//! on long-running calls, an error, or the event that ends a cancelled invocation. It was cut off
//! when its last event is the user's message, a call that nothing answered, or a tool's result
//! the model has not read yet; nobody else can be running it when the caller holds the
//! session's lock.

use std::collections::HashSet;

use adk_core::{Event, FunctionCall, FunctionCallId, InvocationId, USER_AUTHOR};

/// The error code of the event that ends a cancelled invocation
/// ([`Runner::cancel_invocation`](crate::Runner::cancel_invocation)).
pub const CANCELLED_ERROR_CODE: &str = "CANCELLED";

/// The session's last invocation, when it was cut off before it ended.
pub(crate) fn cut_off_invocation(events: &[Event]) -> Option<&InvocationId> {
    let last = events.last()?;
    if last.actions.rewind_before_invocation_id.is_some() || last.actions.compaction.is_some() {
        return None;
    }
    let open = if last.author == USER_AUTHOR {
        true
    } else {
        !last.is_final_response()
    };
    open.then_some(&last.invocation_id)
}

/// Whether invocation `invocation_id` has ended: its last event is a final response.
pub(crate) fn has_ended(events: &[Event], invocation_id: &InvocationId) -> bool {
    events
        .iter()
        .rev()
        .find(|event| &event.invocation_id == invocation_id)
        .is_some_and(|event| {
            event.author != USER_AUTHOR
                && event.is_final_response()
                && unanswered_calls(events, invocation_id).is_empty()
        })
}

/// The calls agents made in invocation `invocation_id` that no later event answers, long-running
/// ones included, each with the event that made it.
pub(crate) fn unanswered_calls<'e>(
    events: &'e [Event],
    invocation_id: &InvocationId,
) -> Vec<(&'e Event, &'e FunctionCall)> {
    let answered: HashSet<&FunctionCallId> = events
        .iter()
        .flat_map(Event::function_responses)
        .filter_map(|response| response.id.as_ref())
        .collect();
    events
        .iter()
        .filter(|event| &event.invocation_id == invocation_id && event.author != USER_AUTHOR)
        .flat_map(|event| event.function_calls().map(move |call| (event, call)))
        .filter(|(_, call)| call.id.as_ref().is_some_and(|id| !answered.contains(id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, FunctionResponse, Part, Role};
    use serde_json::json;

    use super::*;

    fn user(invocation: &str, text: &str) -> Event {
        Event::new(invocation.into(), USER_AUTHOR).with_content(Content::user(text))
    }

    fn call(invocation: &str, id: &str) -> Event {
        let call = FunctionCall::new("charge", json!({})).with_id(id);
        Event::new(invocation.into(), "agent")
            .with_content(Content::new(Role::Model, [Part::function_call(call)]))
    }

    fn response(invocation: &str, id: &str) -> Event {
        let response = FunctionResponse::new("charge", json!({"ok": true})).with_id(id);
        Event::new(invocation.into(), "agent").with_content(Content::new(
            Role::User,
            [Part::function_response(response)],
        ))
    }

    fn answer(invocation: &str) -> Event {
        Event::new(invocation.into(), "agent").with_content(Content::model("done"))
    }

    #[test]
    fn an_invocation_is_cut_off_until_its_last_event_is_a_final_response() {
        let mut events = vec![user("e-1", "charge me")];
        assert_eq!(cut_off_invocation(&events), Some(&"e-1".into()));
        events.push(call("e-1", "c-1"));
        assert_eq!(cut_off_invocation(&events), Some(&"e-1".into()));
        assert_eq!(unanswered_calls(&events, &"e-1".into()).len(), 1);
        events.push(response("e-1", "c-1"));
        assert_eq!(cut_off_invocation(&events), Some(&"e-1".into()));
        assert!(unanswered_calls(&events, &"e-1".into()).is_empty());
        assert!(!has_ended(&events, &"e-1".into()));
        events.push(answer("e-1"));
        assert_eq!(cut_off_invocation(&events), None);
        assert!(has_ended(&events, &"e-1".into()));
        assert_eq!(cut_off_invocation(&[]), None);
    }
}
