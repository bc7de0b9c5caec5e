//! Interrupted calls (an addition of adk-rs, before ADK's credentials and confirmations): when
//! an invocation resumes after its process stopped while tools ran, answers
//! the calls that were cut off, guided by the effect journal.
//!
//! A call was cut off when it is the agent's last event in this invocation and no event answers
//! it (in a run that goes on, the event answering a model event's calls always follows it). For
//! each such call of a tool the agent has:
//! - its result is in the journal: it is not run again (the stored answer stands);
//! - its tool is read-only or idempotent: it runs again, with the same idempotency key;
//! - its tool is effectful and the journal holds no intent for it: it never started, so it runs;
//! - otherwise (an effectful call that started, or no journal to tell): the user decides through a
//!   confirmation request, and the call is answered with an error until then. It is never run
//!   again silently.

use std::collections::{HashMap, HashSet};

use adk_core::{Content, Event, FunctionCall, FunctionCallId, Part, Result, Role};

use crate::client_calls::confirmation_request_event;
use crate::flow::function_calls::handle_function_calls;
use crate::step::Step;
use crate::tool_calls::journal;

pub(super) async fn process(step: &Step) -> Result<Vec<Event>> {
    let Some((call_event, calls)) = step
        .ctx
        .with_session(|session| cut_off_calls(step, &session.events))
    else {
        return Ok(Vec::new());
    };
    let journal = match step.ctx.session_service() {
        Some(sessions) => {
            sessions
                .tool_journal(step.ctx.session_key(), step.ctx.invocation_id())
                .await?
        }
        None => None,
    };
    let recorded: Option<HashMap<&FunctionCallId, _>> = journal.as_ref().map(|entries| {
        entries
            .iter()
            .map(|entry| (&entry.intent.function_call_id, entry))
            .collect()
    });

    let mut rerun = HashSet::new();
    let mut undecided = Vec::new();
    for call in &calls {
        let Some(id) = &call.id else { continue };
        let entry = recorded.as_ref().and_then(|recorded| recorded.get(id));
        if entry.is_some_and(|entry| entry.is_complete()) {
            continue;
        }
        let effect = step.tools[&call.name].effect();
        let never_started = recorded.is_some() && entry.is_none();
        if effect.may_run_again() || never_started {
            rerun.insert(id.clone());
        } else {
            undecided.push((call, entry.map_or(0, |entry| entry.attempts)));
        }
    }
    tracing::info!(
        agent = step.agent.base.name.as_str(),
        rerun = rerun.len(),
        undecided = undecided.len(),
        "resuming calls cut off by an interruption"
    );

    let mut response = if rerun.is_empty() {
        None
    } else {
        handle_function_calls(step, &call_event, &HashMap::new(), Some(&rerun)).await
    };
    if undecided.is_empty() {
        return Ok(response.into_iter().collect());
    }
    let response = response.get_or_insert_with(|| step.ctx.new_event());
    for (call, attempts) in undecided {
        let Some(id) = call.id.clone() else { continue };
        let mut answer =
            adk_core::FunctionResponse::new(call.name.clone(), journal::awaiting_decision(call));
        answer.id = Some(id.clone());
        response
            .response
            .content
            .get_or_insert_with(|| Content::new(Role::User, []))
            .parts
            .push(Part::function_response(answer));
        response
            .actions
            .requested_tool_confirmations
            .insert(id, journal::decision_request(call, attempts));
    }
    let request = confirmation_request_event(step, &call_event, response);
    Ok(std::iter::once(response.clone()).chain(request).collect())
}

/// The agent's last event in this invocation and its calls that no event answers, when it has
/// any of a tool the agent has (long-running calls wait for their answer by design).
fn cut_off_calls(step: &Step, events: &[Event]) -> Option<(Event, Vec<FunctionCall>)> {
    let agent = step.agent.base.name.as_str();
    let invocation = step.ctx.invocation_id();
    let index = events
        .iter()
        .rposition(|event| &event.invocation_id == invocation && event.author == agent)?;
    let event = &events[index];
    let long_running = event.long_running_tool_ids.as_deref().unwrap_or_default();
    let answered: HashSet<&FunctionCallId> = events[index + 1..]
        .iter()
        .flat_map(Event::function_responses)
        .filter_map(|response| response.id.as_ref())
        .collect();
    let calls: Vec<FunctionCall> = event
        .function_calls()
        .filter(|call| {
            call.id
                .as_ref()
                .is_some_and(|id| !long_running.contains(id) && !answered.contains(id))
                && step.tools.contains_key(&call.name)
        })
        .cloned()
        .collect();
    (!calls.is_empty()).then(|| (event.clone(), calls))
}
