//! The flow's side of function calls: running the calls of a step's model event through the
//! [`ToolInvoker`](crate::ToolInvoker) with the agent's tools, callbacks and loop guard.

use std::collections::{HashMap, HashSet};

use adk_core::{Event, FunctionCallId, ToolConfirmation};

use crate::ToolInvoker;
use crate::step::Step;

/// Runs the function calls of `call_event` (only those in `only`, when given) with the step's
/// tools, the agent's callbacks and loop guard, handing calls answered by a confirmation their
/// answer; returns the screened response event, `None` when no call produced a response or an
/// action.
///
/// A call whose hooks fail (a plugin or callback returned an error) is answered with that error,
/// and the error is kept in the step, which ends the run with it once the event is stored: its
/// siblings may already have acted, so their results are stored rather than dropped with the run.
/// A call repeated past the loop guard's limit leaves the message that ends the agent's turn in
/// the step the same way.
pub(super) async fn handle_function_calls(
    step: &Step,
    call_event: &Event,
    confirmations: &HashMap<FunctionCallId, ToolConfirmation>,
    only: Option<&HashSet<FunctionCallId>>,
) -> Option<Event> {
    let mut invoker = ToolInvoker::new(&step.ctx, &step.tools)
        .callbacks(&step.agent.callbacks.tools)
        .max_repeated_calls(step.agent.max_repeated_tool_calls)
        .confirmations(confirmations);
    if let Some(only) = only {
        invoker = invoker.only(only);
    }
    let responses = invoker.run(call_event).await;
    if let Some(error) = responses.hook_error {
        step.hook_failure.lock().get_or_insert(error);
    }
    if let Some(message) = responses.stop {
        step.loop_stop.lock().get_or_insert(message);
    }
    responses.event
}
