//! [`FileArtifactService`]: artifact versions as files under a root directory.

use std::io::ErrorKind as IoKind;
use std::path::{Path, PathBuf};

use adk_core::{ArtifactService, ArtifactVersion, Part, SessionKey};
use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Map, Value};

use super::record::{Record, version_info};
use super::validate::{ArtifactPath, Owner, artifact_path, display_name, validate_session};
use crate::error::{Error, Result};
use crate::scoped::now;

/// The file of a version that holds its bytes.
const DATA_FILE: &str = "data";
/// The file of a version that holds its metadata; a version without it is not complete yet.
const META_FILE: &str = "meta.json";

/// Artifacts as files under a root directory:
/// `<root>/<app>/<user>/sessions/<session>/<name>/<version>/{data,meta.json}`, and
/// `<root>/<app>/<user>/user/<name>/<version>/...` for `user:` names.
///
/// Every name is validated to be one plain path component, so nothing outside the caller's own
/// directories can be reached. A version is claimed by creating its directory (atomic), so
/// concurrent saves never share a number; it is visible once its metadata is written.
#[derive(Debug, Clone)]
pub struct FileArtifactService {
    root: PathBuf,
}

impl FileArtifactService {
    /// A service keeping its files under `root` (created on the first save).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn owner_dir(&self, app: &str, user: &str, owner: &Owner) -> PathBuf {
        let user_dir = self.root.join(app).join(user);
        match owner {
            Owner::Session(session) => user_dir.join("sessions").join(session),
            Owner::User => user_dir.join("user"),
        }
    }

    fn artifact_dir(&self, path: &ArtifactPath) -> PathBuf {
        self.owner_dir(&path.app, &path.user, &path.owner)
            .join(&path.name)
    }

    async fn save(
        &self,
        path: &ArtifactPath,
        part: Part,
        custom: Map<String, Value>,
    ) -> Result<u64> {
        let dir = self.artifact_dir(path);
        let what = || format!("saving artifact {}", path.filename());
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|error| Error::storage(what(), error))?;
        let mut version = all_versions(&dir)
            .await
            .map_err(|error| Error::storage(what(), error))?
            .last()
            .map_or(0, |last| last + 1);
        // Claim the number: creating a directory fails when a concurrent save took it first.
        loop {
            match tokio::fs::create_dir(dir.join(version.to_string())).await {
                Ok(()) => break,
                Err(error) if error.kind() == IoKind::AlreadyExists => version += 1,
                Err(error) => return Err(Error::storage(what(), error)),
            }
        }
        let version_dir = dir.join(version.to_string());
        let record = Record::new(part, version, custom, now());
        tokio::fs::write(version_dir.join(DATA_FILE), &record.body)
            .await
            .map_err(|error| Error::storage(what(), error))?;
        // Write then rename, so a reader never sees half the metadata.
        let partial = version_dir.join("meta.json.partial");
        tokio::fs::write(&partial, record.meta_json()?)
            .await
            .map_err(|error| Error::storage(what(), error))?;
        tokio::fs::rename(&partial, version_dir.join(META_FILE))
            .await
            .map_err(|error| Error::storage(what(), error))?;
        Ok(version)
    }

    /// The complete version `version` (the latest when `None`) with its bytes when `with_body`.
    async fn read(
        &self,
        path: &ArtifactPath,
        version: Option<u64>,
        with_body: bool,
    ) -> Result<Option<(Record, PathBuf)>> {
        let dir = self.artifact_dir(path);
        let what = || format!("loading artifact {}", path.filename());
        let version = match version {
            Some(version) => version,
            None => match complete_versions(&dir)
                .await
                .map_err(|error| Error::storage(what(), error))?
                .last()
            {
                Some(&latest) => latest,
                None => return Ok(None),
            },
        };
        let version_dir = dir.join(version.to_string());
        let meta = match tokio::fs::read(version_dir.join(META_FILE)).await {
            Ok(meta) => meta,
            Err(error) if error.kind() == IoKind::NotFound => return Ok(None),
            Err(error) => return Err(Error::storage(what(), error)),
        };
        let data_path = version_dir.join(DATA_FILE);
        let body = if with_body {
            Bytes::from(
                tokio::fs::read(&data_path)
                    .await
                    .map_err(|error| Error::storage(what(), error))?,
            )
        } else {
            Bytes::new()
        };
        Ok(Some((Record::from_stored(&meta, body)?, data_path)))
    }

    async fn keys(&self, session: &SessionKey) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        for owner in [
            Owner::Session(session.session_id.as_str().to_owned()),
            Owner::User,
        ] {
            let dir = self.owner_dir(&session.app_name, &session.user_id, &owner);
            let names = dir_entries(&dir)
                .await
                .map_err(|error| Error::storage("listing artifacts", error))?;
            keys.extend(names.iter().map(|name| display_name(&owner, name)));
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete(&self, path: &ArtifactPath) -> Result<()> {
        match tokio::fs::remove_dir_all(self.artifact_dir(path)).await {
            Err(error) if error.kind() != IoKind::NotFound => Err(Error::storage(
                format!("deleting artifact {}", path.filename()),
                error,
            )),
            _ => Ok(()),
        }
    }
}

/// The names in `dir` (none when it does not exist), unsorted.
async fn dir_entries(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(error) if error.kind() == IoKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut names = Vec::new();
    while let Some(entry) = entries.next_entry().await? {
        if let Some(name) = entry.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Every claimed version number under `dir`, ascending.
async fn all_versions(dir: &Path) -> std::io::Result<Vec<u64>> {
    let mut versions: Vec<u64> = dir_entries(dir)
        .await?
        .iter()
        .filter_map(|name| name.parse().ok())
        .collect();
    versions.sort_unstable();
    Ok(versions)
}

/// The version numbers under `dir` whose metadata is written, ascending.
async fn complete_versions(dir: &Path) -> std::io::Result<Vec<u64>> {
    let mut complete = Vec::new();
    for version in all_versions(dir).await? {
        if tokio::fs::try_exists(dir.join(version.to_string()).join(META_FILE)).await? {
            complete.push(version);
        }
    }
    Ok(complete)
}

#[async_trait]
impl ArtifactService for FileArtifactService {
    async fn save_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        artifact: Part,
        custom_metadata: Map<String, Value>,
    ) -> adk_core::Result<u64> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        self.save(&path, artifact, custom_metadata)
            .await
            .map_err(Error::into_artifact)
    }

    async fn load_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> adk_core::Result<Option<Part>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let found = self
            .read(&path, version, true)
            .await
            .map_err(Error::into_artifact)?;
        Ok(found.map(|(record, _)| record.into_part()))
    }

    async fn list_artifact_keys(&self, session: &SessionKey) -> adk_core::Result<Vec<String>> {
        validate_session(session).map_err(Error::into_artifact)?;
        self.keys(session).await.map_err(Error::into_artifact)
    }

    async fn delete_artifact(&self, session: &SessionKey, filename: &str) -> adk_core::Result<()> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        self.delete(&path).await.map_err(Error::into_artifact)
    }

    async fn list_versions(
        &self,
        session: &SessionKey,
        filename: &str,
    ) -> adk_core::Result<Vec<u64>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        complete_versions(&self.artifact_dir(&path))
            .await
            .map_err(|error| Error::storage("listing artifact versions", error).into_artifact())
    }

    async fn artifact_version(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> adk_core::Result<Option<ArtifactVersion>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let found = self
            .read(&path, version, false)
            .await
            .map_err(Error::into_artifact)?;
        Ok(found.map(|(record, data_path)| {
            version_info(
                &record.meta,
                Some(format!("file://{}", data_path.display())),
            )
        }))
    }
}
