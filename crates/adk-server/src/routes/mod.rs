//! The routes of ADK's API server, one module per area, and the router that joins them. Paths and
//! bodies follow ADK Python's `adk api_server`; what is not served answers 404 with a JSON error.
//!
//! Every route is a row of [`ROUTES`], which says who may call it ([`Access`]); the router is
//! built from the table alone, and a route whose path names a `{user}` gets the layer that
//! refuses a caller acting for another user before its handler runs. A test walks the table
//! with a caller acting for another user, so a route added without its check fails it.

mod active_run;
mod artifacts;
mod builder;
mod cancel;
mod debug;
mod dev_ui;
mod eval;
mod graph;
mod idempotency;
mod meta;
mod run;
mod sessions;

use std::sync::Arc;

use adk_gate::Caller;
use axum::Router;
use axum::extract::{RawPathParams, Request};
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use http::Method;

use crate::error::ApiError;
use crate::state::ServerState;

/// The state every handler gets.
type AppState = axum::extract::State<Arc<ServerState>>;

/// Who may call a route, once the gate let the request in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Anyone who reaches the server, without credentials: health, readiness, the dev UI's files,
    /// agent cards.
    Public,
    /// Any authenticated caller: what the apps are, no user's data.
    AnyCaller,
    /// Callers that may act for the `{user}` of the path (their own user, or any with the admin
    /// scope); checked by a layer before the handler runs.
    PathUser,
    /// Callers that may act for the `userId` of the body (`/run`, `/run_sse`); checked by the
    /// handler once the body is read, before anything is stored.
    BodyUser,
    /// Any authenticated caller, shown only what belongs to its own user (the trace routes;
    /// A2A, whose tasks belong to the user that created them).
    OwnData,
    /// Callers that may change an app for every user: an open server's caller (no
    /// authentication configured) or a principal with the admin scope. The Builder tab's routes,
    /// which read and write the app's agent files; checked by a layer before the handler runs.
    AppAuthor,
}

/// One route: its method, its path (axum's `{param}` syntax) and who may call it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RouteInfo {
    /// The HTTP method.
    pub method: Method,
    /// The path, with `{app}`, `{user}`, `{session}`, ... for its parameters.
    pub path: &'static str,
    /// Who may call it.
    pub access: Access,
}

/// A row of the route table.
struct Route {
    method: Method,
    path: &'static str,
    access: Access,
    handler: fn() -> MethodRouter<Arc<ServerState>>,
}

const SESSIONS: &str = "/apps/{app}/users/{user}/sessions";

/// Every route of the API, in one table; the dev UI's files are added by [`dev_ui`].
const ROUTES: &[Route] = &[
    Route {
        method: Method::GET,
        path: "/health",
        access: Access::Public,
        handler: || get(meta::health),
    },
    Route {
        method: Method::GET,
        path: "/ready",
        access: Access::Public,
        handler: || get(meta::ready),
    },
    Route {
        method: Method::GET,
        path: "/version",
        access: Access::AnyCaller,
        handler: || get(meta::version),
    },
    Route {
        method: Method::GET,
        path: "/list-apps",
        access: Access::AnyCaller,
        handler: || get(meta::list_apps),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/app-info",
        access: Access::AnyCaller,
        handler: || get(meta::app_info),
    },
    Route {
        method: Method::GET,
        path: SESSIONS,
        access: Access::PathUser,
        handler: || get(sessions::list),
    },
    Route {
        method: Method::POST,
        path: SESSIONS,
        access: Access::PathUser,
        handler: || post(sessions::create),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}",
        access: Access::PathUser,
        handler: || get(sessions::get),
    },
    Route {
        method: Method::POST,
        path: "/apps/{app}/users/{user}/sessions/{session}",
        access: Access::PathUser,
        handler: || post(sessions::create_with_id),
    },
    Route {
        method: Method::PATCH,
        path: "/apps/{app}/users/{user}/sessions/{session}",
        access: Access::PathUser,
        handler: || patch(sessions::update),
    },
    Route {
        method: Method::DELETE,
        path: "/apps/{app}/users/{user}/sessions/{session}",
        access: Access::PathUser,
        handler: || delete(sessions::delete),
    },
    Route {
        method: Method::POST,
        path: "/apps/{app}/users/{user}/sessions/{session}/cancel",
        access: Access::PathUser,
        handler: || post(cancel::cancel),
    },
    Route {
        method: Method::PATCH,
        path: "/apps/{app}/users/{user}/memory",
        access: Access::PathUser,
        handler: || patch(sessions::add_to_memory),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts",
        access: Access::PathUser,
        handler: || get(artifacts::list),
    },
    Route {
        method: Method::POST,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts",
        access: Access::PathUser,
        handler: || post(artifacts::save),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}",
        access: Access::PathUser,
        handler: || get(artifacts::load),
    },
    Route {
        method: Method::DELETE,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}",
        access: Access::PathUser,
        handler: || delete(artifacts::delete),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}/versions",
        access: Access::PathUser,
        handler: || get(artifacts::versions),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}/versions/metadata",
        access: Access::PathUser,
        handler: || get(artifacts::versions_metadata),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}/versions/{version}",
        access: Access::PathUser,
        handler: || get(artifacts::load_version),
    },
    Route {
        method: Method::GET,
        path: "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}/versions/{version}/metadata",
        access: Access::PathUser,
        handler: || get(artifacts::version_metadata),
    },
    Route {
        method: Method::POST,
        path: "/run",
        access: Access::BodyUser,
        handler: || post(run::run),
    },
    Route {
        method: Method::POST,
        path: "/run_sse",
        access: Access::BodyUser,
        handler: || post(run::run_sse),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/debug/trace/{event}",
        access: Access::OwnData,
        handler: || get(debug::event_trace),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/debug/trace/session/{session}",
        access: Access::OwnData,
        handler: || get(debug::session_trace),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/graph",
        access: Access::AnyCaller,
        handler: || get(debug::app_graph),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/build_graph",
        access: Access::AnyCaller,
        handler: || get(graph::build_graph),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/build_graph_image",
        access: Access::AnyCaller,
        handler: || get(graph::build_graph_image),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/users/{user}/sessions/{session}/events/{event}/graph",
        access: Access::PathUser,
        handler: || get(debug::event_graph),
    },
    // The eval routes (adk-web's Evals tab). Eval sets and results belong to the app, so any
    // caller may use them; adding a session checks the body's user in its handler.
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval_sets",
        access: Access::AnyCaller,
        handler: || get(eval::list_sets_legacy),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval-sets",
        access: Access::AnyCaller,
        handler: || get(eval::list_sets),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval-sets",
        access: Access::AnyCaller,
        handler: || post(eval::create_set),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval_sets/{set}",
        access: Access::AnyCaller,
        handler: || post(eval::create_set_legacy),
    },
    Route {
        method: Method::DELETE,
        path: "/dev/apps/{app}/eval-sets/{set}",
        access: Access::AnyCaller,
        handler: || delete(eval::delete_set),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval_sets/{set}/add_session",
        access: Access::AnyCaller,
        handler: || post(eval::add_session),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval-sets/{set}/add-session",
        access: Access::AnyCaller,
        handler: || post(eval::add_session),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval_sets/{set}/evals",
        access: Access::AnyCaller,
        handler: || get(eval::list_cases),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval_sets/{set}/evals/{case}",
        access: Access::AnyCaller,
        handler: || get(eval::get_case),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval-sets/{set}/eval-cases/{case}",
        access: Access::AnyCaller,
        handler: || get(eval::get_case),
    },
    Route {
        method: Method::PUT,
        path: "/dev/apps/{app}/eval_sets/{set}/evals/{case}",
        access: Access::AnyCaller,
        handler: || put(eval::update_case),
    },
    Route {
        method: Method::PUT,
        path: "/dev/apps/{app}/eval-sets/{set}/eval-cases/{case}",
        access: Access::AnyCaller,
        handler: || put(eval::update_case),
    },
    Route {
        method: Method::DELETE,
        path: "/dev/apps/{app}/eval_sets/{set}/evals/{case}",
        access: Access::AnyCaller,
        handler: || delete(eval::delete_case),
    },
    Route {
        method: Method::DELETE,
        path: "/dev/apps/{app}/eval-sets/{set}/eval-cases/{case}",
        access: Access::AnyCaller,
        handler: || delete(eval::delete_case),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval-sets/{set}/run",
        access: Access::AnyCaller,
        handler: || post(eval::run),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/eval_sets/{set}/run_eval",
        access: Access::AnyCaller,
        handler: || post(eval::run_legacy),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval_results",
        access: Access::AnyCaller,
        handler: || get(eval::list_results_legacy),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval-results",
        access: Access::AnyCaller,
        handler: || get(eval::list_results),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval_results/{result}",
        access: Access::AnyCaller,
        handler: || get(eval::get_result),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/eval-results/{result}",
        access: Access::AnyCaller,
        handler: || get(eval::get_result),
    },
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/metrics-info",
        access: Access::AnyCaller,
        handler: || get(eval::metrics_info),
    },
    // The Builder tab's routes (`adk web` only): an app's files are every user's app.
    Route {
        method: Method::GET,
        path: "/dev/apps/{app}/builder",
        access: Access::AppAuthor,
        handler: || get(builder::read),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/builder/save",
        access: Access::AppAuthor,
        handler: || post(builder::save),
    },
    Route {
        method: Method::POST,
        path: "/dev/apps/{app}/builder/cancel",
        access: Access::AppAuthor,
        handler: || post(builder::cancel),
    },
];

/// The routes of the table, as [`RouteInfo`]s.
pub(crate) fn route_table() -> Vec<RouteInfo> {
    ROUTES
        .iter()
        .map(|route| RouteInfo {
            method: route.method.clone(),
            path: route.path,
            access: route.access,
        })
        .collect()
}

/// The routes an app's A2A server adds at `/a2a/{app}`.
#[cfg(feature = "a2a")]
pub(crate) fn a2a_routes() -> Vec<RouteInfo> {
    vec![
        RouteInfo {
            method: Method::POST,
            path: "/a2a/{app}",
            access: Access::OwnData,
        },
        RouteInfo {
            method: Method::GET,
            path: "/a2a/{app}/.well-known/agent-card.json",
            access: Access::Public,
        },
    ]
}

pub(crate) fn router(state: Arc<ServerState>) -> Router {
    let mut router = Router::new();
    for route in ROUTES {
        let mut handler = (route.handler)();
        match route.access {
            Access::PathUser => handler = handler.route_layer(from_fn(check_path_user)),
            Access::AppAuthor => handler = handler.route_layer(from_fn(check_app_author)),
            _ => {}
        }
        router = router.route(route.path, handler);
    }
    router
        .merge(dev_ui::router(state.dev_ui_dir.as_deref()))
        .fallback(not_served)
        .with_state(state)
}

/// The layer of [`Access::PathUser`] routes: 403 unless the caller may act for the path's user.
async fn check_path_user(
    caller: Caller,
    params: RawPathParams,
    request: Request,
    next: Next,
) -> Response {
    let user = params
        .iter()
        .find_map(|(name, value)| (name == "user").then_some(value));
    match user {
        Some(user) if caller.may_act_for(user) => next.run(request).await,
        Some(_) => adk_gate::Forbidden.into_response(),
        None => ApiError::new(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "a route that checks its user has no {user} in its path",
        )
        .into_response(),
    }
}

/// The layer of [`Access::AppAuthor`] routes: 403 unless the caller may change an app for every
/// user.
async fn check_app_author(caller: Caller, request: Request, next: Next) -> Response {
    if caller.is_admin() {
        next.run(request).await
    } else {
        ApiError::forbidden(
            "an app's agent files are every user's app: only a caller with the admin scope may \
             read or change them",
        )
        .into_response()
    }
}

/// Every route this server does not offer (live runs, say): a JSON 404, so the dev UI
/// shows a message instead of breaking.
async fn not_served(uri: http::Uri) -> ApiError {
    ApiError::not_found(format!("{} is not served by adk-rs", uri.path()))
}
