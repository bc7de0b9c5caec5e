//! [`EvalStore`]: eval sets and results in a folder, laid out as ADK Python's local eval
//! managers lay them out, so that either reads what the other wrote:
//! `<root>/<app>/<eval set id>.evalset.json` and
//! `<root>/<app>/.adk/eval_history/<result name>.evalset_result.json`.

use std::io;
use std::path::{Path, PathBuf};

use adk_eval::{EvalCase, EvalSet, EvalSetResult, RESULT_FILE_EXTENSION};
use tokio::sync::Mutex;

/// The extension of eval set files.
const EVAL_SET_FILE_EXTENSION: &str = ".evalset.json";

/// Where an app's results are kept, under its folder.
const EVAL_HISTORY_DIR: &str = ".adk/eval_history";

/// What can go wrong with the stored eval sets and results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum EvalStoreError {
    /// The eval set, case or result does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request names an id ADK does not allow, or one already taken.
    #[error("{0}")]
    Invalid(String),
    /// A stored file could not be read or written.
    #[error("cannot use {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A stored file is not an eval set or result.
    #[error(transparent)]
    Malformed(#[from] adk_eval::EvalError),
}

/// The eval sets and results of every app, in one folder.
#[derive(Debug)]
pub(crate) struct EvalStore {
    root: PathBuf,
    /// Held across each read-change-write of an eval set, so that two requests changing one set
    /// at once cannot lose either change.
    writing: Mutex<()>,
}

impl EvalStore {
    pub(crate) fn new(root: PathBuf) -> Self {
        Self {
            root,
            writing: Mutex::new(()),
        }
    }

    fn set_path(&self, app: &str, id: &str) -> PathBuf {
        self.root
            .join(app)
            .join(format!("{id}{EVAL_SET_FILE_EXTENSION}"))
    }

    fn history_dir(&self, app: &str) -> PathBuf {
        self.root.join(app).join(EVAL_HISTORY_DIR)
    }

    /// The ids of the app's eval sets, sorted.
    pub(crate) async fn list_sets(&self, app: &str) -> Result<Vec<String>, EvalStoreError> {
        let mut ids = file_stems(&self.root.join(app), EVAL_SET_FILE_EXTENSION).await?;
        ids.sort();
        Ok(ids)
    }

    /// The eval set `id`, if it exists.
    pub(crate) async fn get_set(
        &self,
        app: &str,
        id: &str,
    ) -> Result<Option<EvalSet>, EvalStoreError> {
        let path = self.set_path(app, id);
        match tokio::fs::read_to_string(&path).await {
            Ok(text) => Ok(Some(EvalSet::from_json(
                &text,
                &display(&path, &self.root),
            )?)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(EvalStoreError::Io { path, source }),
        }
    }

    /// The eval set `id`, or [`EvalStoreError::NotFound`] in ADK's words.
    pub(crate) async fn existing_set(
        &self,
        app: &str,
        id: &str,
    ) -> Result<EvalSet, EvalStoreError> {
        self.get_set(app, id)
            .await?
            .ok_or_else(|| EvalStoreError::NotFound(format!("no eval set `{id}` in app `{app}`")))
    }

    /// Creates the empty eval set `id`, named after itself and stamped now.
    pub(crate) async fn create_set(
        &self,
        app: &str,
        id: &str,
        now: f64,
    ) -> Result<EvalSet, EvalStoreError> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(EvalStoreError::Invalid(format!(
                "eval set id `{id}` may hold only ASCII letters, digits and `_`, as ADK's ids do"
            )));
        }
        let _writing = self.writing.lock().await;
        if self.get_set(app, id).await?.is_some() {
            return Err(EvalStoreError::Invalid(format!(
                "eval set `{id}` already exists in app `{app}`"
            )));
        }
        let mut set = EvalSet::new(id, Vec::new());
        set.name = Some(id.to_owned());
        set.creation_timestamp = now;
        self.write_set(app, &set).await?;
        Ok(set)
    }

    /// Deletes the eval set `id` (its results stay).
    pub(crate) async fn delete_set(&self, app: &str, id: &str) -> Result<(), EvalStoreError> {
        let _writing = self.writing.lock().await;
        let path = self.set_path(app, id);
        match tokio::fs::remove_file(&path).await {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Err(EvalStoreError::NotFound(
                format!("no eval set `{id}` in app `{app}`"),
            )),
            Err(source) => Err(EvalStoreError::Io { path, source }),
        }
    }

    /// Adds `case` to the eval set `id`; its id must be new in the set.
    pub(crate) async fn add_case(
        &self,
        app: &str,
        id: &str,
        case: EvalCase,
    ) -> Result<(), EvalStoreError> {
        self.change_set(app, id, |set| {
            if set.case(&case.eval_id).is_some() {
                return Err(EvalStoreError::Invalid(format!(
                    "eval set `{}` already has a case `{}`",
                    set.eval_set_id, case.eval_id
                )));
            }
            set.eval_cases.push(case);
            Ok(())
        })
        .await
    }

    /// Replaces the case of the same id in the eval set `id`, keeping its place.
    pub(crate) async fn update_case(
        &self,
        app: &str,
        id: &str,
        case: EvalCase,
    ) -> Result<(), EvalStoreError> {
        self.change_set(app, id, |set| {
            let slot = set
                .eval_cases
                .iter_mut()
                .find(|existing| existing.eval_id == case.eval_id)
                .ok_or_else(|| missing_case(&case.eval_id, &set.eval_set_id))?;
            *slot = case;
            Ok(())
        })
        .await
    }

    /// Deletes the case `case_id` from the eval set `id`.
    pub(crate) async fn delete_case(
        &self,
        app: &str,
        id: &str,
        case_id: &str,
    ) -> Result<(), EvalStoreError> {
        self.change_set(app, id, |set| {
            let before = set.eval_cases.len();
            set.eval_cases.retain(|case| case.eval_id != case_id);
            if set.eval_cases.len() == before {
                return Err(missing_case(case_id, &set.eval_set_id));
            }
            Ok(())
        })
        .await
    }

    async fn change_set(
        &self,
        app: &str,
        id: &str,
        change: impl FnOnce(&mut EvalSet) -> Result<(), EvalStoreError>,
    ) -> Result<(), EvalStoreError> {
        let _writing = self.writing.lock().await;
        let mut set = self.existing_set(app, id).await?;
        change(&mut set)?;
        self.write_set(app, &set).await
    }

    async fn write_set(&self, app: &str, set: &EvalSet) -> Result<(), EvalStoreError> {
        let path = self.set_path(app, &set.eval_set_id);
        let json = serde_json::to_string_pretty(set).map_err(|error| EvalStoreError::Io {
            path: path.clone(),
            source: io::Error::other(error),
        })?;
        write_atomically(&path, json.as_bytes()).await
    }

    /// The ids of the app's results, sorted.
    pub(crate) async fn list_results(&self, app: &str) -> Result<Vec<String>, EvalStoreError> {
        let mut ids = file_stems(&self.history_dir(app), RESULT_FILE_EXTENSION).await?;
        ids.sort();
        Ok(ids)
    }

    /// The result `id`.
    pub(crate) async fn get_result(
        &self,
        app: &str,
        id: &str,
    ) -> Result<EvalSetResult, EvalStoreError> {
        let path = self
            .history_dir(app)
            .join(format!("{id}{RESULT_FILE_EXTENSION}"));
        let text = match tokio::fs::read_to_string(&path).await {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(EvalStoreError::NotFound(format!(
                    "no eval result `{id}` in app `{app}`"
                )));
            }
            Err(source) => return Err(EvalStoreError::Io { path, source }),
        };
        Ok(EvalSetResult::from_json(
            &text,
            &display(&path, &self.root),
        )?)
    }

    /// Saves `result` among the app's results.
    pub(crate) async fn save_result(
        &self,
        app: &str,
        result: &EvalSetResult,
    ) -> Result<(), EvalStoreError> {
        result.save(self.history_dir(app)).await?;
        Ok(())
    }
}

fn missing_case(case_id: &str, set_id: &str) -> EvalStoreError {
    EvalStoreError::NotFound(format!("eval set `{set_id}` has no case `{case_id}`"))
}

/// The names of the files in `dir` that end in `extension`, without it; none when `dir` does
/// not exist yet.
async fn file_stems(dir: &Path, extension: &str) -> Result<Vec<String>, EvalStoreError> {
    let io_error = |source| EvalStoreError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(io_error(source)),
    };
    let mut stems = Vec::new();
    while let Some(entry) = entries.next_entry().await.map_err(io_error)? {
        if let Some(stem) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.strip_suffix(extension))
        {
            stems.push(stem.to_owned());
        }
    }
    Ok(stems)
}

/// Writes `bytes` to a file beside `path`, then renames it over `path`, so that a reader never
/// sees half a file and a crash never leaves one.
async fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EvalStoreError> {
    let io_error = |source| EvalStoreError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await.map_err(io_error)?;
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    tokio::fs::write(&partial, bytes).await.map_err(io_error)?;
    tokio::fs::rename(&partial, path).await.map_err(io_error)
}

/// A stored file's name for messages: its path under the store's folder.
fn display(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
