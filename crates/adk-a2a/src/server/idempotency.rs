//! Idempotent messages: a `message/send` or `message/stream` with an idempotency key (the
//! `Idempotency-Key` header, or `idempotencyKey` in the parameters' `metadata` for clients that
//! cannot set headers) whose key the context's session has seen answers the task its first
//! attempt stored, instead of running again.
//!
//! As with the API server's `/run`, the key is kept in the run metadata (`customMetadata`) of
//! every event the run stores, beside the task's id, so it lives in the session: a retry on
//! another replica finds it, and the session's lock makes a retry wait for an attempt still
//! running. The task is rebuilt from the stored events when this server does not hold it.

use adk_core::{Event, GetSessionRequest, SessionKey, USER_AUTHOR};
use adk_gate::{Caller, IDEMPOTENCY_METADATA_KEY, idempotency_key};
use http::HeaderValue;
use serde_json::{Map, Value};

use super::Inner;
use crate::convert::event_to_message;
use crate::types::{
    Artifact, JsonRpcError, Message, Metadata, Part, Role, Task, TaskState, TaskStatus, error_codes,
};

/// The run-metadata key of the task the run belongs to.
const TASK: &str = "adkA2aTaskId";

/// A refused key, -32602 as every invalid parameter.
fn invalid_params(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(error_codes::INVALID_PARAMS, message)
}

/// The request's key: the `Idempotency-Key` header's, or `metadata.idempotencyKey`'s; both given
/// must agree.
pub(super) fn key_of(
    header: Option<&HeaderValue>,
    metadata: Option<&Metadata>,
) -> Result<Option<String>, JsonRpcError> {
    let field = match metadata.and_then(|metadata| metadata.get("idempotencyKey")) {
        None => None,
        Some(Value::String(key)) => Some(key.clone()),
        Some(_) => return Err(invalid_params("metadata.idempotencyKey must be a string")),
    };
    idempotency_key(header, field, "metadata.idempotencyKey")
        .map_err(|error| invalid_params(error.to_string()))
}

/// Marks the run's events with its key and its task.
pub(super) fn mark(metadata: &mut Map<String, Value>, key: &str, task_id: &str) {
    metadata.insert(
        IDEMPOTENCY_METADATA_KEY.to_owned(),
        Value::String(key.to_owned()),
    );
    metadata.insert(TASK.to_owned(), Value::String(task_id.to_owned()));
}

/// The task the run of `idempotency_key` stored in session `key`: the one this server holds, or
/// one rebuilt from the stored events (its history, its last answer as the artifact, failed if
/// an event holds an error); `None` when no run of that key was stored.
pub(super) async fn stored_task(
    inner: &Inner,
    caller: &Caller,
    key: &SessionKey,
    idempotency_key: &str,
) -> Result<Option<Task>, JsonRpcError> {
    let session = inner
        .runner
        .session_service()
        .get_session(GetSessionRequest::new(key.clone()))
        .await
        .map_err(|error| JsonRpcError::new(error_codes::INTERNAL_ERROR, error.message()))?;
    let Some(session) = session else {
        return Ok(None);
    };
    let metadata = |event: &Event, name: &str| {
        event
            .response
            .custom_metadata
            .as_ref()
            .and_then(|metadata| metadata.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let Some(start) = session.events.iter().position(|event| {
        event.author == USER_AUTHOR
            && metadata(event, IDEMPOTENCY_METADATA_KEY).as_deref() == Some(idempotency_key)
    }) else {
        return Ok(None);
    };
    let first = &session.events[start];
    let Some(task_id) = metadata(first, TASK) else {
        return Ok(None);
    };
    if let Some(task) = inner.tasks.get(&task_id, None, caller) {
        return Ok(Some(task));
    }
    let context_id = key.session_id.as_str();
    let with_ids = |mut message: Message| {
        message.task_id = Some(task_id.clone());
        message.context_id = Some(context_id.to_owned());
        message
    };
    let mut history: Vec<Message> = event_to_message(first).into_iter().map(with_ids).collect();
    let mut failure = None;
    let mut last = None;
    for event in session.events[start + 1..]
        .iter()
        .take_while(|event| event.author != USER_AUTHOR)
        .filter(|event| event.invocation_id == first.invocation_id)
    {
        if let Some(code) = &event.response.error_code {
            let text = event
                .response
                .error_message
                .clone()
                .unwrap_or_else(|| code.clone());
            failure = Some(with_ids(Message::new(Role::Agent, vec![Part::text(text)])));
        } else if let Some(message) = event_to_message(event) {
            last = Some(message.parts.clone());
            history.push(with_ids(message));
        }
    }
    let mut task = match failure {
        Some(message) => Task::new(
            &task_id,
            context_id,
            TaskStatus::new(TaskState::Failed).with_message(message),
        ),
        None => {
            let mut task = Task::new(&task_id, context_id, TaskStatus::new(TaskState::Completed));
            task.artifacts = last
                .filter(|parts| !parts.is_empty())
                .map(|parts| vec![Artifact::new(parts)]);
            task
        }
    };
    task.history = Some(history);
    Ok(Some(task))
}
