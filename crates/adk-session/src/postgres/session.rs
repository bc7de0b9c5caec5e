//! [`PostgresSessionService`]: sessions in PostgreSQL, for several servers sharing one store.

use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres};

use crate::error::Error;
use crate::sql::store::SqlStore;

/// Sessions in a PostgreSQL database.
///
/// An append locks the session's row (`SELECT … FOR UPDATE`), checks its revision, and writes the
/// event and every scope's state delta (merged with `jsonb ||`) in one transaction; a concurrent
/// writer of the same session waits for the lock, then sees the new revision and fails as stale.
/// Loads read one `REPEATABLE READ` snapshot.
///
/// The tables are ADK Python's v1 layout (its `DatabaseSessionService` reads and appends to them)
/// with a session revision and an event position added; tables ADK Python made are adopted, and
/// those of adk-rs's first layout upgraded, when the service connects.
///
/// State and events are `jsonb`, which cannot hold the character U+0000. An event containing it
/// is stored whole beside its `jsonb` copy, which shows U+FFFD (the replacement character) in its
/// place, so adk-rs reads the event back exactly and ADK Python reads a valid one; in stored
/// state U+0000 becomes U+FFFD.
#[derive(Debug, Clone)]
pub struct PostgresSessionService {
    store: Arc<SqlStore<Postgres>>,
}

impl PostgresSessionService {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`) and
    /// brings its session tables up to date.
    pub async fn connect(url: &str) -> adk_core::Result<Self> {
        let options: PgConnectOptions = url
            .parse()
            .map_err(|error| Error::storage("reading the PostgreSQL URL", error).into_session())?;
        Self::connect_with(options).await
    }

    /// Connects with `options` (to set a schema through `search_path`, say) and brings its
    /// session tables up to date.
    pub async fn connect_with(options: PgConnectOptions) -> adk_core::Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .map_err(|error| Error::storage("connecting to PostgreSQL", error).into_session())?;
        Self::from_pool(pool).await
    }

    /// Uses `pool` and brings its session tables up to date.
    pub async fn from_pool(pool: PgPool) -> adk_core::Result<Self> {
        let what = "preparing the PostgreSQL session tables";
        let mut conn = pool
            .acquire()
            .await
            .map_err(|error| Error::storage(what, error).into_session())?;
        SqlStore::<Postgres>::prepare(&mut conn, what)
            .await
            .map_err(Error::into_session)?;
        drop(conn);
        Ok(Self {
            store: Arc::new(SqlStore::new(pool, ())),
        })
    }

    /// Closes the connections, waiting for work in progress.
    pub async fn close(&self) {
        self.store.close().await;
    }
}

crate::boundary::session_service!(PostgresSessionService, store);
