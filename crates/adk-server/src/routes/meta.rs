//! The routes about the server and its apps: health, readiness, version, the app list and app info.

use axum::Json;
use axum::extract::{Path, Query};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use crate::app_info::app_info as describe_app;
use crate::error::ApiResult;

/// `GET /health`.
pub(super) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `GET /ready`: 200 while the server takes runs and its session store answers; 503 with
/// `Retry-After` once shutdown began or when the store is unreachable.
pub(super) async fn ready(axum::extract::State(state): AppState) -> ApiResult<Json<Value>> {
    state.check_ready().await?;
    Ok(Json(json!({"status": "ready"})))
}

/// `GET /version`: this crate's version, the language and the compiler that built it.
pub(super) async fn version() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "language": "rust",
        "language_version": env!("ADK_SERVER_RUSTC_VERSION"),
    }))
}

#[derive(Debug, Deserialize)]
pub(super) struct ListAppsQuery {
    #[serde(default)]
    detailed: bool,
}

/// `GET /list-apps`: the app names (with the Builder tab's new apps not saved yet), or with
/// `?detailed=true` each app's info.
pub(super) async fn list_apps(
    axum::extract::State(state): AppState,
    Query(query): Query<ListAppsQuery>,
) -> Json<Value> {
    if query.detailed {
        let apps: Vec<Value> = state.apps().map(|app| describe_app(&app)).collect();
        Json(json!({ "apps": apps }))
    } else {
        let mut names: Vec<String> = state.apps().map(|app| app.app_name().to_owned()).collect();
        if let Some(yaml) = state.yaml_apps.clone() {
            let drafted = tokio::task::spawn_blocking(move || yaml.drafted_new_apps())
                .await
                .unwrap_or_default();
            names.extend(drafted);
            names.sort_unstable();
        }
        Json(json!(names))
    }
}

/// `GET /apps/{app}/app-info`.
pub(super) async fn app_info(
    axum::extract::State(state): AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(describe_app(&state.app(&app)?)))
}
