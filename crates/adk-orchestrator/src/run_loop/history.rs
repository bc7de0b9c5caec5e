//! The conversation the loop starts from: the session's events on the agent's branch, read once
//! per run.

use adk_core::{Content, Event, InvocationContext, Part, PartData, Role, USER_AUTHOR};

/// The contents of the session's events that belong to the branch of `ctx`, for the agent of
/// `ctx`: the user's and the agent's own contents as they are, other agents' text as context
/// from the user. Partial events, events without content and thoughts are left out.
pub(crate) fn session_history(ctx: &InvocationContext) -> Vec<Content> {
    let branch = ctx.branch();
    ctx.with_session(|session| {
        session
            .events
            .iter()
            .filter(|event| !event.is_partial() && on_branch(event, branch))
            .filter_map(|event| convert(event, ctx.agent_name()))
            .collect()
    })
}

/// Whether `event` is on `branch` or on one of its ancestors.
fn on_branch(event: &Event, branch: Option<&str>) -> bool {
    match (branch, event.branch.as_deref()) {
        (None, _) | (_, None) => true,
        (Some(branch), Some(own)) => {
            branch == own
                || branch
                    .strip_prefix(own)
                    .is_some_and(|rest| rest.starts_with('.'))
        }
    }
}

fn convert(event: &Event, agent_name: &str) -> Option<Content> {
    let content = event.content()?;
    let parts: Vec<Part> = content
        .parts
        .iter()
        .filter(|part| !part.thought)
        .cloned()
        .collect();
    if event.author == USER_AUTHOR || event.author == agent_name {
        let role = content.role.unwrap_or(if event.author == USER_AUTHOR {
            Role::User
        } else {
            Role::Model
        });
        return (!parts.is_empty()).then(|| Content::new(role, parts));
    }
    // Another agent's turn: its words, told to this agent as context.
    let said: Vec<&str> = parts
        .iter()
        .filter_map(|part| match &part.data {
            PartData::Text(text) if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!said.is_empty()).then(|| {
        Content::user(format!(
            "For context: [{}] said: {}",
            event.author,
            said.join("\n")
        ))
    })
}
