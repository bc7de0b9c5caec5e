//! [`ToolInvoker`]: the one path every function call takes, whoever asked for it (an `LlmAgent`'s
//! model, the orchestrator's tool processor or run loop): plugins and callbacks around the tool,
//! errors and panics turned into responses the model reads, the loop guard, a timeout, and the
//! invocation's limits on what reaches the history (results cut to
//! `RunConfig::max_tool_result_bytes`, `app:` state only where tools may write it).
//!
//! Call ids are made unique in the session before a model event is yielded ([`assign_call_ids`]),
//! so that every later step keys a call's response, confirmation and resumption by an id no other
//! call has.

mod call;
mod call_ids;
pub(crate) mod journal;
mod repeated;
mod screen;
pub(crate) mod tool_state;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use adk_core::{
    Content, Error, Event, EventActions, EventId, FunctionCall, FunctionCallId, InvocationContext,
    Role, ToolConfirmation,
};
use adk_tool::Tool;
use futures::StreamExt as _;
use serde_json::json;
use tracing::{Instrument as _, Span};

use crate::ToolCallbacks;

pub use call_ids::assign_call_ids;
pub use tool_state::ToolStateScopes;

/// The tools on offer, by name.
pub type ToolMap = HashMap<String, Arc<dyn Tool>>;

/// Runs the function calls of a model event and answers them in one event, as an `LlmAgent`
/// does: in parallel (at most [`RunConfig::max_concurrent_tool_calls`](adk_core::RunConfig) at
/// once, or the invoker's own cap), each between the invocation's plugins and the given
/// [`ToolCallbacks`], in its `execute_tool` span.
///
/// A tool's error, panic or timeout, and a call of a tool not on offer, become a function
/// response that tells the model what went wrong (unless an on-tool-error hook recovers). The
/// response event is screened before it is returned: results larger than
/// [`RunConfig::max_tool_result_bytes`](adk_core::RunConfig::max_tool_result_bytes) are cut, and
/// `app:` state is dropped when the app does not let tools write it.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{Agent, Content, Event, EventStream, FunctionCall, InvocationContext, Part, Role, Session, SessionKey};
/// use adk_flow::{ToolInvoker, ToolMap, assign_call_ids};
/// use adk_tool::{FunctionTool, IntoTool};
/// # struct Host;
/// # impl Agent for Host {
/// #     fn name(&self) -> &str { "host" }
/// #     fn description(&self) -> &str { "" }
/// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
/// # }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { city: String }
///
/// async fn get_weather(args: Args) -> Result<String, String> {
///     Ok(format!("sunny in {}", args.city))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> adk_core::Result<()> {
/// # let ctx = InvocationContext::builder(Host, Session::new(SessionKey::new("app", "u", "s"))).build()?;
/// let tool = FunctionTool::new("get_weather", "Reports the weather.", get_weather).into_tool();
/// let tools = ToolMap::from([(tool.name().to_owned(), tool)]);
///
/// let call = FunctionCall::new("get_weather", serde_json::json!({"city": "Paris"}));
/// let mut model_event = ctx.new_event().with_content(Content::new(Role::Model, [Part::function_call(call)]));
/// assign_call_ids(&ctx, &mut model_event);
///
/// let responses = ToolInvoker::new(&ctx, &tools).run(&model_event).await;
/// let event = responses.event.unwrap();
/// let response = event.function_responses().next().unwrap();
/// assert_eq!(response.response["result"], "sunny in Paris");
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct ToolInvoker<'a> {
    ctx: &'a InvocationContext,
    tools: &'a ToolMap,
    callbacks: Option<&'a ToolCallbacks>,
    timeout: Option<Duration>,
    max_concurrency: Option<usize>,
    max_repeated_calls: Option<u32>,
    confirmations: Option<&'a HashMap<FunctionCallId, ToolConfirmation>>,
    only: Option<&'a HashSet<FunctionCallId>>,
}

/// What running the calls of one model event gave.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolResponses {
    /// The event that answers the calls: their function responses (none for a long-running tool
    /// that gave no result yet) and the actions the tools recorded, screened. `None` when no call
    /// produced a response or an action.
    pub event: Option<Event>,
    /// The failures of tools no hook recovered from, in the order of the calls; the model reads
    /// each in its call's response.
    pub failures: Vec<Error>,
    /// The error a plugin or callback failed with. The response event holds the other calls'
    /// results, which may already have acted: store it, then end the run with this error.
    pub hook_error: Option<Error>,
    /// Why the agent should stop: a call was repeated with the same arguments past the loop
    /// guard's limit (see [`max_repeated_calls`](ToolInvoker::max_repeated_calls)). The response
    /// event answers the call with an error; an `LlmAgent` then ends its turn with this message
    /// instead of calling the model again.
    pub stop: Option<String>,
}

impl<'a> ToolInvoker<'a> {
    /// An invoker of `tools` in the invocation of `ctx`, with no callbacks of its own (the
    /// invocation's plugins still run).
    pub fn new(ctx: &'a InvocationContext, tools: &'a ToolMap) -> Self {
        Self {
            ctx,
            tools,
            callbacks: None,
            timeout: None,
            max_concurrency: None,
            max_repeated_calls: None,
            confirmations: None,
            only: None,
        }
    }

    /// Runs `callbacks` around each call, after the invocation's plugins.
    #[must_use]
    pub fn callbacks(mut self, callbacks: &'a ToolCallbacks) -> Self {
        self.callbacks = Some(callbacks);
        self
    }

    /// Stops a call that takes longer than `limit`; the model is told it timed out.
    #[must_use]
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Runs at most `limit` calls at once (at least 1), instead of the run config's cap.
    #[must_use]
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit.max(1));
        self
    }

    /// The loop guard: the running agent's calls of a tool with the same arguments are answered
    /// for at most `limit` model responses in the invocation (identical calls of one response
    /// all run and count once). The first runs the tool; the later ones get the latest result
    /// back with a note telling the model to answer, without running the tool again unless
    /// another tool ran since; the call after the limit is answered with an error and sets
    /// [`ToolResponses::stop`]. `0` turns
    /// the guard off; `None` leaves it to
    /// [`RunConfig::max_repeated_tool_calls`](adk_core::RunConfig::max_repeated_tool_calls).
    #[must_use]
    pub fn max_repeated_calls(mut self, limit: Option<u32>) -> Self {
        self.max_repeated_calls = limit;
        self
    }

    /// Hands each call the user's answer to the confirmation it asked for, when resuming.
    #[must_use]
    pub(crate) fn confirmations(
        mut self,
        confirmations: &'a HashMap<FunctionCallId, ToolConfirmation>,
    ) -> Self {
        self.confirmations = Some(confirmations);
        self
    }

    /// Runs only the calls with these ids, when resuming some calls of an event.
    #[must_use]
    pub(crate) fn only(mut self, ids: &'a HashSet<FunctionCallId>) -> Self {
        self.only = Some(ids);
        self
    }

    /// Runs the function calls of `call_event` and answers them in one event of the running
    /// agent; see the [type's documentation](Self).
    pub async fn run(&self, call_event: &Event) -> ToolResponses {
        let calls: Vec<&FunctionCall> = call_event
            .function_calls()
            .filter(|call| {
                self.only
                    .is_none_or(|only| call.id.as_ref().is_some_and(|id| only.contains(id)))
            })
            .collect();
        // Several calls run in parallel inside one `execute_tool (merged)` span, as ADK traces
        // them.
        let merged_span = if calls.len() > 1 {
            adk_telemetry::merged_tools_span()
        } else {
            Span::none()
        };
        let limit =
            self.max_concurrency
                .unwrap_or(match self.ctx.run_config().max_concurrent_tool_calls {
                    0 => calls.len().max(1),
                    limit => limit,
                });
        // `buffered` keeps the responses in the order of the calls while running at most
        // `limit`. Collected first so that the stream's type names no closure: a closure over
        // borrowed calls inside a caller's `try_stream!` trips the compiler's higher-ranked
        // lifetime check.
        let pending: Vec<_> = calls
            .iter()
            .map(|&call| self.call(call, &call_event.id))
            .collect();
        let outcomes: Vec<_> = futures::stream::iter(pending)
            .buffered(limit)
            .collect()
            .instrument(merged_span.clone())
            .await;

        let mut parts = Vec::new();
        let mut actions = EventActions::default();
        let mut failures = Vec::new();
        let mut hook_error = None;
        let mut stop = None;
        for (call, outcome) in calls.iter().zip(outcomes) {
            match outcome {
                Ok(outcome) => {
                    parts.extend(outcome.part);
                    actions.merge(outcome.actions);
                    failures.extend(outcome.failure);
                    stop = stop.or(outcome.stop);
                }
                Err(error) => {
                    parts.push(call::response_part(call, json!({"error": error.message()})));
                    hook_error.get_or_insert(error);
                }
            }
        }
        if parts.is_empty() && actions.is_empty() {
            return ToolResponses {
                event: None,
                failures,
                hook_error,
                stop,
            };
        }
        let mut event = self.ctx.new_event().with_actions(actions);
        if !parts.is_empty() {
            event.response.content = Some(Content::new(Role::User, parts));
        }
        screen::screen(self.ctx, &mut event);
        adk_telemetry::record_merged_tools(&merged_span, &event);
        ToolResponses {
            event: Some(event),
            failures,
            hook_error,
            stop,
        }
    }

    fn call(
        &self,
        call: &'a FunctionCall,
        response: &'a EventId,
    ) -> impl Future<Output = call::Outcome> + 'a {
        let confirmation = call
            .id
            .as_ref()
            .and_then(|id| self.confirmations?.get(id))
            .cloned();
        call::run(*self, call, response, confirmation)
    }
}

impl std::fmt::Debug for ToolInvoker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolInvoker")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("max_concurrency", &self.max_concurrency)
            .finish_non_exhaustive()
    }
}
