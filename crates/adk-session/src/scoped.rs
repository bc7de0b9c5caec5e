//! Helpers every session backend shares: splitting an event's state delta by scope, the time, and
//! which calls an event completes in the effect journal.

use std::borrow::Cow;

use adk_core::{Clock, Event, FunctionCallId, ScopedState, StateScope, SystemClock};
use serde_json::{Map, Value};

/// `event` as it is stored: without `temp:` keys (callers normally trimmed them already).
pub(crate) fn stored_event(event: &Event) -> Cow<'_, Event> {
    let has_temp = event
        .actions
        .state_delta
        .keys()
        .any(|key| StateScope::of(key) == StateScope::Temp);
    if has_temp {
        let mut event = event.clone();
        event.trim_temp_state();
        Cow::Owned(event)
    } else {
        Cow::Borrowed(event)
    }
}

/// The state delta of `event` split by scope (`temp:` keys dropped).
pub(crate) fn split_delta(event: &Event) -> ScopedState {
    ScopedState::split(&event.actions.state_delta)
}

/// Sets every key of `delta` in `state` (a `null` value is stored as `null`, as ADK does).
pub(crate) fn apply_delta(state: &mut Map<String, Value>, delta: Map<String, Value>) {
    state.extend(delta);
}

/// Joins the three stored scopes into the state a session shows.
pub(crate) fn merged_state(
    app: Map<String, Value>,
    user: Map<String, Value>,
    session: Map<String, Value>,
) -> Map<String, Value> {
    ScopedState { app, user, session }.merge()
}

/// The current time in float seconds since the Unix epoch.
pub(crate) fn now() -> f64 {
    SystemClock.now()
}

/// The calls whose results `event` holds: those it answers, except the calls whose answer only
/// asks for a confirmation (the call has not acted, and its result is still to come).
pub(crate) fn completed_calls(event: &Event) -> impl Iterator<Item = &FunctionCallId> {
    event
        .function_responses()
        .filter_map(|response| response.id.as_ref())
        .filter(|id| !event.actions.requested_tool_confirmations.contains_key(*id))
}
