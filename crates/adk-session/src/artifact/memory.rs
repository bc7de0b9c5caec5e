//! [`InMemoryArtifactService`]: artifact versions in a map behind a mutex.

use std::collections::BTreeMap;

use adk_core::{ArtifactService, ArtifactVersion, Part, SessionKey};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::record::{Record, version_info};
use super::validate::{ArtifactPath, Owner, artifact_path, validate_session};
use crate::error::Error;
use crate::scoped::now;

/// Artifacts kept in memory, lost when the process ends. Names are validated as strictly as by
/// the storage backends, so tests catch bad names early.
#[derive(Debug, Default)]
pub struct InMemoryArtifactService {
    artifacts: Mutex<BTreeMap<ArtifactPath, Vec<Record>>>,
}

impl InMemoryArtifactService {
    /// An empty service.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl ArtifactService for InMemoryArtifactService {
    async fn save_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        artifact: Part,
        custom_metadata: Map<String, Value>,
    ) -> adk_core::Result<u64> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let mut artifacts = self.artifacts.lock();
        let versions = artifacts.entry(path).or_default();
        let version = versions.len() as u64;
        versions.push(Record::new(artifact, version, custom_metadata, now()));
        Ok(version)
    }

    async fn load_artifact(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> adk_core::Result<Option<Part>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let artifacts = self.artifacts.lock();
        Ok(find(artifacts.get(&path), version).map(|record| record.clone().into_part()))
    }

    async fn list_artifact_keys(&self, session: &SessionKey) -> adk_core::Result<Vec<String>> {
        validate_session(session).map_err(Error::into_artifact)?;
        let own = Owner::Session(session.session_id.as_str().to_owned());
        let artifacts = self.artifacts.lock();
        let mut keys: Vec<String> = artifacts
            .keys()
            .filter(|path| {
                path.app == session.app_name
                    && path.user == session.user_id
                    && (path.owner == own || path.owner == Owner::User)
            })
            .map(ArtifactPath::filename)
            .collect();
        keys.sort();
        Ok(keys)
    }

    async fn delete_artifact(&self, session: &SessionKey, filename: &str) -> adk_core::Result<()> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        self.artifacts.lock().remove(&path);
        Ok(())
    }

    async fn list_versions(
        &self,
        session: &SessionKey,
        filename: &str,
    ) -> adk_core::Result<Vec<u64>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let artifacts = self.artifacts.lock();
        Ok(artifacts
            .get(&path)
            .map(|versions| versions.iter().map(|record| record.meta.version).collect())
            .unwrap_or_default())
    }

    async fn artifact_version(
        &self,
        session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> adk_core::Result<Option<ArtifactVersion>> {
        let path = artifact_path(session, filename).map_err(Error::into_artifact)?;
        let artifacts = self.artifacts.lock();
        Ok(find(artifacts.get(&path), version).map(|record| version_info(&record.meta, None)))
    }
}

/// Version `version` (the latest when `None`) of `versions`.
fn find(versions: Option<&Vec<Record>>, version: Option<u64>) -> Option<&Record> {
    let versions = versions?;
    match version {
        None => versions.last(),
        Some(version) => versions.get(usize::try_from(version).ok()?),
    }
}
