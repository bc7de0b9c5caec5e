//! The loop guard (`LlmAgentBuilder::max_repeated_tool_calls`,
//! [`ToolInvoker::max_repeated_calls`](super::ToolInvoker::max_repeated_calls),
//! `RunConfig::max_repeated_tool_calls`): counts how many times each agent called each tool with
//! each arguments in the invocation. The first call runs the tool; a repeat up to the limit gets
//! the last result back with a nudge to answer, without running the tool again (unless another
//! tool ran since, which may have changed what it would answer); the call past the limit is
//! refused and ends the agent's step. Identical calls of one model response all run and count
//! once: a model may mean them.

use adk_core::internal::InvocationControl as _;
use adk_core::{EventId, FunctionCall, InvocationContext};
use parking_lot::Mutex;
use serde_json::{Map, Value, json};

/// The calls of one tool with one set of arguments by one agent.
struct Calls {
    agent: String,
    tool: String,
    args: Map<String, Value>,
    /// How many model responses made such a call.
    count: u32,
    /// The model response that made the latest such call.
    response: EventId,
    /// What the tool answered the latest time it ran, and the number of guarded runs in the
    /// invocation at that moment.
    result: Option<(Value, u64)>,
}

/// Every counted call of the invocation, kept in the invocation's data so that concurrent
/// invocations never share counts. A model that loops repeats few distinct calls, so a list is
/// enough.
#[derive(Default)]
struct RepeatedCalls(Mutex<Counts>);

#[derive(Default)]
struct Counts {
    calls: Vec<Calls>,
    /// How many guarded calls ran their tool in the invocation.
    runs: u64,
}

/// What the guard makes of one call.
pub(super) enum Verdict {
    /// The guard is off, or the call repeats another of the same response: run the tool.
    Run,
    /// A counted call to run: run the tool and [`record`] its result.
    First,
    /// A repeat within the limit: answer it with this response instead of running the tool.
    Replay(Value),
    /// A repeat past the limit: answer it with `response`, then end the agent's step with
    /// `message`.
    Stop { response: Value, message: String },
}

/// What the guard makes of `call`, made by the running agent's model `response`, with `limit`
/// (else the run config's) the most model responses whose such call is answered in the
/// invocation; `0` turns the guard off. Arguments are compared as JSON values, so the order of
/// their keys does not matter.
pub(super) fn verdict(
    ctx: &InvocationContext,
    limit: Option<u32>,
    call: &FunctionCall,
    response: &EventId,
) -> Verdict {
    let Some(limit) = limit
        .or(ctx.run_config().max_repeated_tool_calls)
        .filter(|limit| *limit > 0)
    else {
        return Verdict::Run;
    };
    let agent = ctx.agent_name();
    let counts = ctx.invocation_data::<RepeatedCalls>();
    let mut counts = counts.0.lock();
    let runs = counts.runs;
    let Some(calls) = counts
        .calls
        .iter_mut()
        .find(|calls| calls.agent == agent && calls.tool == call.name && calls.args == call.args)
    else {
        counts.calls.push(Calls {
            agent: agent.to_owned(),
            tool: call.name.clone(),
            args: call.args.clone(),
            count: 1,
            response: response.clone(),
            result: None,
        });
        return Verdict::First;
    };
    if calls.response == *response {
        return Verdict::Run;
    }
    calls.response = response.clone();
    calls.count += 1;
    if calls.count > limit {
        let message = format!(
            "Stopped: the model called {} with the same arguments {} times in this turn \
             instead of answering. The results it got are above; ask again, or ask differently.",
            call.name, calls.count
        );
        let response = json!({
            "error": format!(
                "tool '{}' was not run: it was called with these arguments {} times in this \
                 turn, more than allowed, so the turn ends here.",
                call.name, calls.count
            )
        });
        return Verdict::Stop { response, message };
    }
    // Another tool ran since (or the tool has not answered yet): what it would answer now may
    // differ, so it runs again.
    let Some((result, _)) = calls.result.as_ref().filter(|(_, at)| *at == runs) else {
        return Verdict::First;
    };
    let note = format!(
        "You already called {} with these arguments in this turn, and this is the result it \
         gave; the tool was not run again. Answer the user with this result now instead of \
         calling the tool again.",
        call.name
    );
    Verdict::Replay(match result {
        Value::Object(result) if !result.contains_key("note") => {
            let mut replayed = result.clone();
            replayed.insert("note".to_owned(), Value::String(note));
            Value::Object(replayed)
        }
        result => json!({"result": result, "note": note}),
    })
}

/// Keeps what `call`'s tool answered (a call the guard gave [`Verdict::First`]), for its repeats
/// to be given back while no other tool runs.
pub(super) fn record(ctx: &InvocationContext, call: &FunctionCall, result: &Value) {
    let agent = ctx.agent_name();
    let counts = ctx.invocation_data::<RepeatedCalls>();
    let mut counts = counts.0.lock();
    counts.runs += 1;
    let runs = counts.runs;
    if let Some(calls) = counts
        .calls
        .iter_mut()
        .find(|calls| calls.agent == agent && calls.tool == call.name && calls.args == call.args)
    {
        calls.result = Some((result.clone(), runs));
    }
}
