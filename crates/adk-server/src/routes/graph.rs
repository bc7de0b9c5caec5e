//! The dev UI's graph routes of ADK 2.x: `build_graph` (the app's tree as JSON, a workflow with
//! its nodes and edges) and `build_graph_image` (each workflow of it in DOT, by static path).

use axum::Json;
use axum::extract::{Path, Query};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::AppState;
use crate::build_graph::{app_graph, graph_images};
use crate::error::{ApiError, ApiResult};

/// The query of `build_graph_image`.
#[derive(Debug, Deserialize)]
pub(super) struct ImageQuery {
    #[serde(default)]
    dark_mode: bool,
    #[serde(default)]
    node: Option<String>,
}

/// `GET /dev/apps/{app}/build_graph`: the app's name and its root agent or workflow.
pub(super) async fn build_graph(
    axum::extract::State(state): AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Value>> {
    let runner = state.app(&app)?;
    Ok(Json(app_graph(&app, runner.root_agent().as_ref())))
}

/// `GET /dev/apps/{app}/build_graph_image?dark_mode=&node=`: `{"<static path>": {"dotSrc":
/// ...}}` for each workflow under `node` (the root when absent), or the agent tree.
pub(super) async fn build_graph_image(
    axum::extract::State(state): AppState,
    Path(app): Path<String>,
    Query(query): Query<ImageQuery>,
) -> ApiResult<Json<Map<String, Value>>> {
    let runner = state.app(&app)?;
    let info = app_graph(&app, runner.root_agent().as_ref());
    graph_images(&info, query.dark_mode, query.node.as_deref())
        .map(Json)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no node {:?} in app {app:?}",
                query.node.unwrap_or_default()
            ))
        })
}
