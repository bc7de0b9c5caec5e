//! `POST /run` and `POST /run_sse`: run an app's agent on a message (or resume an invocation) and
//! answer its events, all at once as a JSON array or one SSE frame each as they come.
//!
//! Both take a place among the runs at once before they read the body (so the bodies being read
//! are bounded by the run limit), check that the caller may act for the body's `userId`, and
//! check the request and store the user's message before answering anything, so a missing
//! session is a 404 and a forged continuation a 400 with nothing stored. A client that goes away
//! drops the response, which drops the run's stream and cancels the run; events already stored
//! stay, partial events never are. A `/run_sse` client that stops reading is cut off once a frame
//! waited the write timeout, and its run cancelled the same way. At shutdown, a run still going
//! when the grace period ends is cancelled the same way (an SSE client gets an error frame first).

use std::sync::Arc;
use std::time::Duration;

use adk_core::{Content, Event, InvocationId, StreamingMode};
use adk_gate::Caller;
use adk_runner::{RunRequest, RunStream};
use axum::Json;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::AppState;
use super::active_run::ActiveRun;
use super::idempotency;
use super::sessions::session_key;
use crate::error::{ApiError, ApiResult};
use crate::extract::parse_json;
use crate::state::{RunSlot, ServerState};

/// How many SSE frames wait for a client before the run waits for it.
const SSE_BUFFER: usize = 16;

/// The body of `/run` and `/run_sse`, camelCase or snake_case.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunBody {
    #[serde(alias = "app_name")]
    app_name: String,
    #[serde(alias = "user_id")]
    user_id: String,
    #[serde(alias = "session_id")]
    session_id: String,
    #[serde(default, alias = "new_message")]
    new_message: Option<Content>,
    #[serde(default)]
    streaming: bool,
    #[serde(default, alias = "state_delta")]
    state_delta: Option<Map<String, Value>>,
    #[serde(default, alias = "function_call_event_id")]
    function_call_event_id: Option<String>,
    #[serde(default, alias = "invocation_id")]
    invocation_id: Option<String>,
    #[serde(default, alias = "custom_metadata")]
    custom_metadata: Option<Map<String, Value>>,
    /// The request's idempotency key, for clients that cannot set the `Idempotency-Key` header.
    #[serde(default, alias = "idempotency_key")]
    idempotency_key: Option<String>,
}

/// Takes a place among the runs at once, reads and parses the body, and checks that the caller may
/// act for its user; the place is held from before the first byte of the body is read.
async fn read_run(
    state: &ServerState,
    caller: &Caller,
    request: Request,
) -> ApiResult<(RunSlot, RunBody)> {
    let slot = state.run_slot()?;
    let header = request
        .headers()
        .get(adk_gate::IDEMPOTENCY_KEY_HEADER)
        .cloned();
    let (bytes, _reservation) = state.read_body(request).await?;
    let mut body: RunBody = parse_json(&bytes)?;
    caller.check_user(&body.user_id)?;
    body.idempotency_key = idempotency::choose(header.as_ref(), body.idempotency_key.take())?;
    Ok((slot, body))
}

/// Checks the body, admits the run (the session's lock, with the place it holds among the runs at
/// once), stores the message and starts the run; every failure here is an HTTP error. The
/// admission must be held until the run's stream is done.
async fn start(state: &ServerState, slot: RunSlot, body: &mut RunBody) -> ApiResult<ActiveRun> {
    let runner = state.app(&body.app_name)?;
    let key = session_key(&body.app_name, &body.user_id, &body.session_id)?;
    // The lock comes before the runner loads the session, so that this run sees every event of
    // the run before it, whichever replica ran that one.
    let admission = state.admit(slot, &key).await?;
    let mut request = RunRequest::new(key.user_id.clone(), key.session_id.clone());
    match (body.new_message.take(), body.invocation_id.take()) {
        (None, None) => {
            return Err(ApiError::bad_request(
                "missing field `newMessage`: it may be left out only when `invocationId` resumes an invocation",
            ));
        }
        (message, invocation) => {
            if let Some(message) = message {
                request = request.message(message);
            }
            if let Some(invocation) = invocation {
                request = request.resume(InvocationId::new(invocation));
            }
        }
    }
    if let Some(delta) = body.state_delta.take() {
        request = request.state_delta(delta);
    }
    let mut config = state.run_config.clone();
    if body.streaming {
        config = config.with_streaming_mode(StreamingMode::Sse);
    }
    config.custom_metadata = body.custom_metadata.take().unwrap_or_default();
    if let Some(idempotency_key) = body.idempotency_key.take() {
        // Under the session's lock: a retry waits for the first attempt, then finds what it
        // stored, whichever replica ran it.
        if let Some(stored) = idempotency::stored_run(&runner, &key, &idempotency_key).await? {
            return Ok(ActiveRun::replay(RunStream::replay(stored), admission));
        }
        idempotency::mark(&mut config.custom_metadata, idempotency_key);
    }
    let events = runner.start(request.run_config(config)).await?;
    let watch = state.running.register(
        key.clone(),
        events.invocation_id().cloned(),
        runner.session_service().clone(),
    );
    Ok(ActiveRun::new(events, admission, &runner, key, watch))
}

/// `POST /run`: the invocation's events as a JSON array (the user's event is stored, not
/// returned).
pub(super) async fn run(
    axum::extract::State(state): AppState,
    caller: Caller,
    request: Request,
) -> ApiResult<Json<Vec<Event>>> {
    let (slot, mut body) = read_run(&state, &caller, request).await?;
    let keyed = body.idempotency_key.is_some();
    let run = start(&state, slot, &mut body).await?;
    let collecting = collect(run, state.cancel_runs.clone());
    if !keyed {
        return collecting.await;
    }
    // A client that sent an idempotency key retries with it rather than give up: when it goes
    // away (a timeout, a dropped connection), the run goes on to its end instead of being
    // cancelled, so that the retry, which waits for the session's lock, answers the whole run
    // and not a tool cut off after its effect happened.
    tokio::spawn(collecting).await.map_err(|error| {
        ApiError::new(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the run stopped unexpectedly: {error}"),
        )
    })?
}

/// The events of `run` until it ends, is cancelled by request (its invocation is ended as
/// cancelled, and those events come last), or the server shuts down.
async fn collect(
    mut run: ActiveRun,
    shutdown: tokio_util::sync::CancellationToken,
) -> ApiResult<Json<Vec<Event>>> {
    let cancelled = run.cancelled();
    tokio::pin!(cancelled);
    let mut collected = Vec::new();
    loop {
        tokio::select! {
            next = run.next() => match next {
                Some(event) => collected.push(event?),
                None => break,
            },
            () = &mut cancelled => {
                collected.extend(run.end_cancelled().await);
                return Ok(Json(collected));
            }
            () = shutdown.cancelled() => {
                run.abandon();
                return Err(ApiError::new(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "shutting_down",
                    "the server shut down before the run finished; the events so far are stored",
                ));
            }
        }
    }
    Ok(Json(collected))
}

/// `POST /run_sse`: one `data: <event>\n\n` frame per event as it comes, partial events included
/// when `streaming` is set; an error after the stream started is an error frame.
pub(super) async fn run_sse(
    axum::extract::State(state): AppState,
    caller: Caller,
    request: Request,
) -> ApiResult<Response> {
    let (slot, mut body) = read_run(&state, &caller, request).await?;
    let keyed = body.idempotency_key.is_some();
    let run = start(&state, slot, &mut body).await?;
    let split_artifacts = body.function_call_event_id.is_none();
    let (frames, receiver) = mpsc::channel(SSE_BUFFER);
    let pump = Pump {
        keyed,
        split_artifacts,
        state: state.clone(),
        frames,
        write_timeout: state.write_timeout,
    };
    tokio::spawn(pump.run(run));
    let body = futures::stream::unfold(receiver, |mut receiver| async move {
        let frame = receiver.recv().await?;
        Some((Ok::<Bytes, std::convert::Infallible>(frame), receiver))
    });
    Ok((
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response())
}

/// Drives one `/run_sse` run: its events become frames for the response body, then an error
/// frame if the run failed, was cancelled, or the server stopped it.
///
/// It owns the run, so when it returns the run is over and its session unlocked. It returns when
/// the run ends, when someone cancelled it (its invocation is ended as cancelled, and those
/// events are sent before the error frame), when the client went away (the body was dropped) or
/// stopped reading (a frame waited the write timeout for room: a run nobody reads must not hold
/// a session, a run's place and the model's tokens), both of which end the invocation as
/// cancelled too, or when the server shut down. A run whose request has an idempotency key is
/// not cancelled when its client goes away: it goes on unread to its end, for the retry.
struct Pump {
    keyed: bool,
    split_artifacts: bool,
    state: Arc<ServerState>,
    frames: mpsc::Sender<Bytes>,
    write_timeout: Duration,
}

impl Pump {
    async fn run(self, mut run: ActiveRun) {
        let cancelled = run.cancelled();
        tokio::pin!(cancelled);
        // Whether the client went away; a keyed run then goes on, sending nothing.
        let mut gone = false;
        loop {
            let next = tokio::select! {
                next = run.next() => next,
                () = self.frames.closed(), if !gone => {
                    if !self.keyed {
                        return;
                    }
                    gone = true;
                    continue;
                }
                () = &mut cancelled => {
                    for event in run.end_cancelled().await {
                        if !self.send_event(&event).await {
                            return;
                        }
                    }
                    let frame = error_frame("Cancelled", "the invocation was cancelled by request");
                    let _ = send(&self.frames, frame, self.write_timeout).await;
                    return;
                }
                () = self.state.cancel_runs.cancelled() => {
                    run.abandon();
                    let frame = error_frame("Cancelled", "the server shut down before the run finished");
                    let _ = send(&self.frames, frame, self.write_timeout).await;
                    return;
                }
            };
            match next {
                None => return,
                Some(Ok(event)) => {
                    if !gone && !self.send_event(&event).await {
                        if !self.keyed {
                            return;
                        }
                        gone = true;
                    }
                }
                Some(Err(error)) => {
                    tracing::warn!(error = %error, "run failed after its stream started");
                    let frame = error_frame(error_type(&error), error.message());
                    let _ = send(&self.frames, frame, self.write_timeout).await;
                    return;
                }
            }
        }
    }

    /// Sends the frames of `event`; `false` when the client is gone.
    async fn send_event(&self, event: &Event) -> bool {
        for frame in event_frames(event, self.split_artifacts) {
            if !send(&self.frames, frame, self.write_timeout).await {
                return false;
            }
        }
        true
    }
}

/// Hands `frame` to the response body; `false` when the client went away or did not make room
/// for it within `timeout`.
async fn send(frames: &mpsc::Sender<Bytes>, frame: Bytes, timeout: Duration) -> bool {
    match tokio::time::timeout(timeout, frames.send(frame)).await {
        Ok(sent) => sent.is_ok(),
        Err(_) => {
            tracing::warn!(
                ?timeout,
                "an SSE client stopped reading for the write timeout: its run is cancelled"
            );
            false
        }
    }
}

/// The frames of one event. As ADK Python does (unless the run answers a function-call event), an
/// event with both content and an artifact delta is sent twice: the content with an empty
/// artifact delta, then a content-less copy carrying the delta, which is how the dev UI renders
/// the artifacts.
fn event_frames(event: &Event, split_artifacts: bool) -> Vec<Bytes> {
    let has_content = event
        .response
        .content
        .as_ref()
        .is_some_and(|content| !content.parts.is_empty());
    if split_artifacts && has_content && !event.actions.artifact_delta.is_empty() {
        let mut content_event = event.clone();
        content_event.actions.artifact_delta.clear();
        let mut artifact_event = event.clone();
        artifact_event.response.content = None;
        vec![data_frame(&content_event), data_frame(&artifact_event)]
    } else {
        vec![data_frame(event)]
    }
}

fn data_frame(event: &Event) -> Bytes {
    let mut frame = b"data: ".to_vec();
    // An event always serializes: its maps have string keys and its numbers are finite.
    serde_json::to_writer(&mut frame, event).unwrap_or_default();
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// ADK's error frame: `{"error": "<Type>: <message>", "error_details": {...}}`.
fn error_frame(error_type: &str, message: &str) -> Bytes {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64());
    let body = json!({
        "error": format!("{error_type}: {message}"),
        "error_details": {
            "error_type": error_type,
            "error_message": message,
            "timestamp": timestamp,
        },
    });
    Bytes::from(format!("data: {body}\n\n"))
}

/// The error's kind as a type name, as ADK Python reports its exception class.
fn error_type(error: &adk_core::Error) -> &'static str {
    use adk_core::ErrorKind;
    match error.kind() {
        ErrorKind::Model | ErrorKind::ContextOverflow => "ModelError",
        ErrorKind::Tool => "ToolError",
        ErrorKind::Session | ErrorKind::StaleSession => "SessionError",
        ErrorKind::LlmCallsLimitExceeded => "LlmCallsLimitExceededError",
        ErrorKind::Cancelled => "Cancelled",
        ErrorKind::InvalidInput => "ValueError",
        _ => "Error",
    }
}
