//! Session, artifact and memory services for adk-rs.
//!
//! Implementations of [`adk_core::SessionService`], [`adk_core::ArtifactService`] and
//! [`adk_core::MemoryService`]:
//!
//! | service | backends |
//! |---|---|
//! | sessions | [`InMemorySessionService`], [`SqliteSessionService`] (feature `sqlite`, the embedded default), [`PostgresSessionService`] (feature `postgres`) |
//! | artifacts | [`InMemoryArtifactService`], [`FileArtifactService`], [`ObjectStoreArtifactService`] (feature `object-store`) |
//! | memory | [`InMemoryMemoryService`] (keyword search), [`SqliteMemoryService`] (FTS5, feature `sqlite`) |
//! | session locks | [`LocalSessionLocks`], `PostgresSessionLocks` (feature `postgres`): a server serialises each session's invocations with them |
//!
//! # State and concurrency
//!
//! A session's state shows three stored scopes at once: `app:` keys shared by every session of the
//! app, `user:` keys shared by every session of the user, and plain keys of the session; `temp:`
//! keys never reach storage. An append stores the event and applies its state delta to every scope
//! in one transaction, and only if the session's stored revision is still the one the writer loaded:
//! otherwise nothing is written and the error is of kind
//! [`adk_core::ErrorKind::StaleSession`]. So two writers of one session never lose or double an
//! event; the loser reloads and tries again.
//!
//! # Shared with ADK Python
//!
//! The SQL backends store sessions in ADK Python's v1 tables (those of its
//! `DatabaseSessionService`, marked by `adk_internal_metadata`), adding a revision and an event
//! position it never reads: ADK Python and adk-rs read and append to one database. Opening a
//! database adopts tables ADK Python made and upgrades adk-rs's first layout; `docs/sessions.md`
//! says how.
//!
//! # Errors
//!
//! Every backend fails with this crate's [`Error`], converted at the trait boundary into an
//! [`adk_core::Error`] of the matching kind whose source is the [`Error`] (downcast it to read
//! [`ErrorKind`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use adk_core::{CreateSessionRequest, SessionService};
//! use adk_session::InMemorySessionService;
//!
//! let sessions = InMemorySessionService::new();
//! let session = sessions
//!     .create_session(CreateSessionRequest::new("app", "ada"))
//!     .await
//!     .unwrap();
//! assert_eq!(session.revision, 0);
//! # });
//! ```

mod artifact;
mod error;
mod in_memory;
mod keywords;
#[cfg(feature = "postgres")]
mod postgres;
mod scoped;
mod session_lock;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "object-store")]
pub use artifact::ObjectStoreArtifactService;
pub use artifact::{FileArtifactService, InMemoryArtifactService};
pub use error::{Error, ErrorKind};
pub use in_memory::{InMemoryMemoryService, InMemorySessionService};
#[cfg(feature = "postgres")]
pub use postgres::PostgresSessionService;
#[cfg(feature = "postgres")]
pub use session_lock::{
    DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_POOL_SIZE, PostgresSessionLocks, PostgresSettings,
};
pub use session_lock::{
    DEFAULT_LOCK_WAIT, LocalSessionLocks, LockError, SessionLease, SessionLocks, is_pool_exhausted,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteMemoryService, SqliteSessionService};
