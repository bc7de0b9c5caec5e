//! Idempotent runs: a `/run` or `/run_sse` request with an idempotency key (the `Idempotency-Key`
//! header, or `idempotencyKey` in the body) whose key the session has seen answers what the first
//! attempt stored, instead of running again.
//!
//! The key is kept in the run metadata (`customMetadata`) of every event the run stores, the
//! user's message first, so it lives in the session itself: a retry on another replica finds it,
//! and the session's lock (held while a run is admitted) makes a retry wait for the attempt
//! still running.

use adk_core::{Event, GetSessionRequest, SessionKey, USER_AUTHOR};
use adk_gate::{IDEMPOTENCY_METADATA_KEY, idempotency_key};
use adk_runner::Runner;
use http::HeaderValue;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};

/// The request's key: the `Idempotency-Key` header's or the body's `idempotencyKey`; both given
/// must agree.
pub(super) fn choose(
    header: Option<&HeaderValue>,
    body: Option<String>,
) -> ApiResult<Option<String>> {
    idempotency_key(header, body, "the body's `idempotencyKey`")
        .map_err(|error| ApiError::bad_request(error.to_string()))
}

/// Marks the run's events with its key.
pub(super) fn mark(metadata: &mut Map<String, Value>, key: String) {
    metadata.insert(IDEMPOTENCY_METADATA_KEY.to_owned(), Value::String(key));
}

/// What the run of `idempotency_key` stored in session `key`, when that session has one: the
/// events of its invocation after the user's message that started it, up to the next user
/// event, and before them the events of an invocation a crash had cut off that the run resumed
/// first (they carry its key too). `None` when no run of that key stored its message.
pub(super) async fn stored_run(
    runner: &Runner,
    key: &SessionKey,
    idempotency_key: &str,
) -> ApiResult<Option<Vec<Event>>> {
    let Some(session) = runner
        .session_service()
        .get_session(GetSessionRequest::new(key.clone()))
        .await?
    else {
        return Ok(None);
    };
    let marked = |event: &Event| {
        event
            .response
            .custom_metadata
            .as_ref()
            .and_then(|metadata| metadata.get(IDEMPOTENCY_METADATA_KEY))
            .and_then(Value::as_str)
            == Some(idempotency_key)
    };
    let Some(start) = session
        .events
        .iter()
        .position(|event| event.author == USER_AUTHOR && marked(event))
    else {
        return Ok(None);
    };
    let invocation = &session.events[start].invocation_id;
    let resumed = session.events[..start]
        .iter()
        .filter(|event| event.author != USER_AUTHOR && marked(event));
    let own = session.events[start + 1..]
        .iter()
        .take_while(|event| event.author != USER_AUTHOR)
        .filter(|event| &event.invocation_id == invocation);
    Ok(Some(resumed.chain(own).cloned().collect()))
}
