//! `POST /apps/{app}/users/{user}/sessions/{session}/cancel`: cancels a run by its invocation's
//! id, whichever replica runs it. ADK's API has no such route; this one follows its paths.
//!
//! The body names the invocation (`{"invocationId": "..."}`); without one, the session's latest
//! invocation is meant. A run of this server is cancelled at once; otherwise the request is kept
//! in the session store, which signals it to the replica running the invocation (PostgreSQL's
//! `NOTIFY`). The route then waits for the session's lock (the run has stopped when it gets it),
//! and, holding it, ends the invocation as cancelled if the run could not (its replica died, or
//! the invocation was cut off or paused): every call it left unanswered is answered as cancelled
//! and a last event (`errorCode` `CANCELLED`) says so. It answers whether the invocation ended
//! cancelled, with the events that end it.

use adk_core::{Event, InvocationId};
use axum::Json;
use axum::extract::{Path, Request};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::sessions::{load, session_key};
use crate::error::{ApiError, ApiResult};
use crate::extract::parse_json;
use adk_runner::CANCELLED_ERROR_CODE;

/// The body: which invocation to cancel; all optional.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CancelBody {
    #[serde(default, alias = "invocation_id")]
    invocation_id: Option<String>,
}

/// The answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Cancelled {
    /// The invocation the request was about.
    invocation_id: InvocationId,
    /// Whether the invocation ended cancelled (`false`: it had ended before the request came).
    cancelled: bool,
    /// The events that ended it as cancelled: all of them when this request ended it, the last
    /// one when the run did.
    events: Vec<Event>,
}

/// `POST .../sessions/{session}/cancel`.
pub(super) async fn cancel(
    axum::extract::State(state): AppState,
    Path((app, user, session)): Path<(String, String, String)>,
    request: Request,
) -> ApiResult<Json<Cancelled>> {
    let runner = state.app(&app)?;
    let key = session_key(&app, &user, &session)?;
    let (bytes, _reservation) = state.read_body(request).await?;
    let body: Option<CancelBody> = parse_json(&bytes)?;
    let stored = load(&state, &key).await?;
    let invocation = match body.and_then(|body| body.invocation_id) {
        Some(id) => {
            let id = InvocationId::new(id);
            if !stored.events.iter().any(|event| event.invocation_id == id) {
                return Err(ApiError::not_found(format!(
                    "session {:?} has no invocation {:?}",
                    key.session_id.as_str(),
                    id.as_str()
                )));
            }
            id
        }
        None => stored
            .events
            .last()
            .map(|event| event.invocation_id.clone())
            .ok_or_else(|| {
                ApiError::not_found("the session has no invocation to cancel".to_owned())
            })?,
    };
    drop(stored);

    if !state.running.cancel_here(&key, &invocation) {
        // Another replica may run it: the request waits in the store for that replica to see.
        runner
            .session_service()
            .request_cancel(&key, &invocation)
            .await?;
    }
    // The lock is free once no run holds the session any more, on any replica.
    let _lease = state
        .locks
        .lock(&key)
        .await
        .map_err(|error| state.lock_error(error))?;
    let mut ending = runner
        .cancel_invocation(key.user_id.clone(), key.session_id.clone(), &invocation)
        .await?;
    let session = load(&state, &key).await?;
    let of_invocation: Vec<&Event> = session
        .events
        .iter()
        .filter(|event| event.invocation_id == invocation)
        .collect();
    let cancelled = of_invocation
        .last()
        .is_some_and(|event| event.response.error_code.as_deref() == Some(CANCELLED_ERROR_CODE));
    if ending.is_empty() && cancelled {
        // The run ended it before the lock came: the last event is the one that says so.
        ending.extend(of_invocation.last().map(|event| (*event).clone()));
    }
    Ok(Json(Cancelled {
        invocation_id: invocation,
        cancelled,
        events: ending,
    }))
}
