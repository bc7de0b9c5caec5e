//! [`EvalStore`]: eval sets and results in a folder, laid out as ADK Python's local eval
//! managers lay them out, so that either reads what the other wrote:
//! `<root>/<app>/<eval set id>.evalset.json` and
//! `<root>/<app>/.adk/eval_history/<result name>.evalset_result.json`. The server's eval routes
//! and the command line's `eval_set` commands both keep their sets here.

use std::io;
use std::path::{Path, PathBuf};

use tokio::sync::Mutex;

use crate::{EvalCase, EvalError, EvalSet, EvalSetResult, RESULT_FILE_EXTENSION};

/// The extension of eval set files, as ADK names them.
pub const EVAL_SET_FILE_EXTENSION: &str = ".evalset.json";

/// Where an app's results are kept, under its folder.
const EVAL_HISTORY_DIR: &str = ".adk/eval_history";

/// What can go wrong with the stored eval sets and results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalStoreError {
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
    Malformed(#[from] EvalError),
}

/// The eval sets and results of every app, in one folder.
///
/// ```
/// use adk_eval::EvalStore;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("adk-eval-store-doc-{}", std::process::id()));
/// let store = EvalStore::new(&dir);
/// store.create_set("weather", "smoke", 0.0).await.unwrap();
/// assert_eq!(store.list_sets("weather").await.unwrap(), ["smoke"]);
/// assert!(dir.join("weather/smoke.evalset.json").is_file());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct EvalStore {
    root: PathBuf,
    /// Held across each read-change-write of an eval set, so that two requests changing one set
    /// at once cannot lose either change.
    writing: Mutex<()>,
}

impl EvalStore {
    /// A store of the sets and results kept under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            writing: Mutex::new(()),
        }
    }

    /// The folder the sets and results are kept in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of app `app`'s sets.
    fn app_dir(&self, app: &str) -> Result<PathBuf, EvalStoreError> {
        Ok(self.root.join(path_segment("app name", app)?))
    }

    fn set_path(&self, app: &str, id: &str) -> Result<PathBuf, EvalStoreError> {
        let id = path_segment("eval set id", id)?;
        Ok(self
            .app_dir(app)?
            .join(format!("{id}{EVAL_SET_FILE_EXTENSION}")))
    }

    fn history_dir(&self, app: &str) -> Result<PathBuf, EvalStoreError> {
        Ok(self.app_dir(app)?.join(EVAL_HISTORY_DIR))
    }

    /// The ids of the app's eval sets, sorted.
    pub async fn list_sets(&self, app: &str) -> Result<Vec<String>, EvalStoreError> {
        let mut ids = file_stems(&self.app_dir(app)?, EVAL_SET_FILE_EXTENSION).await?;
        ids.sort();
        Ok(ids)
    }

    /// The eval set `id`, if it exists.
    pub async fn get_set(&self, app: &str, id: &str) -> Result<Option<EvalSet>, EvalStoreError> {
        let path = self.set_path(app, id)?;
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
    pub async fn existing_set(&self, app: &str, id: &str) -> Result<EvalSet, EvalStoreError> {
        self.get_set(app, id)
            .await?
            .ok_or_else(|| EvalStoreError::NotFound(format!("no eval set `{id}` in app `{app}`")))
    }

    /// Creates the empty eval set `id`, named after itself and stamped now.
    pub async fn create_set(
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
    pub async fn delete_set(&self, app: &str, id: &str) -> Result<(), EvalStoreError> {
        let _writing = self.writing.lock().await;
        let path = self.set_path(app, id)?;
        match tokio::fs::remove_file(&path).await {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Err(EvalStoreError::NotFound(
                format!("no eval set `{id}` in app `{app}`"),
            )),
            Err(source) => Err(EvalStoreError::Io { path, source }),
        }
    }

    /// Adds `case` to the eval set `id`; its id must be new in the set.
    pub async fn add_case(
        &self,
        app: &str,
        id: &str,
        case: EvalCase,
    ) -> Result<(), EvalStoreError> {
        let case_id = case.eval_id.clone();
        if self.add_case_if_new(app, id, case).await? {
            Ok(())
        } else {
            Err(EvalStoreError::Invalid(format!(
                "eval set `{id}` already has a case `{case_id}`"
            )))
        }
    }

    /// Adds `case` to the eval set `id` unless the set already has a case of its id, which is
    /// left as it is (and the file untouched); says whether it was added.
    pub async fn add_case_if_new(
        &self,
        app: &str,
        id: &str,
        case: EvalCase,
    ) -> Result<bool, EvalStoreError> {
        self.change_set(app, id, |set| {
            if set.case(&case.eval_id).is_some() {
                return Ok(false);
            }
            set.eval_cases.push(case);
            Ok(true)
        })
        .await
    }

    /// Replaces the case of the same id in the eval set `id`, keeping its place.
    pub async fn update_case(
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
            Ok(true)
        })
        .await
        .map(drop)
    }

    /// Deletes the case `case_id` from the eval set `id`.
    pub async fn delete_case(
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
            Ok(true)
        })
        .await
        .map(drop)
    }

    /// Reads the eval set `id`, lets `change` change it, and writes it back when `change` says it
    /// changed it; returns what `change` said. The set's lock is held throughout.
    async fn change_set(
        &self,
        app: &str,
        id: &str,
        change: impl FnOnce(&mut EvalSet) -> Result<bool, EvalStoreError>,
    ) -> Result<bool, EvalStoreError> {
        let _writing = self.writing.lock().await;
        let mut set = self.existing_set(app, id).await?;
        let changed = change(&mut set)?;
        if changed {
            self.write_set(app, &set).await?;
        }
        Ok(changed)
    }

    async fn write_set(&self, app: &str, set: &EvalSet) -> Result<(), EvalStoreError> {
        let path = self.set_path(app, &set.eval_set_id)?;
        let json = serde_json::to_string_pretty(set).map_err(|error| EvalStoreError::Io {
            path: path.clone(),
            source: io::Error::other(error),
        })?;
        write_atomically(&path, json.as_bytes()).await
    }

    /// The ids of the app's results, sorted.
    pub async fn list_results(&self, app: &str) -> Result<Vec<String>, EvalStoreError> {
        let mut ids = file_stems(&self.history_dir(app)?, RESULT_FILE_EXTENSION).await?;
        ids.sort();
        Ok(ids)
    }

    /// The result `id`.
    pub async fn get_result(&self, app: &str, id: &str) -> Result<EvalSetResult, EvalStoreError> {
        let id = path_segment("eval result id", id)?;
        let path = self
            .history_dir(app)?
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
    pub async fn save_result(
        &self,
        app: &str,
        result: &EvalSetResult,
    ) -> Result<(), EvalStoreError> {
        result.save(self.history_dir(app)?).await?;
        Ok(())
    }
}

/// `value` when it names one file or folder and nothing else: not empty, no separator, no
/// `.` or `..`, no NUL and no drive letter, as ADK Python checks the ids it puts in paths.
fn path_segment<'a>(what: &str, value: &'a str) -> Result<&'a str, EvalStoreError> {
    let drive = value.len() >= 2
        && value.as_bytes()[0].is_ascii_alphabetic()
        && value.as_bytes()[1] == b':';
    if value.is_empty()
        || value == "."
        || value == ".."
        || value.contains(['/', '\\', '\0'])
        || drive
    {
        return Err(EvalStoreError::Invalid(format!(
            "{what} {value:?} cannot name a file: it must be one plain name, without separators, \
             `..` or a drive"
        )));
    }
    Ok(value)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ids_that_would_leave_the_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = EvalStore::new(dir.path());
        for (app, set) in [
            ("weather", "../escape"),
            ("..", "smoke"),
            ("weather", ".."),
            ("a/b", "smoke"),
            ("weather", "c:smoke"),
            ("", "smoke"),
        ] {
            let error = store.get_set(app, set).await.unwrap_err();
            assert!(
                matches!(error, EvalStoreError::Invalid(_)),
                "{app} {set}: {error}"
            );
        }
        assert!(matches!(
            store.list_results("../x").await.unwrap_err(),
            EvalStoreError::Invalid(_)
        ));
    }

    #[tokio::test]
    async fn a_case_is_added_once_and_only_to_a_set_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let store = EvalStore::new(dir.path());
        let case = EvalCase::new("paris", Vec::new());
        assert!(matches!(
            store.add_case("weather", "smoke", case.clone()).await,
            Err(EvalStoreError::NotFound(_))
        ));
        store.create_set("weather", "smoke", 1.5).await.unwrap();
        assert!(matches!(
            store.create_set("weather", "smoke", 2.0).await,
            Err(EvalStoreError::Invalid(_))
        ));
        store
            .add_case("weather", "smoke", case.clone())
            .await
            .unwrap();
        assert!(matches!(
            store.add_case("weather", "smoke", case).await,
            Err(EvalStoreError::Invalid(_))
        ));
        let set = store.existing_set("weather", "smoke").await.unwrap();
        assert_eq!(set.eval_cases.len(), 1);
        assert_eq!(set.creation_timestamp, 1.5);
    }
}
