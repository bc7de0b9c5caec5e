//! The session store's [`Dialect`] for SQLite: `?N` placeholders, `BEGIN IMMEDIATE` write
//! transactions on one writer connection, times as ADK Python's `DATETIME` text, state merged by
//! the writer, and a load's events joined by `group_concat`.

use std::sync::Arc;

use adk_core::SessionKey;
use sqlx::{Pool, Sqlite, SqliteConnection};

use super::time;
use crate::cancel_signals::CancelBoard;
use crate::error::Result;
use crate::sql::dialect::{ByScope, Dialect, Statements};
use crate::sql::layout::Plan;

/// ADK Python's v1 tables, as its `DatabaseSessionService` creates them on SQLite.
const ADK_PYTHON_V1: &str = include_str!("../../schema/sqlite/adk_python_v1.sql");
/// The session revision and event position added to ADK Python's tables.
const ADK_RS_COLUMNS: &str = include_str!("../../schema/sqlite/adk_rs_columns.sql");
/// adk-rs's indexes, trigger and tables beside ADK Python's, and their version.
const ADK_RS_OBJECTS: &str = include_str!("../../schema/sqlite/adk_rs_objects.sql");
/// Upgrading the first layout of adk-rs: its tables set aside under other names.
const LEGACY_SET_ASIDE: &str = include_str!("../../schema/sqlite/legacy_set_aside.sql");
/// Upgrading the first layout of adk-rs: its rows copied into the new tables.
const LEGACY_COPY: &str = include_str!("../../schema/sqlite/legacy_copy.sql");
/// Version 2 of adk-rs's additions: the effect journal.
const ADK_RS_JOURNAL: &str = include_str!("../../schema/sqlite/adk_rs_journal.sql");

/// A session's load (see `Statements::load_all`): its row, its shared states and the events
/// `$events` selects (a query of `event_data`, oldest first) joined, read in one statement (no
/// position: there are no event rows). A statement of SQLite reads one snapshot, from its first
/// step to its last.
macro_rules! load {
    ($events:literal) => {
        concat!(
            "SELECT NULL, state, revision, update_time, \
            (SELECT state FROM app_states WHERE app_name = ?1), \
            (SELECT state FROM user_states WHERE app_name = ?1 AND user_id = ?2), \
            (SELECT group_concat(event_data, char(10)) FROM (",
            $events,
            ")) FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3"
        )
    };
}

impl Dialect for Sqlite {
    const SQL: Statements = Statements {
        // A deferred read transaction reads one WAL snapshot from its first read on.
        begin_read: "BEGIN",
        // BEGIN IMMEDIATE takes the database's write lock at once, so what the writer reads
        // under it cannot change before the commit, whichever process writes.
        begin_write: "BEGIN IMMEDIATE",
        lock_layout: None,
        find_tables: "SELECT \
            EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'), \
            EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'), \
            EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'adk_internal_metadata')",
        read_metadata: "SELECT value FROM adk_internal_metadata WHERE \"key\" = ?1",
        insert_session: "INSERT INTO sessions \
            (app_name, user_id, id, state, revision, create_time, update_time) \
            VALUES (?1, ?2, ?3, ?4, coalesce((SELECT revision + 1 FROM deleted_sessions \
            WHERE app_name = ?1 AND user_id = ?2 AND id = ?3), 0), ?5, ?5) RETURNING revision",
        select_sessions: "SELECT id, state, revision, update_time FROM sessions \
            WHERE app_name = ?1 AND user_id = ?2 ORDER BY id",
        lock_session: "SELECT revision, state FROM sessions \
            WHERE app_name = ?1 AND user_id = ?2 AND id = ?3",
        insert_event: "INSERT INTO events \
            (app_name, user_id, session_id, seq, id, invocation_id, timestamp, event_data) \
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        // Under `BEGIN IMMEDIATE` nothing else writes until the commit.
        insert_event_at: "INSERT INTO events \
            (app_name, user_id, session_id, seq, id, invocation_id, timestamp, event_data) \
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM sessions \
            WHERE app_name = ?1 AND user_id = ?2 AND id = ?3 AND revision = ?9)",
        update_session: "UPDATE sessions SET revision = ?4, update_time = max(update_time, ?5), \
            state = coalesce(?6, state) WHERE app_name = ?1 AND user_id = ?2 AND id = ?3",
        delete_session: &[
            // Its last revision is remembered, so that a re-created session starts after it.
            "INSERT INTO deleted_sessions (app_name, user_id, id, revision) \
             SELECT app_name, user_id, id, revision FROM sessions \
             WHERE app_name = ?1 AND user_id = ?2 AND id = ?3 \
             ON CONFLICT (app_name, user_id, id) \
             DO UPDATE SET revision = max(revision, excluded.revision)",
            // The events go with it (ON DELETE CASCADE).
            "DELETE FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3",
        ],
        record_intent: "INSERT INTO adk_tool_journal (app_name, user_id, session_id, \
            function_call_id, invocation_id, tool_name, args_hash, attempts) \
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1) \
            ON CONFLICT (app_name, user_id, session_id, function_call_id) \
            DO UPDATE SET attempts = adk_tool_journal.attempts + 1",
        complete_call: "UPDATE adk_tool_journal SET result_event_id = ?4 \
            WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 \
            AND function_call_id = ?5 AND result_event_id IS NULL",
        select_journal: "SELECT function_call_id, tool_name, args_hash, attempts, result_event_id \
            FROM adk_tool_journal WHERE app_name = ?1 AND user_id = ?2 \
            AND session_id = ?3 AND invocation_id = ?4 ORDER BY rowid",
        select_state: ByScope {
            app: "SELECT state FROM app_states WHERE app_name = ?1",
            user: "SELECT state FROM user_states WHERE app_name = ?1 AND user_id = ?2",
        },
        select_shared: "SELECT (SELECT state FROM app_states WHERE app_name = ?1), \
            (SELECT state FROM user_states WHERE app_name = ?1 AND user_id = ?2)",
        ensure_state: ByScope {
            app: "INSERT INTO app_states (app_name, state, update_time) VALUES (?1, ?2, ?3) \
                ON CONFLICT (app_name) DO NOTHING",
            user: "INSERT INTO user_states (app_name, user_id, state, update_time) \
                VALUES (?1, ?2, ?3, ?4) ON CONFLICT (app_name, user_id) DO NOTHING",
        },
        upsert_state: ByScope {
            app: "INSERT INTO app_states (app_name, state, update_time) VALUES (?1, ?2, ?3) \
                ON CONFLICT (app_name) DO UPDATE SET state = excluded.state, \
                update_time = excluded.update_time",
            user: "INSERT INTO user_states (app_name, user_id, state, update_time) \
                VALUES (?1, ?2, ?3, ?4) ON CONFLICT (app_name, user_id) DO UPDATE SET \
                state = excluded.state, update_time = excluded.update_time",
        },
        // The order comes from the innermost subquery's `ORDER BY`: SQLite never flattens an
        // ordered subquery into an aggregate, and it is several times cheaper than
        // `group_concat(… ORDER BY seq)`, which sorts the rows again.
        load_all: load!(
            "SELECT event_data FROM events \
            WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 ORDER BY seq"
        ),
        load_after: load!(
            "SELECT event_data FROM events \
            WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 AND timestamp >= ?4 \
            ORDER BY seq"
        ),
        load_recent: load!(
            "SELECT seq, event_data FROM ( \
            SELECT seq, event_data FROM events \
            WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 AND timestamp >= ?4 \
            ORDER BY seq DESC LIMIT ?5) ORDER BY seq"
        ),
    };
    const LAYOUT_VERSION: u32 = 2;
    const MERGES_STATE: bool = false;
    // One string per session instead of one row per event makes loading long sessions several
    // times faster.
    const JOINS_EVENTS: bool = true;
    const TEXT_HOLDS_NUL: bool = true;

    type Time = String;
    type Writer = Arc<tokio::sync::Mutex<SqliteConnection>>;
    type CancelListener = ();
    type WriterGuard<'a> = tokio::sync::MutexGuard<'a, SqliteConnection>;

    fn time(seconds: f64) -> String {
        time::to_text(seconds)
    }

    fn seconds(time: String) -> Result<f64> {
        time::from_text(&time)
    }

    fn rows_affected(done: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        done.rows_affected()
    }

    /// Writes of one process queue for the one warm writer connection (no busy-waiting between
    /// connections of the same process).
    async fn writer<'a>(
        writer: &'a Self::Writer,
        _pool: &'a Pool<Self>,
    ) -> sqlx::Result<Self::WriterGuard<'a>> {
        Ok(writer.lock().await)
    }

    fn try_writer(writer: &Self::Writer) -> Option<Self::WriterGuard<'_>> {
        writer.try_lock().ok()
    }

    /// Nothing to do: sqlx's SQLite worker counts the transaction as it runs `BEGIN`, so a
    /// dropped `BEGIN` is rolled back by the transaction's own guard.
    fn abandon_writer(_writer: &mut tokio::sync::MutexGuard<'_, SqliteConnection>) {}

    fn scripts(plan: Plan) -> &'static [&'static str] {
        match plan {
            Plan::Ready => &[],
            Plan::Create => &[
                ADK_PYTHON_V1,
                ADK_RS_COLUMNS,
                ADK_RS_OBJECTS,
                ADK_RS_JOURNAL,
            ],
            Plan::Adopt => &[ADK_RS_COLUMNS, ADK_RS_OBJECTS, ADK_RS_JOURNAL],
            Plan::UpgradeLegacy => &[
                LEGACY_SET_ASIDE,
                ADK_PYTHON_V1,
                ADK_RS_COLUMNS,
                LEGACY_COPY,
                ADK_RS_OBJECTS,
                ADK_RS_JOURNAL,
            ],
            // Version 1 is the only older one.
            Plan::Upgrade(_) => &[ADK_RS_JOURNAL],
        }
    }

    /// Nothing to tell: a session's runs are locked in one process (SQLite's session locks are
    /// the process's own), which hears its own requests.
    async fn announce_cancel(_pool: &Pool<Self>, _key: &SessionKey) -> Result<()> {
        Ok(())
    }

    async fn listen_for_cancels(_pool: &Pool<Self>, _board: Arc<CancelBoard>) -> Result<()> {
        Ok(())
    }
}
