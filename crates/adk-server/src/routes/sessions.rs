//! The session routes: list, create (with initial state and events), get, update state, delete,
//! and adding a session to memory.

use adk_core::{
    CreateSessionRequest, Event, EventActions, GetSessionRequest, IdGen as _, InvocationId,
    Session, SessionKey, USER_AUTHOR, UuidIdGen,
};
use axum::Json;
use axum::extract::Path;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::names::check_name;
use crate::state::ServerState;

/// The body of `POST .../sessions`: all optional.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreateBody {
    #[serde(default, alias = "session_id")]
    session_id: Option<String>,
    #[serde(default)]
    state: Option<Map<String, Value>>,
    #[serde(default)]
    events: Option<Vec<Event>>,
}

/// The body of `PATCH .../sessions/{session}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateBody {
    #[serde(alias = "state_delta")]
    state_delta: Map<String, Value>,
}

/// The body of `PATCH .../memory`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MemoryBody {
    #[serde(alias = "session_id")]
    session_id: String,
}

/// The key of a session named in the path, every part checked.
pub(super) fn session_key(app: &str, user: &str, session: &str) -> ApiResult<SessionKey> {
    check_name("user id", user)?;
    check_name("session id", session)?;
    Ok(SessionKey::new(app, user, session))
}

/// Loads a session, or 404.
pub(super) async fn load(state: &ServerState, key: &SessionKey) -> ApiResult<Session> {
    let runner = state.app(&key.app_name)?;
    runner
        .session_service()
        .get_session(GetSessionRequest::new(key.clone()))
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "session {:?} of user {:?} not found",
                key.session_id.as_str(),
                key.user_id
            ))
        })
}

/// `GET /apps/{app}/users/{user}/sessions`: the user's sessions, without events.
pub(super) async fn list(
    state: AppState,
    Path((app, user)): Path<(String, String)>,
) -> ApiResult<Json<Vec<Session>>> {
    check_name("user id", &user)?;
    let runner = state.app(&app)?;
    Ok(Json(
        runner.session_service().list_sessions(&app, &user).await?,
    ))
}

/// `POST /apps/{app}/users/{user}/sessions`: a new session, with an optional id, state and events.
pub(super) async fn create(
    state: AppState,
    Path((app, user)): Path<(String, String)>,
    JsonBody(body): JsonBody<Option<CreateBody>>,
) -> ApiResult<Json<Session>> {
    create_session(&state, &app, &user, body.unwrap_or_default()).await
}

/// `POST /apps/{app}/users/{user}/sessions/{session}` (deprecated in ADK): a new session with this
/// id and an optional state (the body is the state itself).
pub(super) async fn create_with_id(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
    JsonBody(initial): JsonBody<Option<Map<String, Value>>>,
) -> ApiResult<Json<Session>> {
    let body = CreateBody {
        session_id: Some(session),
        state: initial,
        events: None,
    };
    create_session(&state, &app, &user, body).await
}

async fn create_session(
    state: &AppState,
    app: &str,
    user: &str,
    body: CreateBody,
) -> ApiResult<Json<Session>> {
    check_name("user id", user)?;
    if let Some(id) = &body.session_id {
        check_name("session id", id)?;
    }
    let events = body.events.unwrap_or_default();
    for (index, event) in events.iter().enumerate() {
        check_initial_event(index, event)?;
    }
    let runner = state.app(app)?;
    let initial_state = body.state.unwrap_or_default();
    // The client's state may not set `app:` or `temp:` keys unless the app allows it.
    runner.check_client_state(&initial_state)?;
    let mut request = CreateSessionRequest::new(app, user).with_state(initial_state);
    if let Some(id) = body.session_id {
        request = request.with_session_id(id);
    }
    let service = runner.session_service();
    let mut session = service.create_session(request).await?;
    for event in events {
        service.append_event(&mut session, event).await?;
    }
    Ok(Json(session))
}

/// Events a client restores a conversation with may hold ordinary tool calls and responses, but
/// nothing that claims to be the framework's own: no actions, no long-running calls, no `adk_*`
/// protocol calls (which would forge a pending confirmation or credential request).
fn check_initial_event(index: usize, event: &Event) -> ApiResult<()> {
    let refuse = |what: &str| {
        Err(ApiError::bad_request(format!(
            "session initialization event {index} cannot include {what}"
        )))
    };
    if event
        .long_running_tool_ids
        .as_ref()
        .is_some_and(|ids| !ids.is_empty())
    {
        return refuse("long-running tool ids");
    }
    if event.actions != EventActions::default() {
        return refuse("event actions");
    }
    let protocol = event
        .function_calls()
        .map(|call| call.name.as_str())
        .chain(
            event
                .function_responses()
                .map(|response| response.name.as_str()),
        )
        .any(|name| name.starts_with("adk_"));
    if protocol {
        return refuse("ADK protocol function calls");
    }
    Ok(())
}

/// `GET /apps/{app}/users/{user}/sessions/{session}`: the session with its events.
pub(super) async fn get(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
) -> ApiResult<Json<Session>> {
    let key = session_key(&app, &user, &session)?;
    Ok(Json(load(&state, &key).await?))
}

/// `PATCH /apps/{app}/users/{user}/sessions/{session}`: applies `stateDelta` through an event of
/// the user (invocation `p-<uuid>`, as ADK Python writes it) without running the agent.
pub(super) async fn update(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
    JsonBody(body): JsonBody<UpdateBody>,
) -> ApiResult<Json<Session>> {
    let key = session_key(&app, &user, &session)?;
    state.app(&app)?.check_client_state(&body.state_delta)?;
    let mut stored = load(&state, &key).await?;
    let mut actions = EventActions::default();
    actions.state_delta = body.state_delta;
    let invocation = InvocationId::new(format!("p-{}", UuidIdGen.new_uuid()));
    let event = Event::new(invocation, USER_AUTHOR).with_actions(actions);
    state
        .app(&app)?
        .session_service()
        .append_event(&mut stored, event)
        .await?;
    Ok(Json(stored))
}

/// `DELETE /apps/{app}/users/{user}/sessions/{session}`.
pub(super) async fn delete(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
) -> ApiResult<StatusCode> {
    let key = session_key(&app, &user, &session)?;
    state
        .app(&app)?
        .session_service()
        .delete_session(&key)
        .await?;
    Ok(StatusCode::OK)
}

/// `PATCH /apps/{app}/users/{user}/memory` with `{"sessionId"}`: adds that session to memory.
pub(super) async fn add_to_memory(
    state: AppState,
    Path((app, user)): Path<(String, String)>,
    JsonBody(body): JsonBody<MemoryBody>,
) -> ApiResult<StatusCode> {
    let key = session_key(&app, &user, &body.session_id)?;
    let runner = state.app(&app)?;
    let Some(memory) = runner.memory_service() else {
        return Err(ApiError::bad_request(
            "this app has no memory service (RunnerBuilder::memory_service)",
        ));
    };
    let session = load(&state, &key).await?;
    memory.add_session_to_memory(&session).await?;
    Ok(StatusCode::OK)
}
