//! The artifact routes of a session: list names, save a version, load the latest or a given
//! version, list versions and their metadata, delete.

use adk_core::{ArtifactService, ArtifactVersion, Part, SessionKey};
use axum::Json;
use axum::extract::{Path, Query};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::AppState;
use super::sessions::session_key;
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::names::check_name;
use crate::state::ServerState;

/// The body of `POST .../artifacts`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SaveBody {
    filename: String,
    artifact: Part,
    #[serde(default, alias = "custom_metadata")]
    custom_metadata: Option<Map<String, Value>>,
}

/// `?version=` of `GET .../artifacts/{name}`.
#[derive(Debug, Deserialize)]
pub(super) struct VersionQuery {
    #[serde(default)]
    version: Option<u64>,
}

/// The app's artifact service and the session's key, or 400 when the app keeps no artifacts.
fn service(
    state: &ServerState,
    (app, user, session): (&str, &str, &str),
) -> ApiResult<(Arc<dyn ArtifactService>, SessionKey)> {
    let key = session_key(app, user, session)?;
    let service = state.app(app)?.artifact_service().cloned().ok_or_else(|| {
        ApiError::bad_request("this app has no artifact service (RunnerBuilder::artifact_service)")
    })?;
    Ok((service, key))
}

/// A version from the path: a number or `latest` (`None`).
fn parse_version(version: &str) -> ApiResult<Option<u64>> {
    if version == "latest" {
        return Ok(None);
    }
    version.parse().map(Some).map_err(|_| {
        ApiError::bad_request(format!(
            "version {version:?} is neither a version number nor \"latest\""
        ))
    })
}

fn artifact_not_found(name: &str) -> ApiError {
    ApiError::not_found(format!("artifact {name:?} not found"))
}

/// `GET .../artifacts`: the names of the session's and the user's artifacts.
pub(super) async fn list(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
) -> ApiResult<Json<Vec<String>>> {
    let (service, key) = service(&state, (&app, &user, &session))?;
    Ok(Json(service.list_artifact_keys(&key).await?))
}

/// `POST .../artifacts`: saves a new version; answers what is known of it.
pub(super) async fn save(
    state: AppState,
    Path((app, user, session)): Path<(String, String, String)>,
    JsonBody(body): JsonBody<SaveBody>,
) -> ApiResult<Json<ArtifactVersion>> {
    check_name("artifact name", &body.filename)?;
    let (service, key) = service(&state, (&app, &user, &session))?;
    let version = service
        .save_artifact(
            &key,
            &body.filename,
            body.artifact,
            body.custom_metadata.unwrap_or_default(),
        )
        .await?;
    let info = service
        .artifact_version(&key, &body.filename, Some(version))
        .await?
        .unwrap_or_else(|| ArtifactVersion::new(version, 0.0));
    Ok(Json(info))
}

/// `GET .../artifacts/{name}` (`?version=`): the part.
pub(super) async fn load(
    state: AppState,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
    Query(query): Query<VersionQuery>,
) -> ApiResult<Json<Part>> {
    load_part(&state, (&app, &user, &session), &name, query.version).await
}

/// `GET .../artifacts/{name}/versions/{version}`: one version's part (`latest` for the newest).
pub(super) async fn load_version(
    state: AppState,
    Path((app, user, session, name, version)): Path<(String, String, String, String, String)>,
) -> ApiResult<Json<Part>> {
    let version = parse_version(&version)?;
    load_part(&state, (&app, &user, &session), &name, version).await
}

async fn load_part(
    state: &ServerState,
    path: (&str, &str, &str),
    name: &str,
    version: Option<u64>,
) -> ApiResult<Json<Part>> {
    check_name("artifact name", name)?;
    let (service, key) = service(state, path)?;
    let part = service.load_artifact(&key, name, version).await?;
    part.map(Json).ok_or_else(|| artifact_not_found(name))
}

/// `GET .../artifacts/{name}/versions`: the version numbers, oldest first.
pub(super) async fn versions(
    state: AppState,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
) -> ApiResult<Json<Vec<u64>>> {
    check_name("artifact name", &name)?;
    let (service, key) = service(&state, (&app, &user, &session))?;
    Ok(Json(service.list_versions(&key, &name).await?))
}

/// `GET .../artifacts/{name}/versions/metadata`: what is known of every version.
pub(super) async fn versions_metadata(
    state: AppState,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
) -> ApiResult<Json<Vec<ArtifactVersion>>> {
    check_name("artifact name", &name)?;
    let (service, key) = service(&state, (&app, &user, &session))?;
    let mut infos = Vec::new();
    for version in service.list_versions(&key, &name).await? {
        if let Some(info) = service.artifact_version(&key, &name, Some(version)).await? {
            infos.push(info);
        }
    }
    Ok(Json(infos))
}

/// `GET .../artifacts/{name}/versions/{version}/metadata`: what is known of one version.
pub(super) async fn version_metadata(
    state: AppState,
    Path((app, user, session, name, version)): Path<(String, String, String, String, String)>,
) -> ApiResult<Json<ArtifactVersion>> {
    check_name("artifact name", &name)?;
    let version = parse_version(&version)?;
    let (service, key) = service(&state, (&app, &user, &session))?;
    let info = service.artifact_version(&key, &name, version).await?;
    info.map(Json).ok_or_else(|| artifact_not_found(&name))
}

/// `DELETE .../artifacts/{name}`: deletes every version.
pub(super) async fn delete(
    state: AppState,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
) -> ApiResult<StatusCode> {
    check_name("artifact name", &name)?;
    let (service, key) = service(&state, (&app, &user, &session))?;
    service.delete_artifact(&key, &name).await?;
    Ok(StatusCode::OK)
}
