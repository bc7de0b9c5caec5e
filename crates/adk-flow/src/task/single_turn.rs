//! A single-turn run of an agent: its input as the only user turn it sees, and its final text (or
//! its structured answer) as its output.

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Agent, Content, Event, EventId, EventStream, InvocationContext, Role, USER_AUTHOR};
use async_stream::try_stream;
use futures::StreamExt as _;
use serde_json::Value;

use crate::LlmAgent;

/// Runs `agent` (a single-turn copy, see [`LlmAgent::in_mode`]) once on `input` in `ctx`: the
/// input is the user's turn of its request (put in the invocation's copy of the session for this
/// run only, not stored), and each final model answer it gives carries its output: the parsed JSON
/// with an output schema, else its text, with `nodeInfo.messageAsOutput` set.
pub fn run_single_turn(
    agent: Arc<LlmAgent>,
    ctx: InvocationContext,
    input: Option<Content>,
) -> EventStream {
    Box::pin(try_stream! {
        let injected = input.map(|content| Injected::put(&ctx, content));
        let mut events = agent.clone().run(ctx.clone());
        while let Some(event) = events.next().await {
            let mut event = event?;
            mark_output(&agent, &mut event);
            yield event;
        }
        drop(injected);
    })
}

/// Sets the output a single-turn agent's event carries.
fn mark_output(agent: &LlmAgent, event: &mut Event) {
    if event.function_calls().next().is_some()
        || event.is_partial()
        || event
            .content()
            .is_none_or(|content| content.role != Some(Role::Model))
    {
        return;
    }
    let text = event.text().unwrap_or_default();
    if agent.output_schema().is_some() {
        if !text.trim().is_empty() {
            event.output = Some(serde_json::from_str(&text).unwrap_or(Value::String(text)));
        }
    } else {
        event.output = Some(Value::String(text));
        event.node_info.message_as_output = Some(true);
    }
}

/// The input's event in the invocation's copy of the session, taken out again when dropped (the
/// run ended or was dropped).
struct Injected {
    ctx: InvocationContext,
    id: EventId,
}

impl Injected {
    fn put(ctx: &InvocationContext, content: Content) -> Self {
        let mut event = Event::with_ids_and_clock(
            ctx.invocation_id().clone(),
            USER_AUTHOR,
            ctx.ids(),
            ctx.clock(),
        )
        .with_content(Content::new(Role::User, content.parts))
        .with_branch(ctx.branch().map(str::to_owned));
        event.node_info.path = ctx.node_path().clone();
        event.isolation_scope = ctx.isolation_scope().cloned();
        let id = event.id.clone();
        ctx.with_session_mut(|session| session.events.push(event));
        Self {
            ctx: ctx.clone(),
            id,
        }
    }
}

impl Drop for Injected {
    fn drop(&mut self) {
        self.ctx.with_session_mut(|session| {
            if let Some(index) = session.events.iter().rposition(|event| event.id == self.id) {
                session.events.remove(index);
            }
        });
    }
}

/// A value as the text an agent is given: a string as it is, anything else as JSON written the
/// way ADK Python writes it (`", "` between items, `": "` after keys), so that both send a model
/// the same request.
pub fn user_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => {
            let mut out = String::new();
            write_json(other, &mut out);
            out
        }
    }
}

fn write_json(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_json(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_written_as_adk_python_writes_them() {
        assert_eq!(
            user_text(&json!({"a": [1, "x", null, true], "b": {"c": 1.5}})),
            r#"{"a": [1, "x", null, true], "b": {"c": 1.5}}"#
        );
        assert_eq!(user_text(&json!("plain")), "plain");
        assert_eq!(user_text(&json!(["é"])), r#"["é"]"#);
    }
}
