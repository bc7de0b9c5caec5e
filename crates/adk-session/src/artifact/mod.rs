//! Artifact services: versioned files of sessions, and of users for `user:` names. One
//! implementation ([`store::ArtifactStore`], over `object_store`) behind three services: in
//! memory, in a local directory, and in any object store.

mod file;
mod memory;
mod object_store;
mod record;
mod service;
pub(crate) mod store;
pub(crate) mod validate;

pub use file::FileArtifactService;
pub use memory::InMemoryArtifactService;
pub use object_store::ObjectStoreArtifactService;
