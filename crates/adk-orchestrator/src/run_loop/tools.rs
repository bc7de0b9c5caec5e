//! The tool calls of one answer: run as the strategy's policy says, answered in one event.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{Content, Event, EventActions, FunctionCall, InvocationContext, Part, Role};
use adk_tool::Tool;
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use tracing::Instrument as _;

use super::ToolUsePolicy;
use crate::tool_call::{call_tool, unknown_tool};

/// Runs `calls` and returns the event that holds their responses, in the order of the calls, and
/// the actions the tools recorded. A call of a tool that is not on offer, or any call under
/// [`ToolUsePolicy::Disabled`], is answered with an error.
pub(crate) async fn run_calls(
    ctx: &InvocationContext,
    tools: &HashMap<String, Arc<dyn Tool>>,
    calls: &[FunctionCall],
    policy: ToolUsePolicy,
    concurrency: usize,
    timeout: Option<Duration>,
) -> Event {
    let mut available: Vec<&str> = match policy {
        ToolUsePolicy::Disabled => Vec::new(),
        _ => tools.keys().map(String::as_str).collect(),
    };
    available.sort_unstable();
    let limit = match policy {
        ToolUsePolicy::Sequential => 1,
        _ => concurrency.max(1),
    };
    let span = if calls.len() > 1 {
        adk_telemetry::merged_tools_span()
    } else {
        tracing::Span::none()
    };
    // Each call's future owns what it needs, so that the stream of them borrows nothing.
    let available: Arc<[String]> = available.iter().map(|name| (*name).to_owned()).collect();
    let pending: Vec<BoxFuture<'static, (Part, EventActions)>> = calls
        .iter()
        .map(|call| {
            let tool = tools
                .get(&call.name)
                .filter(|_| policy != ToolUsePolicy::Disabled)
                .cloned();
            let (ctx, call, available) = (ctx.clone(), call.clone(), available.clone());
            async move {
                match tool {
                    Some(tool) => {
                        let outcome = call_tool(&ctx, &tool, &call, timeout).await;
                        (outcome.response, outcome.actions)
                    }
                    None => {
                        let names: Vec<&str> = available.iter().map(String::as_str).collect();
                        (unknown_tool(&call, &names), EventActions::default())
                    }
                }
            }
            .instrument(span.clone())
            .boxed()
        })
        .collect();
    let outcomes: Vec<(Part, EventActions)> = futures::stream::iter(pending)
        .buffered(limit)
        .collect()
        .await;
    let mut actions = EventActions::default();
    let mut parts = Vec::with_capacity(outcomes.len());
    for (part, tool_actions) in outcomes {
        parts.push(part);
        actions.merge(tool_actions);
    }
    let event = ctx
        .new_event()
        .with_content(Content::new(Role::User, parts))
        .with_actions(actions);
    adk_telemetry::record_merged_tools(&span, &event);
    event
}
