//! Which agent takes the turn of a new message (ADK's `_find_agent_to_run`).

use std::sync::Arc;

use adk_core::{Agent, AgentTree, Event, USER_AUTHOR};
use adk_flow::{AgentMode, LlmAgent};

/// The agent that answers the latest event of `events`:
///
/// 1. when the latest event is the user's function response, the agent that made the call it
///    answers;
/// 2. else the last agent that spoke, if it and every ancestor are chat `LlmAgent`s that may
///    transfer to their parent (an agent the conversation was transferred to keeps it); a task
///    agent's turns (in an isolation scope) do not count, as its delegator resumes it;
/// 3. else the root.
pub(crate) fn agent_to_run(tree: &AgentTree, events: &[Event]) -> Arc<dyn Agent> {
    if let Some(caller) = caller_of_latest_response(tree, events) {
        return caller;
    }
    for event in events
        .iter()
        .rev()
        .filter(|event| event.author != USER_AUTHOR && event.isolation_scope.is_none())
    {
        if event.author == tree.root().name() {
            break;
        }
        let Some(agent) = tree.find(&event.author) else {
            continue;
        };
        if may_keep_the_turn(tree, agent) {
            return agent.clone();
        }
    }
    tree.root().clone()
}

/// The agent that made the call the latest event answers, when it is the user's function
/// response.
pub(crate) fn caller_of_latest_response(
    tree: &AgentTree,
    events: &[Event],
) -> Option<Arc<dyn Agent>> {
    let latest = events.last().filter(|event| event.author == USER_AUTHOR)?;
    let answered: Vec<_> = latest
        .function_responses()
        .filter_map(|response| response.id.as_ref())
        .collect();
    let call_event = events.iter().rev().skip(1).find(|event| {
        event
            .function_calls()
            .any(|call| call.id.as_ref().is_some_and(|id| answered.contains(&id)))
    })?;
    tree.find(&call_event.author).cloned()
}

/// Whether `agent` and all its ancestors are `LlmAgent`s that may hand the turn back up.
fn may_keep_the_turn(tree: &AgentTree, agent: &Arc<dyn Agent>) -> bool {
    let mut current = Some(agent);
    while let Some(agent) = current {
        match agent.downcast_ref::<LlmAgent>() {
            Some(llm_agent)
                if llm_agent.allows_transfer_to_parent()
                    && matches!(llm_agent.mode(), None | Some(AgentMode::Chat)) => {}
            _ => return false,
        }
        current = tree.parent_of(agent.name());
    }
    true
}
