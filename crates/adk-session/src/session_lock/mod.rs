//! Per-session serialisation of invocations: [`SessionLocks`], the lease it hands out, and its
//! process-local and PostgreSQL implementations.
//!
//! A server takes a session's lock before an invocation loads the session and holds it until the
//! invocation's last event is stored, so two invocations of one session never interleave their
//! events, whichever replica runs them. The revision check of every append stays underneath as the
//! last line of defence: a writer that bypasses the lock still fails as stale instead of losing an
//! update.

mod local;
#[cfg(feature = "postgres")]
mod postgres;

use std::any::Any;
use std::fmt;
use std::time::Duration;

use adk_core::SessionKey;
use async_trait::async_trait;

pub use local::LocalSessionLocks;
#[cfg(feature = "postgres")]
pub use postgres::{
    DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_POOL_SIZE, PostgresSessionLocks, PostgresSettings,
};

/// How long [`SessionLocks::lock`] waits for a session held by another invocation by default: 10
/// seconds.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// Serialises the invocations of each session.
///
/// `lock` waits at most the implementation's wait limit for the session and then fails with
/// [`LockError::Busy`]; the returned [`SessionLease`] holds the session until it is dropped.
/// Implementations: [`LocalSessionLocks`] for one process (in-memory and SQLite sessions) and,
/// with feature `postgres`, `PostgresSessionLocks` for replicas sharing one database.
#[async_trait]
pub trait SessionLocks: Send + Sync + fmt::Debug {
    /// Takes the lock of the session `key`, waiting for the invocation holding it at most the wait
    /// limit.
    async fn lock(&self, key: &SessionKey) -> Result<SessionLease, LockError>;

    /// Succeeds when the store behind the locks answers; a readiness probe asks this.
    async fn check_ready(&self) -> Result<(), LockError>;
}

/// A session's lock, held until this is dropped (dropping releases it, also when the invocation is
/// cancelled).
#[must_use = "the session is unlocked as soon as its lease is dropped"]
pub struct SessionLease {
    // What keeps the lock: a mutex guard, a database transaction. Only its drop matters.
    _held: Box<dyn Any + Send>,
}

impl SessionLease {
    /// A lease that holds the session until `held` is dropped; for implementations of
    /// [`SessionLocks`].
    pub fn new(held: impl Any + Send) -> Self {
        Self {
            _held: Box::new(held),
        }
    }
}

impl fmt::Debug for SessionLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionLease").finish_non_exhaustive()
    }
}

/// Whether `error` failed because every pooled database connection stayed in use for the whole
/// wait: the store is overloaded, not broken, and the request may be tried again later (a server
/// answers 503 with `Retry-After`).
pub fn is_pool_exhausted(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        if matches!(
            error.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::PoolTimedOut)
        ) {
            return true;
        }
        next = match error.downcast_ref::<adk_core::Error>() {
            // A core error's `source` skips the causes its message already states; the pool's
            // timeout is one of them, so step into the service error it wraps instead.
            Some(core) => core
                .downcast_source::<crate::error::Error>()
                .map(|inner| inner as &(dyn std::error::Error + 'static))
                .or_else(|| error.source()),
            None => error.source(),
        };
    }
    false
}

/// Why a session's lock was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another invocation held the session for the whole wait limit.
    #[error(
        "session {session_id} is busy: another invocation held it for the whole wait of {waited:?}; \
         try again once it finished"
    )]
    Busy {
        /// The session.
        session_id: String,
        /// How long the lock was waited for.
        waited: Duration,
    },
    /// Every connection that can hold a lock was in use for the whole wait.
    #[error("no connection to hold a session lock came free within {waited:?}")]
    Saturated {
        /// How long a connection was waited for.
        waited: Duration,
    },
    /// The store behind the locks did not answer.
    #[error("the session lock store is unavailable: {source}")]
    Unavailable {
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

#[cfg(all(test, any(feature = "sqlite", feature = "postgres")))]
mod tests {
    use super::*;

    #[test]
    fn a_pool_timeout_anywhere_in_the_chain_is_exhaustion() {
        let timed_out =
            crate::error::Error::storage("loading session s1", sqlx::Error::PoolTimedOut)
                .into_session();
        assert!(is_pool_exhausted(&timed_out));
        let closed = crate::error::Error::storage("loading session s1", sqlx::Error::PoolClosed)
            .into_session();
        assert!(!is_pool_exhausted(&closed));
        let plain = adk_core::Error::new(adk_core::ErrorKind::Session, "no such table");
        assert!(!is_pool_exhausted(&plain));
    }
}
