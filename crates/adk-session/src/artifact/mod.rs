//! Artifact services: versioned files of sessions, and of users for `user:` names.

mod fs;
mod memory;
#[cfg(feature = "object-store")]
mod object_store;
mod record;
mod validate;

pub use fs::FileArtifactService;
pub use memory::InMemoryArtifactService;
#[cfg(feature = "object-store")]
pub use object_store::ObjectStoreArtifactService;
