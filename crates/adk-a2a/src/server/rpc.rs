//! `POST /`: takes `Content-Type: application/json` only, reads a JSON-RPC request under the
//! body limits, answers errors with the spec's codes, and dispatches `message/send`,
//! `message/stream` (as Server-Sent Events), `tasks/get` and `tasks/cancel`, each seeing only the
//! caller's own tasks.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use adk_gate::{BodyError, Caller};
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use http::HeaderValue;
use http::StatusCode;
use http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use super::Inner;
use super::execute::{self, Refusal, invalid_params, task_not_found};
use super::http_error::{http_error, unavailable};
use super::idempotency;
use crate::types::{
    JsonRpcError, JsonRpcResponse, MessageSendParams, RequestId, StreamEvent, TaskIdParams,
    TaskQueryParams, TaskState, TaskStatus, error_codes, methods,
};

/// A request read far enough to dispatch: its id, method and parameters.
struct Call {
    id: RequestId,
    method: String,
    params: Value,
}

/// How much longer than the write timeout `tasks/cancel` waits for a task's run to stop; past it
/// the task is answered as it is.
const CANCEL_MARGIN: Duration = Duration::from_secs(10);

/// `POST /`.
pub(super) async fn handler(
    State(inner): State<Arc<Inner>>,
    caller: Caller,
    request: Request,
) -> Response {
    if !is_json(&request) {
        // A web page can send `text/plain` (or a form) to any origin without a CORS preflight;
        // JSON it cannot, so only JSON is read.
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "A2A JSON-RPC requests must be sent with Content-Type: application/json",
        );
    }
    let idempotency_key = request.headers().get("idempotency-key").cloned();
    let (body, _reservation) = match inner.bodies.read(request).await {
        Ok(read) => read,
        Err(error) => return body_error(&inner, &error),
    };
    let call = match read_call(&body) {
        Ok(call) => call,
        Err((id, error)) => return json(JsonRpcResponse::failure(id, error)),
    };
    let id = call.id.clone();
    match dispatch(&inner, call, &caller, idempotency_key.as_ref()).await {
        Ok(Answer::Result(result)) => json(JsonRpcResponse::success(id, result)),
        Ok(Answer::Stream(events)) => sse(id, events),
        Err(Refusal::Rpc(error)) => json(JsonRpcResponse::failure(id, error)),
        Err(Refusal::Http(response)) => response,
    }
}

/// Whether the request says its body is JSON (`application/json`, parameters allowed).
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

fn body_error(inner: &Inner, error: &BodyError) -> Response {
    let (status, code) = match error {
        BodyError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        BodyError::Busy { .. } => (StatusCode::SERVICE_UNAVAILABLE, "too_many_bytes"),
        BodyError::Timeout { .. } => (StatusCode::REQUEST_TIMEOUT, "request_timeout"),
        _ => (StatusCode::BAD_REQUEST, "bad_request"),
    };
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return unavailable(inner.retry_after, code, &error.to_string());
    }
    http_error(status, code, &error.to_string())
}

/// What a method answers: one result, or a stream of events.
enum Answer {
    Result(Value),
    Stream(mpsc::Receiver<StreamEvent>),
}

/// Reads the envelope: not JSON is a parse error (-32700); not a request object, a wrong
/// `jsonrpc` or a method that is not a string an invalid request (-32600).
fn read_call(body: &[u8]) -> Result<Call, (RequestId, JsonRpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        (
            Value::Null,
            JsonRpcError::new(
                error_codes::PARSE_ERROR,
                format!("the body is not JSON: {error}"),
            ),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            invalid_request("a JSON-RPC request is a JSON object (batches are not supported)"),
        ));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
        return Err((
            Value::Null,
            invalid_request("`id` must be a string, a number or null"),
        ));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, invalid_request("`jsonrpc` must be \"2.0\"")));
    }
    let Some(Value::String(method)) = object.remove("method") else {
        return Err((id, invalid_request("`method` must be a string")));
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    Ok(Call { id, method, params })
}

async fn dispatch(
    inner: &Arc<Inner>,
    call: Call,
    caller: &Caller,
    idempotency_key: Option<&HeaderValue>,
) -> Result<Answer, Refusal> {
    match call.method.as_str() {
        methods::SEND => {
            let params: MessageSendParams = params(call.params)?;
            let blocking = params
                .configuration
                .as_ref()
                .and_then(|configuration| configuration.blocking)
                .unwrap_or(true);
            let history_length = params
                .configuration
                .as_ref()
                .and_then(|configuration| configuration.history_length);
            let key = idempotency::key_of(idempotency_key, params.metadata.as_ref())?;
            let mut started = execute::start(inner, params, caller, key).await?;
            if blocking {
                // The run sends until it ends; reading everything waits for that.
                while started.events.recv().await.is_some() {}
            }
            let task = inner
                .tasks
                .get(&started.task_id, history_length, caller)
                .ok_or_else(|| task_not_found(&started.task_id))?;
            Ok(Answer::Result(to_value(&task)?))
        }
        methods::STREAM => {
            let params: MessageSendParams = params(call.params)?;
            let key = idempotency::key_of(idempotency_key, params.metadata.as_ref())?;
            let started = execute::start(inner, params, caller, key).await?;
            Ok(Answer::Stream(started.events))
        }
        methods::GET_TASK => {
            let params: TaskQueryParams = params(call.params)?;
            let task = inner
                .tasks
                .get(&params.id, params.history_length, caller)
                .ok_or_else(|| task_not_found(&params.id))?;
            Ok(Answer::Result(to_value(&task)?))
        }
        methods::CANCEL_TASK => {
            let params: TaskIdParams = params(call.params)?;
            Ok(Answer::Result(cancel(inner, &params.id, caller).await?))
        }
        methods::RESUBSCRIBE => Err(JsonRpcError::new(
            error_codes::UNSUPPORTED_OPERATION,
            "tasks/resubscribe is not supported; poll the task with tasks/get",
        )
        .into()),
        methods::EXTENDED_CARD => Err(JsonRpcError::new(
            error_codes::EXTENDED_CARD_NOT_CONFIGURED,
            "this agent has no authenticated extended card",
        )
        .into()),
        method if method.starts_with(methods::PUSH_NOTIFICATION_PREFIX) => Err(JsonRpcError::new(
            error_codes::PUSH_NOTIFICATION_NOT_SUPPORTED,
            "push notifications are not supported",
        )
        .into()),
        method => Err(JsonRpcError::new(
            error_codes::METHOD_NOT_FOUND,
            format!(
                "method {method:?} does not exist; this agent serves message/send, message/stream, tasks/get and tasks/cancel"
            ),
        )
        .into()),
    }
}

/// Cancels task `id` of the caller: a running task's run is stopped (and awaited, at most the
/// write timeout and a margin: a run blocked on a stream's reader gives up the reader within the
/// write timeout), a task waiting for input is marked cancelled; a finished task cannot be
/// cancelled (-32002).
async fn cancel(inner: &Inner, id: &str, caller: &Caller) -> Result<Value, JsonRpcError> {
    let task = inner
        .tasks
        .get(id, None, caller)
        .ok_or_else(|| task_not_found(id))?;
    if let Some(run) = inner.tasks.running(id) {
        run.cancel.cancel();
        let wait = inner.write_timeout + CANCEL_MARGIN;
        if tokio::time::timeout(wait, run.done.cancelled())
            .await
            .is_err()
        {
            tracing::warn!(
                task = id,
                ?wait,
                "a cancelled task's run did not stop in time"
            );
        }
    } else if task.status.state.is_terminal() {
        return Err(JsonRpcError::new(
            error_codes::TASK_NOT_CANCELABLE,
            format!(
                "task '{id}' is {} and cannot be cancelled",
                task.status.state.as_str()
            ),
        ));
    } else {
        inner.tasks.update(id, |task| {
            task.status = TaskStatus::new(TaskState::Canceled)
        });
    }
    let task = inner
        .tasks
        .get(id, None, caller)
        .ok_or_else(|| task_not_found(id))?;
    to_value(&task)
}

/// The parameters as a `T`; wrong ones are invalid params (-32602) naming what is wrong.
fn params<T: DeserializeOwned>(params: Value) -> Result<T, JsonRpcError> {
    serde_json::from_value(params)
        .map_err(|error| invalid_params(format!("invalid params: {error}")))
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, JsonRpcError> {
    serde_json::to_value(value)
        .map_err(|error| JsonRpcError::new(error_codes::INTERNAL_ERROR, error.to_string()))
}

fn invalid_request(message: &str) -> JsonRpcError {
    JsonRpcError::new(error_codes::INVALID_REQUEST, message)
}

fn json(response: JsonRpcResponse) -> Response {
    Json(response).into_response()
}

/// The events as Server-Sent Events, each `data: <JSON-RPC response>`. Dropping the body (the
/// client went away) stops reading the task's events, but not the task.
fn sse(id: RequestId, events: mpsc::Receiver<StreamEvent>) -> Response {
    (
        [
            (http::header::CONTENT_TYPE, "text/event-stream"),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(frames(id, events)),
    )
        .into_response()
}

fn frames(
    id: RequestId,
    mut events: mpsc::Receiver<StreamEvent>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    async_stream::stream! {
        while let Some(event) = events.recv().await {
            let response = match serde_json::to_value(&event) {
                Ok(result) => JsonRpcResponse::success(id.clone(), result),
                Err(error) => JsonRpcResponse::failure(
                    id.clone(),
                    JsonRpcError::new(error_codes::INTERNAL_ERROR, error.to_string()),
                ),
            };
            let mut frame = b"data: ".to_vec();
            // A response of JSON values always serializes.
            serde_json::to_writer(&mut frame, &response).unwrap_or_default();
            frame.extend_from_slice(b"\n\n");
            yield Ok(Bytes::from(frame));
        }
    }
}
