//! The routes of adk-web's Builder tab, as ADK Python's `adk web` serves them: reading an app's
//! YAML files (`root_agent.yaml` and its sub-agents', from the app or from the tab's draft),
//! saving them (to the draft, or checked and written into the app, which is rebuilt and served
//! from the next run on), and dropping the draft.
//!
//! Only apps described in YAML, and only on a server given [`YamlApps`](crate::builder::YamlApps)
//! (`adk web`); without them the routes answer 404, as `adk api_server` does. adk-web's "Create
//! new agent" saves a draft for a name the server does not serve yet: given a folder for new apps
//! (`YamlApps::new_apps_in`), the draft goes into `<folder>/<name>/tmp/<name>/`, and the first
//! save checks it like any other, writes `<folder>/<name>/`, and serves the new app from then on.

use std::path::{Path, PathBuf};

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequest as _, Multipart, Path as UrlPath, Query, Request};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use serde::Deserialize;

use super::AppState;
use crate::builder::YamlApps;
use crate::builder::files::{self, FileError, Files, ROOT_FILE, Staging};
use crate::error::{ApiError, ApiResult};
use crate::state::ServerState;

impl From<FileError> for ApiError {
    fn from(error: FileError) -> Self {
        match error {
            FileError::Refused(message) => ApiError::bad_request(message),
            error => {
                tracing::error!(%error, "the builder's files failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "builder_files",
                    error.to_string(),
                )
            }
        }
    }
}

/// The query of the read and save routes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct BuilderQuery {
    /// The file to read, relative to the app's folder; `root_agent.yaml` when left out.
    file_path: Option<String>,
    /// The tab's draft instead of the app's own files.
    tmp: bool,
}

/// The Builder's apps, or the 404 of a server that has none (not `adk web`).
fn yaml_apps<'a>(state: &'a ServerState, uri: &str) -> ApiResult<&'a YamlApps> {
    state
        .yaml_apps
        .as_ref()
        .ok_or_else(|| ApiError::not_found(format!("{uri} is served by adk web only")))
}

/// The app a Builder request is about: its folder, and whether the server serves it yet.
struct Target {
    dir: PathBuf,
    /// Not served yet: adk-web's "Create new agent" drafts it, and its first save creates it.
    new: bool,
}

/// The folder of YAML app `app` (`None` for a served app not described in YAML), or, for a name
/// the server does not serve, the folder the Builder tab may create it in; else the 404 of a
/// missing app.
fn target(state: &ServerState, yaml: &YamlApps, app: &str) -> ApiResult<Option<Target>> {
    match state.app(app) {
        Ok(_) => Ok(yaml.dir(app).map(|dir| Target { dir, new: false })),
        Err(missing) => yaml
            .new_app_dir(app)
            .map(|dir| Some(Target { dir, new: true }))
            .ok_or(missing),
    }
}

/// Runs file work on tokio's blocking threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, FileError> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("the builder's file work stopped: {error}"),
            )
        })?
        .map_err(ApiError::from)
}

/// `GET /dev/apps/{app}/builder?file_path=&tmp=`: the file as YAML text, or an empty body when
/// there is none or the app is not described in YAML (so adk-web offers no builder for it).
pub(super) async fn read(
    state: AppState,
    UrlPath(app): UrlPath<String>,
    Query(query): Query<BuilderQuery>,
) -> ApiResult<Response> {
    let yaml = yaml_apps(&state, "/dev/apps/{app}/builder")?;
    let Some(Target { dir, new }) = target(&state, yaml, &app)? else {
        return Ok(yaml_text(Vec::new()));
    };
    // A new app has files once its first draft was saved; reading makes no folder before that.
    if new && !dir.is_dir() {
        return Ok(yaml_text(Vec::new()));
    }
    let relative = files::relative_path(query.file_path.as_deref().unwrap_or(ROOT_FILE))?;
    let text = if query.tmp {
        // Making the draft writes files; one writer at a time.
        let _writing = yaml.lock().await;
        blocking(move || files::read(&dir, &app, &relative, true)).await?
    } else {
        blocking(move || files::read(&dir, &app, &relative, false)).await?
    };
    Ok(yaml_text(text.unwrap_or_default()))
}

fn yaml_text(bytes: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/x-yaml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from(bytes),
    )
        .into_response()
}

/// `POST /dev/apps/{app}/builder/save?tmp=`: the uploaded files (multipart, field `files`, each
/// named `<app>/<path>`). With `tmp` they go into the draft as they are. Without it the app's
/// files, its draft's and the uploads together are checked as the YAML loader reads them (a
/// problem answers 400 with its file, line and column, and nothing changes), then written into
/// the app's folder, each atomically; the app is rebuilt from them and served from the next run
/// on, and the draft is dropped. A rebuild that fails puts the files back. Answers `true`.
pub(super) async fn save(
    state: AppState,
    UrlPath(app): UrlPath<String>,
    Query(query): Query<BuilderQuery>,
    request: Request,
) -> ApiResult<Json<bool>> {
    let yaml = yaml_apps(&state, "/dev/apps/{app}/builder/save")?;
    let uploads = uploads(&state, &app, request).await?;
    let _writing = yaml.lock().await;
    // Looked up under the lock, so that two tabs creating one app cannot both create it.
    let Target { dir, new } = target(&state, yaml, &app)?.ok_or_else(|| not_yaml(&app))?;
    if query.tmp {
        blocking(move || files::write_draft(&dir, &app, &uploads)).await?;
        return Ok(Json(true));
    }
    let config = {
        let (dir, app) = (dir.clone(), app.clone());
        blocking(move || files::saved_config(&dir, &app, uploads)).await?
    };
    check(yaml, &dir, config.clone()).await?;
    let previous = {
        let (dir, config) = (dir.clone(), config);
        blocking(move || files::save(&dir, &config)).await?
    };
    match yaml.files().reload(&app, &dir).await {
        Ok(runner) => {
            if new {
                state.add_app(runner);
                yaml.add(app.clone(), dir.clone());
            } else {
                state.replace_app(runner);
            }
            blocking(move || files::remove_draft(&dir, &app)).await?;
            Ok(Json(true))
        }
        Err(error) => {
            blocking(move || files::restore(&dir, previous)).await?;
            Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_agent_config",
                format!(
                    "the saved agent cannot be built, so its files were left as they were: {error}"
                ),
            ))
        }
    }
}

/// Checks `config` in a staging copy inside the app's folder; a problem is answered with its file
/// named relative to the app's folder.
async fn check(yaml: &YamlApps, dir: &Path, config: Files) -> ApiResult<()> {
    let staging = {
        let dir = dir.to_path_buf();
        blocking(move || Staging::new(&dir, &config)).await?
    };
    let checked = yaml.files().check(&staging.root().join(ROOT_FILE)).await;
    let root = staging.root().to_path_buf();
    blocking(move || staging.remove()).await?;
    checked.map_err(|mut problem| {
        if let Ok(relative) = problem.file.strip_prefix(&root) {
            problem.file = relative.to_path_buf();
        }
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_agent_config",
            problem.to_string(),
        )
    })
}

/// `POST /dev/apps/{app}/builder/cancel`: drops the draft; answers `true`.
pub(super) async fn cancel(
    state: AppState,
    UrlPath(app): UrlPath<String>,
) -> ApiResult<Json<bool>> {
    let yaml = yaml_apps(&state, "/dev/apps/{app}/builder/cancel")?;
    let _writing = yaml.lock().await;
    let Target { dir, new } = target(&state, yaml, &app)?.ok_or_else(|| not_yaml(&app))?;
    blocking(move || {
        files::remove_draft(&dir, &app)?;
        if new {
            // A new app that was never saved leaves no folder behind; one that holds anything
            // else stays.
            let _ = std::fs::remove_dir(&dir);
        }
        Ok(())
    })
    .await?;
    Ok(Json(true))
}

fn not_yaml(app: &str) -> ApiError {
    ApiError::not_found(format!(
        "app {app:?} is not described in YAML (a folder holding {ROOT_FILE}); the builder edits \
         only such apps"
    ))
}

/// The uploaded files of a save, by their checked relative paths; the body is read under the
/// server's limits first.
async fn uploads(state: &ServerState, app: &str, request: Request) -> ApiResult<Files> {
    let content_type = request.headers().get(header::CONTENT_TYPE).cloned();
    let (bytes, _reservation) = state.read_body(request).await?;
    let mut form = Request::builder();
    if let Some(content_type) = content_type {
        form = form.header(header::CONTENT_TYPE, content_type);
    }
    let form = form.body(Body::from(bytes)).map_err(|error| {
        ApiError::bad_request(format!("cannot read the uploaded files: {error}"))
    })?;
    let mut multipart = Multipart::from_request(form, &())
        .await
        .map_err(|rejection| {
            ApiError::bad_request(format!(
                "a save takes its files as multipart/form-data (field `files`): {}",
                rejection.body_text()
            ))
        })?;
    let unreadable = |error: axum::extract::multipart::MultipartError| {
        ApiError::bad_request(format!(
            "cannot read the uploaded files: {}",
            error.body_text()
        ))
    };
    let mut uploads = Files::new();
    while let Some(field) = multipart.next_field().await.map_err(unreadable)? {
        if field.name() != Some("files") {
            continue;
        }
        let name = field
            .file_name()
            .ok_or_else(|| ApiError::bad_request("an uploaded file has no file name"))?;
        let relative = files::upload_path(app, name)?;
        let bytes = field.bytes().await.map_err(unreadable)?;
        uploads.insert(relative, bytes.to_vec());
    }
    if uploads.is_empty() {
        return Err(ApiError::bad_request(
            "the save uploaded no files (multipart field `files`)",
        ));
    }
    Ok(uploads)
}
