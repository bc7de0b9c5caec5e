//! The routes of ADK's API server, one module per area, and the router that joins them. Paths and
//! bodies follow ADK Python's `adk api_server`; what is not served answers 404 with a JSON error.

mod artifacts;
mod debug;
mod dev_ui;
mod graph;
mod meta;
mod run;
mod sessions;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, patch, post};

use crate::error::ApiError;
use crate::server::ServerState;

/// The state every handler gets.
type AppState = axum::extract::State<Arc<ServerState>>;

pub(crate) fn router(state: Arc<ServerState>) -> Router {
    let sessions = "/apps/{app}/users/{user}/sessions";
    let artifacts = "/apps/{app}/users/{user}/sessions/{session}/artifacts";
    Router::new()
        .route("/health", get(meta::health))
        .route("/ready", get(meta::ready))
        .route("/version", get(meta::version))
        .route("/list-apps", get(meta::list_apps))
        .route("/apps/{app}/app-info", get(meta::app_info))
        .route(sessions, get(sessions::list).post(sessions::create))
        .route(
            &format!("{sessions}/{{session}}"),
            get(sessions::get)
                .post(sessions::create_with_id)
                .patch(sessions::update)
                .delete(sessions::delete),
        )
        .route(
            "/apps/{app}/users/{user}/memory",
            patch(sessions::add_to_memory),
        )
        .route(artifacts, get(artifacts::list).post(artifacts::save))
        .route(
            &format!("{artifacts}/{{name}}"),
            get(artifacts::load).delete(artifacts::delete),
        )
        .route(
            &format!("{artifacts}/{{name}}/versions"),
            get(artifacts::versions),
        )
        .route(
            &format!("{artifacts}/{{name}}/versions/metadata"),
            get(artifacts::versions_metadata),
        )
        .route(
            &format!("{artifacts}/{{name}}/versions/{{version}}"),
            get(artifacts::load_version),
        )
        .route(
            &format!("{artifacts}/{{name}}/versions/{{version}}/metadata"),
            get(artifacts::version_metadata),
        )
        .route("/run", post(run::run))
        .route("/run_sse", post(run::run_sse))
        .route(
            "/dev/apps/{app}/debug/trace/{event}",
            get(debug::event_trace),
        )
        .route(
            "/dev/apps/{app}/debug/trace/session/{session}",
            get(debug::session_trace),
        )
        .route("/dev/apps/{app}/graph", get(debug::app_graph))
        .route("/dev/apps/{app}/build_graph", get(graph::build_graph))
        .route(
            "/dev/apps/{app}/build_graph_image",
            get(graph::build_graph_image),
        )
        .route(
            "/dev/apps/{app}/users/{user}/sessions/{session}/events/{event}/graph",
            get(debug::event_graph),
        )
        .merge(dev_ui::router(state.dev_ui_dir.as_deref()))
        .fallback(not_served)
        .with_state(state)
}

/// Every route this server does not offer (eval, builder, live): a JSON 404, so the dev UI shows a
/// message instead of breaking.
async fn not_served(uri: http::Uri) -> ApiError {
    ApiError::not_found(format!("{} is not served by adk-rs", uri.path()))
}
