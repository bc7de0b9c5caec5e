//! The tool calls of one answer: run through the flow's [`ToolInvoker`] (plugins, callbacks, the
//! result size cap, the `app:` state screen) as the strategy's policy says, answered in one event.

use adk_core::{Content, Event, FunctionCall, InvocationContext, Part, Role};
use adk_flow::{ToolCallbacks, ToolInvoker, ToolMap};

use super::{LoopConfig, ToolUsePolicy};

/// Runs `calls` and returns the event that holds their responses, in the order of the calls,
/// with the actions the tools recorded. A call of a tool that is not on offer, or any call under
/// [`ToolUsePolicy::Disabled`], is answered with an error naming the tools on offer. The error of
/// a plugin or callback that failed is returned after the event, which the run stores first.
pub(crate) async fn run_calls(
    ctx: &InvocationContext,
    tools: &ToolMap,
    callbacks: &ToolCallbacks,
    calls: &[FunctionCall],
    policy: ToolUsePolicy,
    config: &LoopConfig,
) -> (Event, Option<adk_core::Error>) {
    let none = ToolMap::new();
    let offered = match policy {
        ToolUsePolicy::Disabled => &none,
        _ => tools,
    };
    let limit = match policy {
        ToolUsePolicy::Sequential => 1,
        _ => config.max_tool_concurrency,
    };
    // The strategy may read calls out of text, so the calls to run are the action's, not the
    // model event's; a call without an id gets a fresh one, which no other call of the session
    // has.
    let calls = calls.iter().map(|call| {
        let mut call = call.clone();
        call.id.get_or_insert_with(|| ctx.ids().function_call_id());
        Part::function_call(call)
    });
    let call_event = ctx
        .new_event()
        .with_content(Content::new(Role::Model, calls));
    let mut invoker = ToolInvoker::new(ctx, offered)
        .callbacks(callbacks)
        .max_concurrency(limit);
    if let Some(timeout) = config.tool_timeout {
        invoker = invoker.timeout(timeout);
    }
    let responses = invoker.run(&call_event).await;
    let event = responses
        .event
        .unwrap_or_else(|| ctx.new_event().with_content(Content::new(Role::User, [])));
    (event, responses.hook_error)
}
