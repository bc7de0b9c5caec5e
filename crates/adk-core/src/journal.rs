//! The effect journal's records: what the flow writes to the session store before a tool with
//! side effects runs, and what a store reports of the calls it recorded.
//!
//! A call's intent is recorded before its tool runs; its completion is recorded by the store in
//! the same transaction as the event that holds the call's function response. An intent without
//! a completion is a call that may have acted and whose result was lost (the process stopped in
//! between): on resume it is run again only when its tool is idempotent or read-only, and
//! otherwise the user is asked to decide.

use crate::{EventId, FunctionCallId, InvocationId};

/// The intent to run one function call, recorded before its tool runs.
///
/// ```
/// use adk_core::ToolIntent;
///
/// let intent = ToolIntent::new("e-1".into(), "call-1".into(), "charge_card", "5f2c…");
/// assert_eq!(intent.tool_name, "charge_card");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolIntent {
    /// The invocation that made the call.
    pub invocation_id: InvocationId,
    /// The call's id, unique in its session.
    pub function_call_id: FunctionCallId,
    /// The tool called.
    pub tool_name: String,
    /// A hash of the call's arguments (hex), so that a resumed call can be told to be the same.
    pub args_hash: String,
}

impl ToolIntent {
    /// The intent to run call `function_call_id` of `tool_name` in `invocation_id`, with
    /// arguments hashed to `args_hash`.
    pub fn new(
        invocation_id: InvocationId,
        function_call_id: FunctionCallId,
        tool_name: impl Into<String>,
        args_hash: impl Into<String>,
    ) -> Self {
        Self {
            invocation_id,
            function_call_id,
            tool_name: tool_name.into(),
            args_hash: args_hash.into(),
        }
    }
}

/// What the journal holds of one call: its intent, how many times its tool was started, and the
/// event that holds its result once that event is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// The recorded intent.
    pub intent: ToolIntent,
    /// How many times the intent was recorded: 1, plus one for each run on resume.
    pub attempts: u32,
    /// The event holding the call's function response, stored in the same transaction as this
    /// field; `None` while the call has no stored result.
    pub result_event_id: Option<EventId>,
}

impl JournalEntry {
    /// An entry of `intent`, started `attempts` times, with its result in `result_event_id`.
    pub fn new(intent: ToolIntent, attempts: u32, result_event_id: Option<EventId>) -> Self {
        Self {
            intent,
            attempts,
            result_event_id,
        }
    }

    /// Whether the call's result is stored.
    pub fn is_complete(&self) -> bool {
        self.result_event_id.is_some()
    }
}
