//! What comes back from a remote agent, as events of the local agent: progress as thoughts, the
//! answer as content, a pause as long-running function calls, a failure as an error event.
//!
//! A remote agent's calls of ADK's own protocol functions (`adk_request_confirmation`,
//! `adk_request_credential`, ...) would raise this process's confirmation and credential prompts
//! in its name; unless the agent allows it, they become a question in words instead.

use std::borrow::Cow;

use adk_core::{
    Content, Event, FunctionCall, FunctionCallId, InvocationContext, Part as AdkPart, Role,
};
use serde_json::{Map, Value, json};

use super::{CONTEXT_ID_METADATA_KEY, TASK_ID_METADATA_KEY, TASK_STATE_METADATA_KEY};
use crate::convert::{a2a_part_to_adk, call_id, data_part_type, is_long_running_call};
use crate::types::{Message, Part, StreamEvent, TaskState};

/// The prefix of the names of ADK's own protocol functions.
const PROTOCOL_CALL_PREFIX: &str = "adk_";

/// The calls made up when a remote agent asks for input or authentication in words rather than
/// with a call of its own, named as ADK Python names them.
pub(super) const MOCK_INPUT_CALLS: [&str; 2] = [
    "mock_function_call_for_required_user_input",
    "mock_function_call_for_required_user_auth",
];

/// The error code of the event that reports a failed remote task.
pub const REMOTE_TASK_FAILED: &str = "A2A_TASK_FAILED";

/// Turns the stream events of one remote task into local events.
pub(super) struct Converter<'c> {
    ctx: &'c InvocationContext,
    /// Whether the remote agent may raise this process's own prompts.
    allow_prompts: bool,
}

impl<'c> Converter<'c> {
    pub(super) fn new(ctx: &'c InvocationContext, allow_prompts: bool) -> Self {
        Self { ctx, allow_prompts }
    }

    /// `parts` without calls of ADK's protocol functions, unless the agent allows them; each call
    /// left out becomes a text saying what the remote agent asked for.
    fn screen<'p>(&self, parts: &'p [Part]) -> Cow<'p, [Part]> {
        if self.allow_prompts || !parts.iter().any(is_protocol_call) {
            return Cow::Borrowed(parts);
        }
        let screened = parts
            .iter()
            .map(|part| {
                if !is_protocol_call(part) {
                    return part.clone();
                }
                tracing::warn!("a remote agent asked for one of this process's own prompts; it is asked in words instead");
                Part::text(
                    "The remote agent asks for a confirmation or credentials, which it may not \
                     ask for in this agent's name: answer in words.",
                )
            })
            .collect();
        Cow::Owned(screened)
    }

    /// The local event for `item`, if it carries anything to show.
    pub(super) fn stream_event(&mut self, item: &StreamEvent) -> Option<Event> {
        let screened;
        let item = if self.allow_prompts {
            item
        } else {
            screened = self.screen_event(item);
            screened.as_ref().unwrap_or(item)
        };
        self.convert(item)
    }

    /// `item` with its parts screened, when screening changed any.
    fn screen_event(&self, item: &StreamEvent) -> Option<StreamEvent> {
        let mut item = item.clone();
        let mut changed = false;
        let mut screen = |parts: &mut Vec<Part>| {
            if let Cow::Owned(screened) = self.screen(parts) {
                *parts = screened;
                changed = true;
            }
        };
        match &mut item {
            StreamEvent::Task(task) => {
                for artifact in task.artifacts.iter_mut().flatten() {
                    screen(&mut artifact.parts);
                }
                if let Some(message) = task.status.message.as_mut() {
                    screen(&mut message.parts);
                }
            }
            StreamEvent::StatusUpdate(update) => {
                if let Some(message) = update.status.message.as_mut() {
                    screen(&mut message.parts);
                }
            }
            StreamEvent::ArtifactUpdate(update) => screen(&mut update.artifact.parts),
            StreamEvent::Message(message) => screen(&mut message.parts),
        }
        changed.then_some(item)
    }

    fn convert(&mut self, item: &StreamEvent) -> Option<Event> {
        match item {
            StreamEvent::Task(task) => {
                let parts: Vec<Part> = match &task.artifacts {
                    Some(artifacts) if !artifacts.is_empty() => artifacts
                        .iter()
                        .flat_map(|artifact| artifact.parts.iter().cloned())
                        .collect(),
                    _ => task
                        .status
                        .message
                        .as_ref()
                        .map(|message| message.parts.clone())
                        .unwrap_or_default(),
                };
                self.status_event(&task.id, &task.context_id, task.status.state, &parts, false)
            }
            StreamEvent::StatusUpdate(update) => {
                let parts = update
                    .status
                    .message
                    .as_ref()
                    .map(|message| message.parts.clone())
                    .unwrap_or_default();
                self.status_event(
                    &update.task_id,
                    &update.context_id,
                    update.status.state,
                    &parts,
                    update.is_final,
                )
            }
            StreamEvent::ArtifactUpdate(update) => {
                let mut event = self.event(
                    &update.task_id,
                    &update.context_id,
                    TaskState::Working,
                    &update.artifact.parts,
                )?;
                if update.last_chunk == Some(false) {
                    event.response.partial = Some(true);
                }
                Some(event)
            }
            StreamEvent::Message(message) => self.message_event(message),
        }
    }

    /// The event of a task's status: progress (`submitted`, `working`) as thoughts; a pause as
    /// its long-running calls (made up from its question when it has none); a failure as an
    /// error event; anything else as content.
    fn status_event(
        &self,
        task_id: &str,
        context_id: &str,
        state: TaskState,
        parts: &[Part],
        is_final: bool,
    ) -> Option<Event> {
        match state {
            TaskState::Submitted | TaskState::Working | TaskState::Unknown => {
                let mut event = self.event(task_id, context_id, state, parts)?;
                if let Some(content) = &mut event.response.content {
                    for part in &mut content.parts {
                        part.thought = true;
                    }
                }
                Some(event)
            }
            TaskState::InputRequired | TaskState::AuthRequired => {
                let mut event = self.event(task_id, context_id, state, parts);
                if event.is_none() && is_final {
                    // A bare pause still ends the exchange; it is recorded so the next run
                    // continues the task.
                    event = Some(self.bare_event(task_id, context_id, state));
                }
                let mut event = event?;
                let long_running: Vec<FunctionCallId> = parts
                    .iter()
                    .filter(|part| is_long_running_call(part))
                    .filter_map(call_id)
                    .map(FunctionCallId::from)
                    .collect();
                if long_running.is_empty() {
                    let question = ask_in_words(&mut event, state, self.ctx);
                    event.long_running_tool_ids = Some(vec![question]);
                } else {
                    event.long_running_tool_ids = Some(long_running);
                }
                Some(event)
            }
            TaskState::Failed => {
                let mut event = self
                    .event(task_id, context_id, state, parts)
                    .unwrap_or_else(|| self.bare_event(task_id, context_id, state));
                event.response.error_code = Some(REMOTE_TASK_FAILED.to_owned());
                event.response.error_message = Some(
                    event
                        .text()
                        .unwrap_or_else(|| format!("remote task {task_id} failed")),
                );
                Some(event)
            }
            _ => self.event(task_id, context_id, state, parts),
        }
    }

    fn message_event(&self, message: &Message) -> Option<Event> {
        let task_id = message.task_id.clone().unwrap_or_default();
        let context_id = message.context_id.clone().unwrap_or_default();
        self.event(&task_id, &context_id, TaskState::Completed, &message.parts)
    }

    /// An event of this agent holding `parts`, recording the task; `None` when no part converts.
    fn event(
        &self,
        task_id: &str,
        context_id: &str,
        state: TaskState,
        parts: &[Part],
    ) -> Option<Event> {
        let parts: Vec<AdkPart> = parts.iter().filter_map(a2a_part_to_adk).collect();
        if parts.is_empty() {
            return None;
        }
        let mut event = self.bare_event(task_id, context_id, state);
        event.response.content = Some(Content::new(Role::Model, parts));
        Some(event)
    }

    fn bare_event(&self, task_id: &str, context_id: &str, state: TaskState) -> Event {
        let mut metadata = Map::new();
        if !task_id.is_empty() {
            metadata.insert(TASK_ID_METADATA_KEY.to_owned(), Value::from(task_id));
        }
        if !context_id.is_empty() {
            metadata.insert(CONTEXT_ID_METADATA_KEY.to_owned(), Value::from(context_id));
        }
        metadata.insert(
            TASK_STATE_METADATA_KEY.to_owned(),
            Value::from(state.as_str()),
        );
        let mut event = self.ctx.new_event();
        event.response.custom_metadata = Some(metadata);
        event
    }
}

/// Whether `part` is a call of one of ADK's protocol functions.
fn is_protocol_call(part: &Part) -> bool {
    match part {
        Part::Data(data) if data_part_type(part) == Some("function_call") => data
            .data
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|name| name.starts_with(PROTOCOL_CALL_PREFIX)),
        _ => false,
    }
}

/// Replaces the last text of a pause that came without a call of its own by a made-up
/// long-running call asking it, so that the user answers it as any other call; returns its id.
fn ask_in_words(event: &mut Event, state: TaskState, ctx: &InvocationContext) -> FunctionCallId {
    let (name, key) = if state == TaskState::AuthRequired {
        (MOCK_INPUT_CALLS[1], "auth_required")
    } else {
        (MOCK_INPUT_CALLS[0], "input_required")
    };
    let id = FunctionCallId::from(ctx.ids().new_uuid());
    let content = event
        .response
        .content
        .get_or_insert_with(|| Content::new(Role::Model, []));
    let question_at = content
        .parts
        .iter()
        .rposition(|part| part.as_text().is_some_and(|text| !text.trim().is_empty()));
    let question = question_at
        .and_then(|index| content.parts[index].as_text().map(str::to_owned))
        .unwrap_or_default();
    let call = AdkPart::function_call(
        FunctionCall::new(name, json!({ key: question })).with_id(id.clone()),
    );
    match question_at {
        Some(index) => content.parts[index] = call,
        None => content.parts.push(call),
    }
    id
}
