//! The loop guard (`LlmAgentBuilder::max_repeated_tool_calls`,
//! [`ToolInvoker::max_repeated_calls`](super::ToolInvoker::max_repeated_calls)): counts how many
//! times each agent ran each tool with each arguments in the invocation, and refuses a call past
//! the limit.

use adk_core::internal::InvocationControl as _;
use adk_core::{FunctionCall, InvocationContext};
use parking_lot::Mutex;
use serde_json::{Map, Value, json};

/// The runs of one tool with one set of arguments by one agent.
struct Runs {
    agent: String,
    tool: String,
    args: Map<String, Value>,
    count: u32,
}

/// Every counted run of the invocation, kept in the invocation's data so that concurrent
/// invocations never share counts. A weak model repeats few distinct calls, so a list is enough.
#[derive(Default)]
struct RepeatedCalls(Mutex<Vec<Runs>>);

/// The response that refuses `call` when the running agent already ran the tool with the same
/// arguments as often as the limit allows (`limit`, else the run's); otherwise counts the call as
/// run and gives `None`. Arguments are compared as JSON values, so the order of their keys does
/// not matter.
pub(super) fn refusal(
    ctx: &InvocationContext,
    limit: Option<u32>,
    call: &FunctionCall,
) -> Option<Value> {
    let limit = limit.or(ctx.run_config().max_repeated_tool_calls)?;
    let agent = ctx.agent_name();
    let calls = ctx.invocation_data::<RepeatedCalls>();
    let mut calls = calls.0.lock();
    let index = match calls
        .iter()
        .position(|runs| runs.agent == agent && runs.tool == call.name && runs.args == call.args)
    {
        Some(index) => index,
        None => {
            calls.push(Runs {
                agent: agent.to_owned(),
                tool: call.name.clone(),
                args: call.args.clone(),
                count: 0,
            });
            calls.len() - 1
        }
    };
    let runs = &mut calls[index];
    if runs.count >= limit {
        let times = if limit == 1 {
            "once".to_owned()
        } else {
            format!("{limit} times")
        };
        return Some(json!({
            "error": format!(
                "tool '{}' was not run: it already ran {times} with these arguments in this turn, \
                 the most allowed. Use the results it gave to answer the user, or call a tool \
                 with different arguments.",
                call.name
            )
        }));
    }
    runs.count += 1;
    None
}
