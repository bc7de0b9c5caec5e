//! Whole messages: an ADK event or content to an A2A message and back.

use adk_core::{Content, Event, Role as AdkRole, USER_AUTHOR};

use super::parts::{a2a_part_to_adk, adk_part_to_a2a, call_id, mark_long_running};
use crate::types::{Message, Part, Role};

/// The A2A message for `content` sent as `role`; `None` when no part converts.
pub fn content_to_message(content: &Content, role: Role) -> Option<Message> {
    let parts: Vec<Part> = content.parts.iter().filter_map(adk_part_to_a2a).collect();
    (!parts.is_empty()).then(|| Message::new(role, parts))
}

/// The A2A message for an event's content: the user's role for the user's events, the agent's
/// otherwise, with the event's long-running calls marked `adk_is_long_running`. `None` when the
/// event has no content A2A can carry.
///
/// ```
/// use adk_a2a::convert::event_to_message;
/// use adk_core::{Content, Event, InvocationId};
///
/// let event = Event::new(InvocationId::from("e-1"), "weather").with_content(Content::model("Sunny"));
/// let message = event_to_message(&event).unwrap();
/// assert_eq!(message.text().as_deref(), Some("Sunny"));
/// ```
pub fn event_to_message(event: &Event) -> Option<Message> {
    let role = if event.author == USER_AUTHOR {
        Role::User
    } else {
        Role::Agent
    };
    let mut message = content_to_message(event.content()?, role)?;
    if let Some(long_running) = &event.long_running_tool_ids {
        for part in &mut message.parts {
            if call_id(part).is_some_and(|id| long_running.iter().any(|lr| lr == id))
                && super::data_part_type(part) == Some("function_call")
            {
                mark_long_running(part);
            }
        }
    }
    Some(message)
}

/// The ADK content of an A2A message: the user's role for the user's messages, the model's for
/// the agent's; parts that do not convert are skipped.
pub fn message_to_content(message: &Message) -> Content {
    let role = match message.role {
        Role::User => AdkRole::User,
        Role::Agent => AdkRole::Model,
    };
    Content::new(role, message.parts.iter().filter_map(a2a_part_to_adk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{IS_LONG_RUNNING_KEY, data_part_type};
    use adk_core::{FunctionCall, InvocationId, Part as AdkPart};
    use serde_json::json;

    #[test]
    fn long_running_calls_are_marked() {
        let mut event = Event::new(InvocationId::from("e-1"), "agent").with_content(Content::new(
            AdkRole::Model,
            [
                AdkPart::function_call(FunctionCall::new("approve", json!({})).with_id("c1")),
                AdkPart::function_call(FunctionCall::new("look", json!({})).with_id("c2")),
            ],
        ));
        event.long_running_tool_ids = Some(vec!["c1".into()]);
        let message = event_to_message(&event).unwrap();
        assert_eq!(message.role, Role::Agent);
        let marked: Vec<bool> = message
            .parts
            .iter()
            .map(|part| {
                part.metadata()
                    .is_some_and(|m| m.contains_key(IS_LONG_RUNNING_KEY))
            })
            .collect();
        assert_eq!(marked, [true, false]);
        assert_eq!(data_part_type(&message.parts[0]), Some("function_call"));
        let back = message_to_content(&message);
        assert_eq!(back.role, Some(AdkRole::Model));
        assert_eq!(back.function_calls().count(), 2);
    }
}
