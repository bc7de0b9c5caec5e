//! [`PostgresSessionLocks`]: per-session locks shared by every replica of a server, as PostgreSQL
//! advisory locks; and [`PostgresSettings`], the connection settings of the replicas' pools.

use std::time::Duration;

use adk_core::SessionKey;
use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};

use super::{DEFAULT_LOCK_WAIT, LockError, SessionLease, SessionLocks};
use crate::PostgresSessionService;
use crate::error::Error;

/// PostgreSQL's error code for a lock not taken within `lock_timeout`.
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// The default number of connections of the session pool: 8.
pub const DEFAULT_POOL_SIZE: u32 = 8;

/// The default wait for a free pooled connection: 10 seconds. A request that waited this long
/// is answered 503 with `Retry-After` (see [`is_pool_exhausted`](crate::is_pool_exhausted)).
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a replica connects to PostgreSQL: the URL, the size of the session pool, the statement
/// timeout and the wait for a free connection.
///
/// The URL's own parameters pass through to the driver (`sslmode`, `options[...]` and so on);
/// [`statement_timeout`](Self::statement_timeout) is sent as the session setting of the same name.
///
/// ```no_run
/// # async fn open() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use adk_session::PostgresSettings;
///
/// let settings = PostgresSettings::new("postgres://adk:secret@db:5432/adk")
///     .max_connections(16)
///     .statement_timeout(Duration::from_secs(5));
/// let sessions = settings.connect_sessions().await?;
/// let locks = settings.connect_locks(32, Duration::from_secs(10)).await?;
/// # let _ = (sessions, locks); Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresSettings {
    url: String,
    max_connections: u32,
    statement_timeout: Option<Duration>,
    acquire_timeout: Duration,
}

impl PostgresSettings {
    /// The settings for the database at `url`, with the default pool size and waits and no
    /// statement timeout.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: DEFAULT_POOL_SIZE,
            statement_timeout: None,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
        }
    }

    /// How many connections the session pool opens at most.
    pub fn max_connections(mut self, connections: u32) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// The longest a statement of the session store may run before the database cancels it.
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = Some(timeout);
        self
    }

    /// How long taking a pooled connection waits before it fails (the pool is full).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }

    fn options(&self) -> Result<PgConnectOptions, sqlx::Error> {
        self.url.parse()
    }

    /// Connects the session store with these settings and applies its migrations.
    pub async fn connect_sessions(&self) -> adk_core::Result<PostgresSessionService> {
        let what = "connecting the PostgreSQL session pool";
        let mut options = self
            .options()
            .map_err(|error| Error::storage(what, error).into_session())?;
        if let Some(timeout) = self.statement_timeout {
            options =
                options.options([("statement_timeout", format!("{}ms", timeout.as_millis()))]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(self.max_connections)
            .acquire_timeout(self.acquire_timeout)
            .connect_with(options)
            .await
            .map_err(|error| Error::storage(what, error).into_session())?;
        PostgresSessionService::from_pool(pool).await
    }

    /// Connects a pool of `max_held + 1` connections for session locks (one per lock held, one for
    /// the readiness probe) whose locks wait at most `wait` for a busy session. The statement
    /// timeout does not apply to it: waiting for a lock is what its statements do.
    pub async fn connect_locks(
        &self,
        max_held: u32,
        wait: Duration,
    ) -> Result<PostgresSessionLocks, LockError> {
        let options = self.options().map_err(unavailable)?;
        let pool = PgPoolOptions::new()
            .max_connections(max_held.saturating_add(1))
            .acquire_timeout(self.acquire_timeout)
            .connect_with(options)
            .await
            .map_err(unavailable)?;
        Ok(PostgresSessionLocks::new(pool, wait))
    }
}

impl std::fmt::Debug for PostgresSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password.
        f.debug_struct("PostgresSettings")
            .field("max_connections", &self.max_connections)
            .field("statement_timeout", &self.statement_timeout)
            .field("acquire_timeout", &self.acquire_timeout)
            .finish_non_exhaustive()
    }
}

/// Session locks for replicas sharing one PostgreSQL database.
///
/// A lease is a transaction on a pooled connection holding the transaction-level advisory lock
/// `pg_advisory_xact_lock(hashtextextended(<app, user, session>, 0))`, taken with `lock_timeout`
/// set to the wait limit. Dropping the lease rolls the transaction back, which releases the lock;
/// when a replica dies, the database closes its connections and releases its locks with them, so a
/// killed replica never leaves a session locked. Two sessions whose names hash alike merely share a
/// lock.
#[derive(Debug, Clone)]
pub struct PostgresSessionLocks {
    pool: PgPool,
    wait: Duration,
}

impl PostgresSessionLocks {
    /// Locks held on connections of `pool`, waiting at most `wait` for a busy session. Size the
    /// pool for one connection per invocation running at once, plus one for
    /// [`check_ready`](SessionLocks::check_ready).
    pub fn new(pool: PgPool, wait: Duration) -> Self {
        Self { pool, wait }
    }

    /// Locks on `pool` with the default wait.
    pub fn with_default_wait(pool: PgPool) -> Self {
        Self::new(pool, DEFAULT_LOCK_WAIT)
    }

    /// Closes the pool's connections once every lease is dropped; locks are taken no more.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>, LockError> {
        self.pool.begin().await.map_err(|error| match error {
            sqlx::Error::PoolTimedOut => LockError::Saturated {
                waited: self.pool.options().get_acquire_timeout(),
            },
            error => unavailable(error),
        })
    }
}

/// The lock's name: each part prefixed by its length, so that no two keys spell the same name.
fn lock_name(key: &SessionKey) -> String {
    let (app, user, session) = (&key.app_name, &key.user_id, key.session_id.as_str());
    format!(
        "adk-session:{}:{app}:{}:{user}:{}:{session}",
        app.len(),
        user.len(),
        session.len()
    )
}

fn unavailable(error: sqlx::Error) -> LockError {
    LockError::Unavailable {
        source: Box::new(error),
    }
}

#[async_trait]
impl SessionLocks for PostgresSessionLocks {
    async fn lock(&self, key: &SessionKey) -> Result<SessionLease, LockError> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT set_config('lock_timeout', $1, true)")
            .bind(format!("{}ms", self.wait.as_millis().max(1)))
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        let locked = sqlx::query("SELECT 1 FROM pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(lock_name(key))
            .execute(&mut *tx)
            .await;
        match locked {
            Ok(_) => Ok(SessionLease::new(tx)),
            Err(sqlx::Error::Database(error))
                if error.code().as_deref() == Some(LOCK_NOT_AVAILABLE) =>
            {
                Err(LockError::Busy {
                    session_id: key.session_id.to_string(),
                    waited: self.wait,
                })
            }
            Err(error) => Err(unavailable(error)),
        }
    }

    async fn check_ready(&self) -> Result<(), LockError> {
        let mut connection = self.pool.acquire().await.map_err(unavailable)?;
        sqlx::query("SELECT 1")
            .execute(&mut *connection)
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_names_of_different_keys_differ() {
        let one = SessionKey::new("a:1", "b", "c");
        let other = SessionKey::new("a", "1:b", "c");
        assert_ne!(lock_name(&one), lock_name(&other));
        assert_eq!(lock_name(&one), "adk-session:3:a:1:1:b:1:c");
    }
}
