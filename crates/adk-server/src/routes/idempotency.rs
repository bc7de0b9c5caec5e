//! Idempotent runs: a `/run` or `/run_sse` request with an idempotency key (the `Idempotency-Key`
//! header, or `idempotencyKey` in the body) whose key the session has seen answers what the first
//! attempt stored, instead of running again.
//!
//! The key is kept in the run metadata (`customMetadata`) of every event the run stores, the
//! user's message first, so it lives in the session itself: a retry on another replica finds it,
//! and the session's lock (held while a run is admitted) makes a retry wait for the attempt
//! still running.

use adk_core::{Event, GetSessionRequest, SessionKey, USER_AUTHOR};
use adk_runner::Runner;
use http::HeaderMap;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};

/// The run-metadata key under which a run's events carry its idempotency key.
const METADATA_KEY: &str = "adkIdempotencyKey";

/// The longest key taken, as common payment APIs take.
const MAX_KEY_LEN: usize = 255;

/// The `Idempotency-Key` header's value, if the request has one.
pub(super) fn from_header(headers: &HeaderMap) -> ApiResult<Option<String>> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| {
        ApiError::bad_request("the `Idempotency-Key` header must be visible ASCII text")
    })?;
    checked(value.to_owned()).map(Some)
}

/// The request's key: the header's or the body's; both given must agree.
pub(super) fn choose(header: Option<String>, body: Option<String>) -> ApiResult<Option<String>> {
    match (header, body) {
        (Some(header), Some(body)) if header != body => Err(ApiError::bad_request(
            "the `Idempotency-Key` header and the body's `idempotencyKey` differ; send one key",
        )),
        (Some(key), _) => Ok(Some(key)),
        (None, Some(key)) => checked(key).map(Some),
        (None, None) => Ok(None),
    }
}

fn checked(key: String) -> ApiResult<String> {
    let plain = key.bytes().all(|byte| byte.is_ascii_graphic());
    if key.is_empty() || key.len() > MAX_KEY_LEN || !plain {
        return Err(ApiError::bad_request(format!(
            "an idempotency key is 1 to {MAX_KEY_LEN} visible ASCII characters"
        )));
    }
    Ok(key)
}

/// Marks the run's events with its key.
pub(super) fn mark(metadata: &mut Map<String, Value>, key: String) {
    metadata.insert(METADATA_KEY.to_owned(), Value::String(key));
}

/// What the run of `idempotency_key` stored in session `key`, when that session has one: the
/// events of its invocation after the user's message that started it, up to the next user
/// event. `None` when no run of that key was stored (nothing, or not even its message).
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
            .and_then(|metadata| metadata.get(METADATA_KEY))
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
    let stored = session.events[start + 1..]
        .iter()
        .take_while(|event| event.author != USER_AUTHOR)
        .filter(|event| &event.invocation_id == invocation)
        .cloned()
        .collect();
    Ok(Some(stored))
}
