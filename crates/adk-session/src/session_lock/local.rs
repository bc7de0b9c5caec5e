//! [`LocalSessionLocks`]: per-session locks inside one process.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use adk_core::SessionKey;
use async_trait::async_trait;
use parking_lot::Mutex;

use super::{DEFAULT_LOCK_WAIT, LockError, SessionLease, SessionLocks};

/// One lock per session inside this process: enough when a single server owns its sessions
/// (in-memory or SQLite), and the server's default.
///
/// Locks of sessions nobody holds or waits for are forgotten, so the map stays as small as the
/// number of sessions in use.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use adk_core::SessionKey;
/// use adk_session::{LocalSessionLocks, LockError, SessionLocks};
///
/// let locks = LocalSessionLocks::new(Duration::from_millis(10));
/// let key = SessionKey::new("app", "ada", "s1");
/// let lease = locks.lock(&key).await.unwrap();
/// assert!(matches!(locks.lock(&key).await, Err(LockError::Busy { .. })));
/// drop(lease);
/// let _again = locks.lock(&key).await.unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct LocalSessionLocks {
    wait: Duration,
    sessions: Mutex<Sessions>,
}

#[derive(Debug, Default)]
struct Sessions {
    locks: HashMap<SessionKey, Weak<tokio::sync::Mutex<()>>>,
    /// The map's size at which forgotten locks are next swept out.
    sweep_at: usize,
}

impl LocalSessionLocks {
    /// Locks that wait at most `wait` for a session held by another invocation.
    pub fn new(wait: Duration) -> Self {
        Self {
            wait,
            sessions: Mutex::new(Sessions::default()),
        }
    }

    /// The lock of `key`, made when no one holds or waits for it.
    fn lock_of(&self, key: &SessionKey) -> Arc<tokio::sync::Mutex<()>> {
        let mut sessions = self.sessions.lock();
        if let Some(lock) = sessions.locks.get(key).and_then(Weak::upgrade) {
            return lock;
        }
        // Sweeping when the map doubled keeps the cost per call constant on average.
        if sessions.locks.len() >= sessions.sweep_at {
            sessions.locks.retain(|_, lock| lock.strong_count() > 0);
            sessions.sweep_at = (sessions.locks.len() * 2).max(64);
        }
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        sessions.locks.insert(key.clone(), Arc::downgrade(&lock));
        lock
    }

    /// How many sessions have a lock someone holds or waits for, after forgetting the others.
    pub fn sessions_in_use(&self) -> usize {
        let mut sessions = self.sessions.lock();
        sessions.locks.retain(|_, lock| lock.strong_count() > 0);
        sessions.locks.len()
    }
}

impl Default for LocalSessionLocks {
    fn default() -> Self {
        Self::new(DEFAULT_LOCK_WAIT)
    }
}

#[async_trait]
impl SessionLocks for LocalSessionLocks {
    async fn lock(&self, key: &SessionKey) -> Result<SessionLease, LockError> {
        let lock = self.lock_of(key);
        match tokio::time::timeout(self.wait, lock.lock_owned()).await {
            Ok(guard) => Ok(SessionLease::new(guard)),
            Err(_) => Err(LockError::Busy {
                session_id: key.session_id.to_string(),
                waited: self.wait,
            }),
        }
    }

    async fn check_ready(&self) -> Result<(), LockError> {
        Ok(())
    }
}
