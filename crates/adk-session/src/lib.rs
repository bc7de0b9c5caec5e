#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod artifact;
mod boundary;
mod cancel_signals;
mod credential;
mod error;
mod in_memory;
mod keywords;
#[cfg(feature = "postgres")]
mod postgres;
mod scoped;
mod semantic;
mod session_lock;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use adk_core::Ranking;
pub use artifact::{FileArtifactService, InMemoryArtifactService, ObjectStoreArtifactService};
#[cfg(feature = "postgres")]
pub use credential::PostgresCredentialService;
#[cfg(feature = "sqlite")]
pub use credential::SqliteCredentialService;
pub use credential::{CREDENTIAL_KEY_ENV, CredentialCipher, InMemoryCredentialService};
pub use error::{Error, ErrorKind};
pub use in_memory::{InMemoryMemoryService, InMemorySessionService};
/// The `object_store` crate this one is built with: its stores (`aws`, `gcp`, `azure` with the
/// features `s3`, `gcs`, `azure`) are what [`ObjectStoreArtifactService`] takes.
pub use object_store;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresMemoryService, PostgresSessionService};
pub use semantic::SemanticSearch;
#[cfg(feature = "postgres")]
pub use session_lock::{
    DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_POOL_SIZE, PostgresSessionLocks, PostgresSettings,
};
pub use session_lock::{
    DEFAULT_LOCK_WAIT, LocalSessionLocks, LockError, SessionLease, SessionLocks,
};
// For the server only (it answers an exhausted pool with 503): not part of the API.
#[doc(hidden)]
pub use session_lock::is_pool_exhausted;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteMemoryService, SqliteSessionService};
