//! [`ForwardingArtifacts`]: the artifact service an agent run as a tool sees, which keeps its
//! artifacts in the caller's session.

use std::sync::Arc;

use adk_core::{ArtifactService, ArtifactVersion, Part, Result, SessionKey};
use async_trait::async_trait;
use serde_json::{Map, Value};

/// Reads and writes the artifacts of one session (the caller's) whatever session a request names.
///
/// An agent run as a tool works on a session of its own that nobody loads again; artifacts it
/// saved there would be lost to the caller and the user, as ADK's agent tool avoids by forwarding
/// them to the caller's context.
pub(super) struct ForwardingArtifacts {
    inner: Arc<dyn ArtifactService>,
    caller: SessionKey,
}

impl ForwardingArtifacts {
    /// Forwards to `inner`, on the session `caller`.
    pub(super) fn new(inner: Arc<dyn ArtifactService>, caller: SessionKey) -> Self {
        Self { inner, caller }
    }
}

#[async_trait]
impl ArtifactService for ForwardingArtifacts {
    async fn save_artifact(
        &self,
        _session: &SessionKey,
        filename: &str,
        artifact: Part,
        custom_metadata: Map<String, Value>,
    ) -> Result<u64> {
        self.inner
            .save_artifact(&self.caller, filename, artifact, custom_metadata)
            .await
    }

    async fn load_artifact(
        &self,
        _session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<Part>> {
        self.inner
            .load_artifact(&self.caller, filename, version)
            .await
    }

    async fn list_artifact_keys(&self, _session: &SessionKey) -> Result<Vec<String>> {
        self.inner.list_artifact_keys(&self.caller).await
    }

    async fn delete_artifact(&self, _session: &SessionKey, filename: &str) -> Result<()> {
        self.inner.delete_artifact(&self.caller, filename).await
    }

    async fn list_versions(&self, _session: &SessionKey, filename: &str) -> Result<Vec<u64>> {
        self.inner.list_versions(&self.caller, filename).await
    }

    async fn artifact_version(
        &self,
        _session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<ArtifactVersion>> {
        self.inner
            .artifact_version(&self.caller, filename, version)
            .await
    }
}
