//! [`ObjectStoreArtifactService`]: artifact versions as objects in any `object_store` store.

use std::sync::Arc;

use object_store::ObjectStore;

use super::store::ArtifactStore;

/// Artifacts in an [`ObjectStore`] (S3, GCS, Azure, a local directory, memory, ...), under
/// `<app>/<user>/sessions/<session>/<name>/<version>/{data,meta.json}` and
/// `<app>/<user>/user/<name>/<version>/...` for `user:` names, each name a path part as
/// `object_store` writes it (percent-encoded where object stores advise against a character,
/// and beyond ASCII).
///
/// Names are validated to be one plain path component each. A version is claimed by creating its
/// data object with [`PutMode::Create`](object_store::PutMode::Create), so concurrent saves never
/// share a number on stores that support conditional puts; it is visible once its metadata
/// object is written.
#[derive(Debug, Clone)]
pub struct ObjectStoreArtifactService {
    store: ArtifactStore,
}

impl ObjectStoreArtifactService {
    /// A service keeping its objects in `store`.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Self {
            store: ArtifactStore::store(store),
        }
    }
}

super::service::artifact_service!(ObjectStoreArtifactService, store);
