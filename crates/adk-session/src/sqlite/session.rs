//! [`SqliteSessionService`]: sessions in a SQLite file.

use std::path::Path;
use std::sync::Arc;

use sqlx::{Sqlite, SqlitePool};

use crate::error::Error;
use crate::sql::appends::AppendQueue;
use crate::sql::store::SqlStore;

/// Sessions in a SQLite database file: the embedded default.
///
/// The file has ADK Python's v1 layout (its `DatabaseSessionService` reads and appends to it)
/// with a session revision and an event position added; a file ADK Python made is adopted, and
/// one of adk-rs's first layout is upgraded, when it is opened.
///
/// Writes of one process queue for one warm connection behind an async mutex and run as
/// `BEGIN IMMEDIATE` transactions, so two writers (of this process or another) can never both pass
/// the revision check; appends that wait together are committed in one transaction, each in a
/// savepoint of its own; reads run concurrently from a pool, on WAL snapshots.
#[derive(Debug)]
pub struct SqliteSessionService {
    store: SqlStore<Sqlite>,
}

impl SqliteSessionService {
    /// Opens the database at `path`, creating it when missing, and brings its layout up to date.
    pub async fn open(path: impl AsRef<Path>) -> adk_core::Result<Self> {
        let pool: SqlitePool = super::open_pool(path.as_ref())
            .await
            .map_err(Error::into_session)?;
        let writer = pool
            .acquire()
            .await
            .map_err(|error| Error::storage("opening the writer connection", error).into_session())?
            .detach();
        let writer = Arc::new(tokio::sync::Mutex::new(writer));
        // Appends are committed in groups by a task of their own, which ends when the service
        // (and with it the queue) is dropped.
        let (appends, waiters) = AppendQueue::new();
        tokio::spawn(SqlStore::write_groups(
            waiters,
            writer.clone(),
            pool.clone(),
        ));
        Ok(Self {
            store: SqlStore::with_appends(pool, writer, appends),
        })
    }

    /// Closes the reading connections, waiting for work in progress (the writer connection
    /// closes when the service is dropped).
    pub async fn close(&self) {
        self.store.close().await;
    }
}

crate::boundary::session_service!(SqliteSessionService, store);
