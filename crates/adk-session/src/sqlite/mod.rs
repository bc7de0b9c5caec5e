//! SQLite backends through sqlx: sessions and FTS5 memory, in one database file or several.
//!
//! Opening a database brings it to the current layout (ADK Python's v1 tables with adk-rs's
//! additions, see [`crate::sql::layout`]) and sets WAL journaling with
//! `synchronous = NORMAL`: a commit survives the process being killed at any moment; only a power
//! loss or an OS crash may lose the last commits (never corrupt the file).

mod dialect;
mod memory;
mod session;
mod time;

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool};

pub use memory::SqliteMemoryService;
pub use session::SqliteSessionService;

use crate::error::{Error, Result};
use crate::sql::store::SqlStore;

/// How long a writer waits for another process's write transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of the database file each connection maps into memory, in bytes.
const MMAP_SIZE: u64 = 256 << 20;
/// The page cache of each connection, in KiB when negative (SQLite's convention): 16 MiB.
const CACHE_SIZE: i64 = -16 * 1024;

/// Opens (creating when missing) the database at `path` and brings its schema up to date.
pub(crate) async fn open_pool(path: &Path) -> Result<SqlitePool> {
    let what = || format!("opening the SQLite database {}", path.display());
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
        // Reading long sessions through a memory map and a larger page cache is several times
        // faster than page-by-page reads (measured on 10,000-event sessions).
        .pragma("mmap_size", MMAP_SIZE.to_string())
        .pragma("cache_size", CACHE_SIZE.to_string());
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        // A connection to a local file does not go stale, and the check is one more trip to the
        // connection's thread at every read (a tenth of the server's CPU under many runs).
        .test_before_acquire(false)
        .connect_with(options)
        .await
        .map_err(|error| Error::storage(what(), error))?;
    let mut conn = pool
        .acquire()
        .await
        .map_err(|error| Error::storage(what(), error))?;
    SqlStore::<Sqlite>::prepare(&mut conn, &what()).await?;
    Ok(pool)
}
