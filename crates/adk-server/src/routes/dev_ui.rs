//! The dev UI's routes: its static files at `/dev-ui/` (any unknown path there gets `index.html`,
//! for the UI's own routing), its runtime config, `/dev-ui/config`, and `/` redirecting to it
//! with its query (the OAuth2 sign-in's way back).
//! Without the UI's files they answer 404 like any route not served.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use http::header::CACHE_CONTROL;
use serde_json::json;
use tower_http::services::{ServeDir, ServeFile};

use crate::state::ServerState;

pub(super) fn router(dir: Option<&Path>) -> Router<Arc<ServerState>> {
    let Some(dir) = dir else {
        return Router::new();
    };
    let files = ServeDir::new(dir).fallback(ServeFile::new(dir.join("index.html")));
    Router::new()
        .route("/", get(to_dev_ui))
        .route("/dev-ui", get(to_dev_ui))
        .route("/dev-ui/config", get(ui_config))
        .route(
            "/dev-ui/assets/config/runtime-config.json",
            get(runtime_config),
        )
        .nest_service("/dev-ui/", files)
}

/// Sends the browser to the UI, keeping the query: an OAuth2 server sends the user back to the
/// UI's origin with `?code=...&state=...`, which the UI's sign-in popup reads and hands to the
/// page that opened it.
async fn to_dev_ui(uri: http::Uri) -> Redirect {
    match uri.query() {
        Some(query) => Redirect::temporary(&format!("/dev-ui/?{query}")),
        None => Redirect::temporary("/dev-ui/"),
    }
}

/// The UI's runtime config: the backend is this same origin.
async fn runtime_config() -> impl IntoResponse {
    (
        [(CACHE_CONTROL, "no-store")],
        // adk-rs sends no usage data anywhere: the UI is told the user declined, so it neither asks
        // nor loads analytics.
        axum::Json(json!({"backendUrl": "", "telemetry": false})),
    )
}

/// `/dev-ui/config`: no custom logo.
async fn ui_config() -> impl IntoResponse {
    axum::Json(json!({"logo_text": null, "logo_image_url": null}))
}
