//! The orchestrator's own events: the plan, each task's start, retries and end, and the summary,
//! each with its status in `customMetadata.orchestrator`.

use adk_core::{Content, Event, InvocationContext};
use serde_json::{Map, Value};

/// The key of the orchestrator's status in an event's `customMetadata`: an object whose `status`
/// is one of `analysis_retrying`, `planned`, `task_started`, `task_retrying`, `task_completed`,
/// `task_failed` and `finished`, with the `task`, `phase` and `attempt` it concerns.
pub const EVENT_METADATA_KEY: &str = "orchestrator";

/// An event of the orchestrator, on the branch of `ctx`, showing `text` and carrying `status`.
pub(crate) fn status_event(ctx: &InvocationContext, text: String, status: Value) -> Event {
    let mut event = ctx.new_event().with_content(Content::model(text));
    event.response.custom_metadata =
        Some(Map::from_iter([(EVENT_METADATA_KEY.to_owned(), status)]));
    event
}

/// The orchestrator status an event carries, if any.
///
/// ```
/// # use adk_core::{Event, InvocationId};
/// let event = Event::new(InvocationId::from("e-1"), "planner");
/// assert!(adk_orchestrator::event_status(&event).is_none());
/// ```
pub fn event_status(event: &Event) -> Option<&Map<String, Value>> {
    event
        .response
        .custom_metadata
        .as_ref()?
        .get(EVENT_METADATA_KEY)?
        .as_object()
}
