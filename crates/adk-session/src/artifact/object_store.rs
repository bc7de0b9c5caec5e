//! [`ObjectStoreArtifactService`]: artifact versions as objects in any `object_store` store.

use std::collections::BTreeSet;
use std::sync::Arc;

use adk_core::{ArtifactService, ArtifactVersion, Part, SessionKey};
use async_trait::async_trait;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde_json::{Map, Value};

use super::record::{Record, version_info};
use super::validate::{ArtifactPath, Owner, artifact_path, display_name, validate_session};
use crate::error::{Error, Result};
use crate::scoped::now;

/// The object of a version that holds its bytes.
const DATA_OBJECT: &str = "data";
/// The object of a version that holds its metadata; a version without it is not complete yet.
const META_OBJECT: &str = "meta.json";

/// Artifacts in an [`ObjectStore`] (S3, GCS, Azure, a local directory, memory, ...), under
/// `<app>/<user>/sessions/<session>/<name>/<version>/{data,meta.json}` and
/// `<app>/<user>/user/<name>/<version>/...` for `user:` names.
///
/// Names are validated to be one plain path component each. A version is claimed by creating its
/// data object with [`PutMode::Create`], so concurrent saves never share a number on stores that
/// support conditional puts; it is visible once its metadata object is written.
#[derive(Debug, Clone)]
pub struct ObjectStoreArtifactService {
    store: Arc<dyn ObjectStore>,
}

impl ObjectStoreArtifactService {
    /// A service keeping its objects in `store`.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Self { store }
    }

    fn owner_prefix(app: &str, user: &str, owner: &Owner) -> Path {
        match owner {
            Owner::Session(session) => Path::from_iter([app, user, "sessions", session.as_str()]),
            Owner::User => Path::from_iter([app, user, "user"]),
        }
    }

    fn artifact_prefix(path: &ArtifactPath) -> Path {
        Self::owner_prefix(&path.app, &path.user, &path.owner).join(path.name.as_str())
    }

    fn object(path: &ArtifactPath, version: u64, object: &str) -> Path {
        Self::artifact_prefix(path)
            .join(version.to_string())
            .join(object)
    }

    /// The version numbers of `path` that have an object named `object`, ascending.
    async fn versions_with(&self, path: &ArtifactPath, object: &str) -> Result<Vec<u64>> {
        let prefix = Self::artifact_prefix(path);
        let depth = prefix.parts().count();
        let versions: BTreeSet<u64> = self
            .store
            .list(Some(&prefix))
            .try_filter_map(|meta| async move {
                let parts: Vec<_> = meta.location.parts().skip(depth).collect();
                Ok(match parts.as_slice() {
                    [version, name] if name.as_ref() == object => {
                        version.as_ref().parse::<u64>().ok()
                    }
                    _ => None,
                })
            })
            .try_collect()
            .await
            .map_err(|error| {
                Error::storage(format!("listing artifact {}", path.filename()), error)
            })?;
        Ok(versions.into_iter().collect())
    }

    async fn save(
        &self,
        path: &ArtifactPath,
        part: Part,
        custom: Map<String, Value>,
    ) -> Result<u64> {
        let what = || format!("saving artifact {}", path.filename());
        let mut version = self
            .versions_with(path, DATA_OBJECT)
            .await?
            .last()
            .map_or(0, |last| last + 1);
        let record = Record::new(part, version, custom, now());
        let body = PutPayload::from_bytes(record.body.clone());
        loop {
            let create = PutOptions::from(PutMode::Create);
            let put = self
                .store
                .put_opts(
                    &Self::object(path, version, DATA_OBJECT),
                    body.clone(),
                    create,
                )
                .await;
            match put {
                Ok(_) => break,
                Err(object_store::Error::AlreadyExists { .. }) => version += 1,
                Err(error) => return Err(Error::storage(what(), error)),
            }
        }
        let mut record = record;
        record.meta.version = version;
        self.store
            .put(
                &Self::object(path, version, META_OBJECT),
                PutPayload::from(record.meta_json()?),
            )
            .await
            .map_err(|error| Error::storage(what(), error))?;
        Ok(version)
    }

    /// The complete version `version` (the latest when `None`), with its bytes when `with_body`.
    async fn read(
        &self,
        path: &ArtifactPath,
        version: Option<u64>,
        with_body: bool,
    ) -> Result<Option<(Record, Path)>> {
        let what = || format!("loading artifact {}", path.filename());
        let version = match version {
            Some(version) => version,
            None => match self.versions_with(path, META_OBJECT).await?.last() {
                Some(&latest) => latest,
                None => return Ok(None),
            },
        };
        let meta = match self.get(&Self::object(path, version, META_OBJECT)).await {
            Ok(Some(meta)) => meta,
            Ok(None) => return Ok(None),
            Err(error) => return Err(Error::storage(what(), error)),
        };
        let data_path = Self::object(path, version, DATA_OBJECT);
        let body = if with_body {
            self.get(&data_path)
                .await
                .map_err(|error| Error::storage(what(), error))?
                .unwrap_or_default()
        } else {
            bytes::Bytes::new()
        };
        Ok(Some((Record::from_stored(&meta, body)?, data_path)))
    }

    /// The bytes of the object at `location`, `None` when there is none.
    async fn get(&self, location: &Path) -> object_store::Result<Option<bytes::Bytes>> {
        match self.store.get(location).await {
            Ok(result) => result.bytes().await.map(Some),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    async fn keys(&self, session: &SessionKey) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        for owner in [
            Owner::Session(session.session_id.as_str().to_owned()),
            Owner::User,
        ] {
            // Walk the objects rather than the "directories": a local store keeps the empty
            // directories of deleted artifacts.
            let prefix = Self::owner_prefix(&session.app_name, &session.user_id, &owner);
            let depth = prefix.parts().count();
            let names: BTreeSet<String> = self
                .store
                .list(Some(&prefix))
                .try_filter_map(|meta| async move {
                    let parts: Vec<_> = meta.location.parts().skip(depth).collect();
                    Ok(match parts.as_slice() {
                        [name, _, object] if object.as_ref() == META_OBJECT => {
                            Some(decode_part(name.as_ref()))
                        }
                        _ => None,
                    })
                })
                .try_collect()
                .await
                .map_err(|error| Error::storage("listing artifacts", error))?;
            keys.extend(names.iter().map(|name| display_name(&owner, name)));
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete(&self, path: &ArtifactPath) -> Result<()> {
        let what = || format!("deleting artifact {}", path.filename());
        let locations: Vec<Path> = self
            .store
            .list(Some(&Self::artifact_prefix(path)))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(|error| Error::storage(what(), error))?;
        for location in locations {
            match self.store.delete(&location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::storage(what(), error)),
            }
        }
        Ok(())
    }
}

/// A path part as it was given: `object_store` percent-encodes the characters it does not allow
/// in a part (`%` itself included), so decoding gives the original back.
fn decode_part(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                at += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[async_trait]
impl ArtifactService for ObjectStoreArtifactService {
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
        self.versions_with(&path, META_OBJECT)
            .await
            .map_err(Error::into_artifact)
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
        Ok(found.map(|(record, location)| {
            version_info(&record.meta, Some(format!("{}/{location}", self.store)))
        }))
    }
}
