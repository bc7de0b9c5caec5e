//! [`ArtifactStore`]: the one implementation of artifacts, over an `object_store` store (memory,
//! a local directory, or any other: S3, GCS, Azure, ...).
//!
//! Layout: `<app>/<user>/sessions/<session>/<name>/<version>/{data,meta.json}`, and
//! `<app>/<user>/user/<name>/<version>/...` for `user:` names. `data` holds the bytes of inline
//! data, `meta.json` the [`Record`]'s metadata. A version is claimed by creating its `data` object
//! with [`PutMode::Create`], so concurrent saves never share a number, and is visible (listed and
//! loaded) once its `meta.json` is written.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use adk_core::{ArtifactVersion, Part, SessionKey};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde_json::{Map, Value};

use super::record::{Record, version_info};
use super::validate::{ArtifactPath, Owner, display_name};
use crate::error::{Error, ErrorKind, Result};
use crate::scoped::now;

/// The object of a version that holds its bytes.
const DATA_OBJECT: &str = "data";
/// The object of a version that holds its metadata; a version without it is not complete yet.
const META_OBJECT: &str = "meta.json";

/// Artifacts in one store, laid out as the module says. Clones share the store.
#[derive(Debug, Clone)]
pub(crate) struct ArtifactStore {
    backing: Arc<Backing>,
}

/// Where the objects are.
#[derive(Debug)]
enum Backing {
    /// In memory; versions have no URI.
    Memory(InMemory),
    /// A local directory, created on first use. Names are the files' names, as given.
    Directory {
        root: PathBuf,
        store: tokio::sync::OnceCell<LocalFileSystem>,
    },
    /// Any store. Names are path parts as `object_store` writes them: percent-encoded where a
    /// character is one object stores advise against (`%`, `#`, `[`, ...) or beyond ASCII.
    Store(Arc<dyn ObjectStore>),
}

impl ArtifactStore {
    /// Artifacts kept in memory.
    pub(crate) fn memory() -> Self {
        Self {
            backing: Arc::new(Backing::Memory(InMemory::new())),
        }
    }

    /// Artifacts as files under `root`, created on first use.
    pub(crate) fn directory(root: PathBuf) -> Self {
        Self {
            backing: Arc::new(Backing::Directory {
                root,
                store: tokio::sync::OnceCell::new(),
            }),
        }
    }

    /// Artifacts in `store`.
    pub(crate) fn store(store: Arc<dyn ObjectStore>) -> Self {
        Self {
            backing: Arc::new(Backing::Store(store)),
        }
    }

    /// The store, its directory created first when it is a local one.
    async fn objects(&self) -> Result<&dyn ObjectStore> {
        match self.backing.as_ref() {
            Backing::Memory(store) => Ok(store),
            Backing::Store(store) => Ok(store.as_ref()),
            Backing::Directory { root, store } => {
                let store = store
                    .get_or_try_init(|| async {
                        let what = || format!("opening the artifact directory {}", root.display());
                        tokio::fs::create_dir_all(root)
                            .await
                            .map_err(|error| Error::storage(what(), error))?;
                        // Deleting an artifact removes the directories it leaves empty, as
                        // deleting its directory did.
                        LocalFileSystem::new_with_prefix(root)
                            .map(|store| store.with_automatic_cleanup(true))
                            .map_err(|error| Error::storage(what(), error))
                    })
                    .await?;
                Ok(store)
            }
        }
    }

    /// The location of `parts` (validated names, see [`super::validate`]), named as the backing
    /// names them.
    fn location(&self, parts: &[&str]) -> Result<Path> {
        match self.backing.as_ref() {
            Backing::Directory { .. } => Path::parse(parts.join("/")).map_err(|error| {
                Error::new(
                    ErrorKind::InvalidName,
                    format!("artifact path {parts:?} was rejected: {error}"),
                )
            }),
            Backing::Memory(_) | Backing::Store(_) => Ok(Path::from_iter(parts.iter().copied())),
        }
    }

    /// A name as it was given, from the path part the backing wrote for it.
    fn name_of(&self, part: &str) -> String {
        match self.backing.as_ref() {
            Backing::Directory { .. } => part.to_owned(),
            Backing::Memory(_) | Backing::Store(_) => decode_part(part),
        }
    }

    /// Where version `version` of `path`, stored at `location`, can be named outside this
    /// service. Memory has no outside: its URI is the one ADK Python's in-memory service gives,
    /// `memory://apps/<app>/users/<user>[/sessions/<session>]/artifacts/<file>/versions/<n>`.
    fn uri(&self, path: &ArtifactPath, version: u64, location: &Path) -> Option<String> {
        match self.backing.as_ref() {
            Backing::Memory(_) => {
                let session = match &path.owner {
                    Owner::Session(session) => format!("/sessions/{session}"),
                    Owner::User => String::new(),
                };
                Some(format!(
                    "memory://apps/{}/users/{}{session}/artifacts/{}/versions/{version}",
                    path.app,
                    path.user,
                    path.filename()
                ))
            }
            Backing::Directory { store, .. } => store
                .get()
                .and_then(|store| store.path_to_filesystem(location).ok())
                .map(|file| format!("file://{}", file.display())),
            Backing::Store(store) => Some(format!("{store}/{location}")),
        }
    }

    /// Where the artifacts of `owner` are, followed by `name` when given.
    fn owner_prefix(
        &self,
        app: &str,
        user: &str,
        owner: &Owner,
        name: Option<&str>,
    ) -> Result<Path> {
        let mut parts = match owner {
            Owner::Session(session) => vec![app, user, "sessions", session],
            Owner::User => vec![app, user, "user"],
        };
        parts.extend(name);
        self.location(&parts)
    }

    fn artifact_prefix(&self, path: &ArtifactPath) -> Result<Path> {
        self.owner_prefix(&path.app, &path.user, &path.owner, Some(&path.name))
    }

    /// The version numbers of `path` that have an object named `object`, ascending.
    async fn versions_with(&self, path: &ArtifactPath, object: &str) -> Result<Vec<u64>> {
        let prefix = self.artifact_prefix(path)?;
        let depth = prefix.parts().count();
        let versions: BTreeSet<u64> = self
            .objects()
            .await?
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

    /// The complete versions of `path`, ascending.
    pub(crate) async fn versions(&self, path: &ArtifactPath) -> Result<Vec<u64>> {
        self.versions_with(path, META_OBJECT).await
    }

    /// Saves `part` as the next version of `path`.
    pub(crate) async fn save(
        &self,
        path: &ArtifactPath,
        part: Part,
        custom: Map<String, Value>,
    ) -> Result<u64> {
        let what = || format!("saving artifact {}", path.filename());
        let objects = self.objects().await?;
        let prefix = self.artifact_prefix(path)?;
        let claimed = match self.backing.as_ref() {
            Backing::Directory { .. } => children(objects, &prefix)
                .await
                .map_err(|error| Error::storage(what(), error))?
                .iter()
                .filter_map(|version| version.parse::<u64>().ok())
                .max(),
            Backing::Memory(_) | Backing::Store(_) => {
                self.versions_with(path, DATA_OBJECT).await?.last().copied()
            }
        };
        let mut version = claimed.map_or(0, |last| last + 1);
        let mut record = Record::new(part, version, custom, now());
        let body = PutPayload::from_bytes(record.body.clone());
        // Claim the number: creating the data object fails when a concurrent save took it first.
        loop {
            let data = prefix.clone().join(version.to_string()).join(DATA_OBJECT);
            let create = PutOptions::from(PutMode::Create);
            match objects.put_opts(&data, body.clone(), create).await {
                Ok(_) => break,
                Err(object_store::Error::AlreadyExists { .. }) => version += 1,
                Err(error) => return Err(Error::storage(what(), error)),
            }
        }
        record.meta.version = version;
        // A store writes an object whole or not at all, so a reader never sees half the
        // metadata.
        objects
            .put(
                &prefix.join(version.to_string()).join(META_OBJECT),
                PutPayload::from(record.meta_json()?),
            )
            .await
            .map_err(|error| Error::storage(what(), error))?;
        Ok(version)
    }

    /// The part saved as version `version` of `path` (the latest when `None`).
    pub(crate) async fn load(
        &self,
        path: &ArtifactPath,
        version: Option<u64>,
    ) -> Result<Option<Part>> {
        let found = self.read(path, version, true).await?;
        Ok(found.map(|(record, _)| record.into_part()))
    }

    /// What is known of version `version` of `path` (the latest when `None`).
    pub(crate) async fn version(
        &self,
        path: &ArtifactPath,
        version: Option<u64>,
    ) -> Result<Option<ArtifactVersion>> {
        let found = self.read(path, version, false).await?;
        Ok(found.map(|(record, data)| {
            let uri = self.uri(path, record.meta.version, &data);
            version_info(&record.meta, uri)
        }))
    }

    /// The complete version `version` (the latest when `None`), with its bytes when `with_body`,
    /// and the location of its data.
    async fn read(
        &self,
        path: &ArtifactPath,
        version: Option<u64>,
        with_body: bool,
    ) -> Result<Option<(Record, Path)>> {
        let what = || format!("loading artifact {}", path.filename());
        let version = match version {
            Some(version) => version,
            None => match self.versions(path).await?.last() {
                Some(&latest) => latest,
                None => return Ok(None),
            },
        };
        let objects = self.objects().await?;
        let version_prefix = self.artifact_prefix(path)?.join(version.to_string());
        let Some(meta) = get(objects, &version_prefix.clone().join(META_OBJECT))
            .await
            .map_err(|error| Error::storage(what(), error))?
        else {
            return Ok(None);
        };
        let data = version_prefix.join(DATA_OBJECT);
        let body = if with_body {
            get(objects, &data)
                .await
                .map_err(|error| Error::storage(what(), error))?
                .unwrap_or_default()
        } else {
            Bytes::new()
        };
        Ok(Some((Record::from_stored(&meta, body)?, data)))
    }

    /// The names of the artifacts `session` sees (its own and its user's, `user:` names with
    /// their prefix), sorted.
    pub(crate) async fn keys(&self, session: &SessionKey) -> Result<Vec<String>> {
        let objects = self.objects().await?;
        let mut keys = Vec::new();
        for owner in [
            Owner::Session(session.session_id.as_str().to_owned()),
            Owner::User,
        ] {
            let prefix = self.owner_prefix(&session.app_name, &session.user_id, &owner, None)?;
            let names = match self.backing.as_ref() {
                Backing::Directory { .. } => children(objects, &prefix).await,
                Backing::Memory(_) | Backing::Store(_) => {
                    Self::complete_names(objects, &prefix).await
                }
            }
            .map_err(|error| Error::storage("listing artifacts", error))?;
            keys.extend(
                names
                    .iter()
                    .map(|name| display_name(&owner, &self.name_of(name))),
            );
        }
        keys.sort();
        Ok(keys)
    }

    /// The names under `prefix` (an owner's) that have a complete version. The objects are
    /// walked rather than the "directories": a local store not made here may keep the empty
    /// directories of deleted artifacts.
    async fn complete_names(
        objects: &dyn ObjectStore,
        prefix: &Path,
    ) -> object_store::Result<BTreeSet<String>> {
        let depth = prefix.parts().count();
        objects
            .list(Some(prefix))
            .try_filter_map(|meta| async move {
                let parts: Vec<_> = meta.location.parts().skip(depth).collect();
                Ok(match parts.as_slice() {
                    [name, _, object] if object.as_ref() == META_OBJECT => {
                        Some(name.as_ref().to_owned())
                    }
                    _ => None,
                })
            })
            .try_collect()
            .await
    }

    /// Deletes every version of `path`.
    pub(crate) async fn delete(&self, path: &ArtifactPath) -> Result<()> {
        let what = || format!("deleting artifact {}", path.filename());
        let objects = self.objects().await?;
        let locations: Vec<Path> = objects
            .list(Some(&self.artifact_prefix(path)?))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(|error| Error::storage(what(), error))?;
        // Metadata first: a delete cut short leaves versions that are not visible, never a
        // visible version without its bytes.
        let (metadata, rest): (Vec<Path>, Vec<Path>) = locations
            .into_iter()
            .partition(|location| location.filename() == Some(META_OBJECT));
        for batch in [metadata, rest] {
            let mut deleted =
                objects.delete_stream(futures::stream::iter(batch.into_iter().map(Ok)).boxed());
            while let Some(outcome) = deleted.next().await {
                match outcome {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(error) => return Err(Error::storage(what(), error)),
                }
            }
        }
        Ok(())
    }
}

/// The names one level below `prefix` in a local directory made here: its subdirectories, read in
/// one listing. Deleting an artifact removes the directories it empties, so each is an artifact
/// (or a version) at least claimed, as the file service before `object_store` listed them; walking
/// every file instead measured hundreds of times slower (docs/sessions.md).
async fn children(
    objects: &dyn ObjectStore,
    prefix: &Path,
) -> object_store::Result<BTreeSet<String>> {
    let listed = objects.list_with_delimiter(Some(prefix)).await?;
    Ok(listed
        .common_prefixes
        .iter()
        .filter_map(|child| child.filename().map(str::to_owned))
        .collect())
}

/// The bytes of the object at `location`, `None` when there is none.
async fn get(store: &dyn ObjectStore, location: &Path) -> object_store::Result<Option<Bytes>> {
    match store.get(location).await {
        Ok(result) => result.bytes().await.map(Some),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(error) => Err(error),
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
