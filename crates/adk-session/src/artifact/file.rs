//! [`FileArtifactService`]: artifact versions as files under a root directory.

use std::path::PathBuf;

use super::store::ArtifactStore;

/// Artifacts as files under a root directory:
/// `<root>/<app>/<user>/sessions/<session>/<name>/<version>/{data,meta.json}`, and
/// `<root>/<app>/<user>/user/<name>/<version>/...` for `user:` names.
///
/// `object_store`'s local filesystem store under `root`, with files named exactly as the names
/// given. Every name is validated to be one plain path component, so nothing outside the
/// caller's own directories can be reached. A version is claimed by creating its data file
/// (atomic), so concurrent saves never share a number; it is visible once its metadata is
/// written (whole: written aside, then renamed into place).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use adk_core::{ArtifactService, Part, SessionKey};
/// use adk_session::FileArtifactService;
///
/// let root = tempfile::tempdir().unwrap();
/// let artifacts = FileArtifactService::new(root.path().join("artifacts"));
/// let session = SessionKey::new("app", "ada", "s1");
/// let version = artifacts
///     .save_artifact(&session, "notes.txt", Part::text("hello"), Default::default())
///     .await
///     .unwrap();
/// assert_eq!(version, 0);
/// assert!(root.path().join("artifacts/app/ada/sessions/s1/notes.txt/0/meta.json").exists());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct FileArtifactService {
    store: ArtifactStore,
}

impl FileArtifactService {
    /// A service keeping its files under `root` (created on first use).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            store: ArtifactStore::directory(root.into()),
        }
    }
}

super::service::artifact_service!(FileArtifactService, store);
