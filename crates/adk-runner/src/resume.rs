//! Continuations: checking that a message's function responses answer calls this session really
//! has waiting, restoring the progress agents checkpointed in a paused invocation, and telling
//! whether it may go on.
//!
//! A call waits for the user's answer when an agent of the tree made it in this session, listed it
//! as long-running, no user event answered it since, and no rewind undid it. A tool's own interim
//! result (authored by the agent) does not count as the user's answer.

use adk_core::internal::{AgentProgress, InvocationControl as _};
use adk_core::{
    AgentTree, Content, Error, ErrorKind, Event, FunctionCall, FunctionCallId, InvocationContext,
    InvocationId, Result, USER_AUTHOR,
};
use serde_json::Value;

/// The function the flow calls to ask the user to confirm a tool call.
const REQUEST_CONFIRMATION_FUNCTION: &str = "adk_request_confirmation";

/// The function the flow calls to ask the user for a tool's credentials.
const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// What a message with function responses continues: the invocation and branch of the calls it
/// answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Continuation {
    pub(crate) invocation_id: InvocationId,
    pub(crate) branch: Option<String>,
}

/// Checks `message` against the session's `events`: it may hold no function calls, and each
/// function response must answer a call that waits for the user. Returns what the responses
/// continue, `None` when the message holds none.
pub(crate) fn check_message(
    tree: &AgentTree,
    events: &[Event],
    message: &Content,
) -> Result<Option<Continuation>> {
    if let Some(call) = message.function_calls().next() {
        return Err(rejected(format!(
            "the message holds a call of `{}`; only agents make function calls",
            call.name
        )));
    }
    let mut continuation: Option<Continuation> = None;
    for response in message.function_responses() {
        let Some(id) = &response.id else {
            return Err(rejected(format!(
                "the response of `{}` has no id; it must carry the id of the call it answers",
                response.name
            )));
        };
        let (call_event, call) = waiting_call(tree, events, id)?;
        if call.name != response.name {
            return Err(rejected(format!(
                "the response to call '{id}' names `{}`, but that call is of `{}`",
                response.name, call.name
            )));
        }
        check_request(events, call_event, call)?;
        let answered = Continuation {
            invocation_id: call_event.invocation_id.clone(),
            branch: call_event.branch.clone(),
        };
        match &mut continuation {
            None => continuation = Some(answered),
            Some(seen) if seen.invocation_id != answered.invocation_id => {
                return Err(rejected(
                    "the responses answer calls of different invocations; answer one invocation per message"
                        .to_owned(),
                ));
            }
            Some(seen) if seen.branch != answered.branch => seen.branch = None,
            Some(_) => {}
        }
    }
    Ok(continuation)
}

/// The event and the call `id` that waits for the user's answer.
fn waiting_call<'e>(
    tree: &AgentTree,
    events: &'e [Event],
    id: &FunctionCallId,
) -> Result<(&'e Event, &'e FunctionCall)> {
    let mut answered_since = false;
    for (index, event) in events.iter().enumerate().rev() {
        if event.author == USER_AUTHOR {
            answered_since |= event
                .function_responses()
                .any(|response| response.id.as_ref() == Some(id));
            continue;
        }
        let Some(call) = event
            .function_calls()
            .find(|call| call.id.as_ref() == Some(id))
        else {
            continue;
        };
        if tree.find(&event.author).is_none() {
            break;
        }
        let long_running = event
            .long_running_tool_ids
            .as_ref()
            .is_some_and(|ids| ids.contains(id));
        if !long_running || answered_since {
            return Err(rejected(format!(
                "call '{id}' of `{}` does not wait for an answer",
                call.name
            )));
        }
        if is_undone(events, index) {
            // An old client (a browser tab opened before the rewind) must not run what the user
            // undid.
            return Err(rejected(format!(
                "call '{id}' of `{}` was undone by a rewind and waits for no answer",
                call.name
            )));
        }
        return Ok((event, call));
    }
    Err(rejected(format!(
        "no agent of this session made a call with id '{id}'"
    )))
}

/// Whether invocation `invocation_id` was undone by a rewind: a later rewind went back to it or to
/// an invocation before it.
pub(crate) fn is_rewound(events: &[Event], invocation_id: &InvocationId) -> bool {
    events
        .iter()
        .position(|event| &event.invocation_id == invocation_id)
        .is_some_and(|first| is_undone(events, first))
}

/// Whether event `index` was undone: a rewind after it names an invocation that began at or
/// before it.
fn is_undone(events: &[Event], index: usize) -> bool {
    events[index + 1..]
        .iter()
        .filter_map(|event| event.actions.rewind_before_invocation_id.as_ref())
        .any(|target| {
            events
                .iter()
                .position(|event| &event.invocation_id == target)
                .is_some_and(|start| start <= index)
        })
}

/// For the flow's own requests, checks that the call they are about is genuine: a confirmation
/// must name a call its agent made with exactly those arguments, a credential request a call its
/// agent made.
fn check_request(events: &[Event], request_event: &Event, request: &FunctionCall) -> Result<()> {
    let agent_made = |matches: &dyn Fn(&FunctionCall) -> bool| {
        events
            .iter()
            .filter(|event| event.author == request_event.author)
            .flat_map(Event::function_calls)
            .any(|call| call.name != request.name && matches(call))
    };
    match request.name.as_str() {
        REQUEST_CONFIRMATION_FUNCTION => {
            let original: FunctionCall = request
                .args
                .get("originalFunctionCall")
                .cloned()
                .map(serde_json::from_value)
                .transpose()?
                .ok_or_else(|| rejected("a confirmation request names no call".to_owned()))?;
            if !agent_made(&|call| call == &original) {
                return Err(rejected(format!(
                    "the confirmation is about a call of `{}` that agent '{}' never made with those arguments",
                    original.name, request_event.author
                )));
            }
        }
        REQUEST_CREDENTIAL_FUNCTION => {
            let original_id = request.args.get("functionCallId").and_then(Value::as_str);
            if !agent_made(&|call| call.id.as_ref().map(FunctionCallId::as_str) == original_id) {
                return Err(rejected(format!(
                    "the credential request is about a call that agent '{}' never made",
                    request_event.author
                )));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The long-running calls of invocation `invocation_id` that the user has not answered yet.
pub(crate) fn unanswered_calls(
    events: &[Event],
    invocation_id: &InvocationId,
) -> Vec<FunctionCallId> {
    let mut waiting: Vec<FunctionCallId> = Vec::new();
    for event in events {
        if event.author == USER_AUTHOR {
            let answered: Vec<_> = event
                .function_responses()
                .filter_map(|response| response.id.as_ref())
                .collect();
            waiting.retain(|id| !answered.contains(&id));
        } else if &event.invocation_id == invocation_id {
            let long_running = event.long_running_tool_ids.as_deref().unwrap_or_default();
            waiting.extend(
                event
                    .function_calls()
                    .filter_map(|call| call.id.clone())
                    .filter(|id| long_running.contains(id)),
            );
        }
    }
    waiting
}

/// Restores into `ctx` the progress the agents of its invocation checkpointed (ADK's
/// `populate_invocation_agent_states`): an `end_of_agent` event ends an agent, an `agent_state`
/// event records its state and starts its sub-agents afresh, and content from an agent with no
/// state yet marks it running.
pub(crate) fn restore_progress(ctx: &InvocationContext) {
    ctx.with_session(|session| restore_from(ctx, &session.events));
}

/// [`restore_progress`] from the session's events.
fn restore_from(ctx: &InvocationContext, events: &[Event]) {
    let events = events
        .iter()
        .filter(|event| &event.invocation_id == ctx.invocation_id() && event.author != USER_AUTHOR);
    for event in events {
        if event.actions.end_of_agent == Some(true) {
            ctx.set_agent_progress(&event.author, Some(AgentProgress::Ended));
        } else if let Some(state) = &event.actions.agent_state {
            ctx.set_agent_progress(&event.author, Some(AgentProgress::Running(state.clone())));
            ctx.reset_sub_agent_progress(&event.author);
        } else if event.content().is_some()
            && !matches!(
                ctx.agent_progress(&event.author),
                Some(AgentProgress::Running(_))
            )
        {
            ctx.set_agent_progress(
                &event.author,
                Some(AgentProgress::Running(Value::Object(Default::default()))),
            );
        }
    }
}

/// The user message that started invocation `invocation_id`.
pub(crate) fn original_message(events: &[Event], invocation_id: &InvocationId) -> Option<Content> {
    events
        .iter()
        .find(|event| &event.invocation_id == invocation_id && event.author == USER_AUTHOR)
        .and_then(|event| event.content().cloned())
}

fn rejected(message: String) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("{message}; the message was not stored and no tool ran"),
    )
}
