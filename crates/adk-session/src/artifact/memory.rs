//! [`InMemoryArtifactService`]: artifact versions in memory.

use super::store::ArtifactStore;

/// Artifacts kept in memory (`object_store`'s in-memory store), lost when the process ends. Names
/// are validated as strictly as by the storage backends, so tests catch bad names early.
#[derive(Debug)]
pub struct InMemoryArtifactService {
    store: ArtifactStore,
}

impl InMemoryArtifactService {
    /// An empty service.
    pub fn new() -> Self {
        Self {
            store: ArtifactStore::memory(),
        }
    }
}

impl Default for InMemoryArtifactService {
    fn default() -> Self {
        Self::new()
    }
}

super::service::artifact_service!(InMemoryArtifactService, store);
