//! The dev UI's debug routes: a session's trace and an event's step from the in-memory span
//! store, and the agent graph in DOT. A caller sees only the spans of its own user's runs (an
//! admin, or anyone on a server without authentication, sees every user's).

use adk_gate::Caller;
use axum::Json;
use axum::extract::Path;
use serde_json::{Value, json};

use super::AppState;
use super::sessions::{load, session_key};
use crate::app_info::agent_graph;
use crate::error::{ApiError, ApiResult};

/// `GET /dev/apps/{app}/debug/trace/{event}`: the attributes of the step that produced the event.
pub(super) async fn event_trace(
    axum::extract::State(state): AppState,
    caller: Caller,
    Path((app, event)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    state.app(&app)?;
    state
        .spans
        .event_attributes_of(&event, visible_user(&caller))
        .map(|attributes| Json(Value::Object(attributes)))
        .ok_or_else(|| ApiError::not_found(format!("no trace kept for event {event:?}")))
}

/// `GET /dev/apps/{app}/debug/trace/session/{session}`: every kept span of the session's traces,
/// in ADK's shape (`name`, `span_id`, `trace_id`, `parent_span_id`, times, `attributes`, `logs`).
pub(super) async fn session_trace(
    axum::extract::State(state): AppState,
    caller: Caller,
    Path((app, session)): Path<(String, String)>,
) -> ApiResult<Json<Vec<Value>>> {
    state.app(&app)?;
    let spans = state
        .spans
        .session_spans_of(&session, visible_user(&caller));
    Ok(Json(
        spans
            .into_iter()
            .map(|span| {
                let mut value = serde_json::to_value(span).unwrap_or_default();
                if let Value::Object(fields) = &mut value {
                    fields.insert("logs".to_owned(), json!([]));
                }
                value
            })
            .collect(),
    ))
}

/// Whose spans `caller` may see: every user's (`None`) for an admin or an open server, else its
/// own user's; a caller with neither sees the spans of a user that cannot exist.
fn visible_user(caller: &Caller) -> Option<&str> {
    if caller.is_admin() {
        None
    } else {
        Some(caller.user_id().unwrap_or(""))
    }
}

/// `GET /dev/apps/{app}/graph`: the agent graph, `{"dot_src": ...}` (its `dark_mode` query is
/// not needed: the graph's colours read on both themes).
pub(super) async fn app_graph(
    axum::extract::State(state): AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Value>> {
    let runner = state.app(&app)?;
    Ok(Json(
        json!({"dot_src": agent_graph(runner.root_agent().as_ref(), &[])}),
    ))
}

/// `GET /dev/apps/{app}/users/{user}/sessions/{session}/events/{event}/graph`: the agent graph
/// with the event's edges lit (caller to tool for calls, tool to caller for responses, the author
/// alone otherwise); `{}` when the event is not in the session.
pub(super) async fn event_graph(
    axum::extract::State(state): AppState,
    Path((app, user, session, event_id)): Path<(String, String, String, String)>,
) -> ApiResult<Json<Value>> {
    let key = session_key(&app, &user, &session)?;
    let stored = load(&state, &key).await?;
    let Some(event) = stored
        .events
        .iter()
        .find(|event| event.id.as_str() == event_id)
    else {
        return Ok(Json(json!({})));
    };
    let calls: Vec<(String, String)> = event
        .function_calls()
        .map(|call| (event.author.clone(), call.name.clone()))
        .collect();
    let responses: Vec<(String, String)> = event
        .function_responses()
        .map(|response| (response.name.clone(), event.author.clone()))
        .collect();
    let highlights = if !calls.is_empty() {
        calls
    } else if !responses.is_empty() {
        responses
    } else {
        vec![(event.author.clone(), String::new())]
    };
    let runner = state.app(&app)?;
    Ok(Json(json!({
        "dot_src": agent_graph(runner.root_agent().as_ref(), &highlights)
    })))
}
