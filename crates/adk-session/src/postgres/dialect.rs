//! The session store's [`Dialect`] for PostgreSQL: `$N` placeholders, the session's row locked
//! with `FOR UPDATE` in a write transaction, `REPEATABLE READ` snapshots for loads, times as UTC
//! `timestamp`s bound as epoch seconds, state merged with `jsonb ||`, and text made safe for
//! `jsonb` by the functions of `adk_rs_text.sql`.

use std::sync::Arc;

use adk_core::SessionKey;
use sqlx::pool::PoolConnection;
use sqlx::{Pool, Postgres};

use super::listener::{self, CancelListener};
use crate::cancel_signals::CancelBoard;
use crate::error::Result;
use crate::sql::dialect::{ByScope, Dialect, Statements};
use crate::sql::layout::Plan;

/// ADK Python's v1 tables, as its `DatabaseSessionService` creates them on PostgreSQL.
const ADK_PYTHON_V1: &str = include_str!("../../schema/postgres/adk_python_v1.sql");
/// The functions that make JSON text safe for `jsonb` (U+0000).
const ADK_RS_TEXT: &str = include_str!("../../schema/postgres/adk_rs_text.sql");
/// The session revision, event position and exact event text added to ADK Python's tables.
const ADK_RS_COLUMNS: &str = include_str!("../../schema/postgres/adk_rs_columns.sql");
/// adk-rs's index, trigger and table beside ADK Python's, and their version.
const ADK_RS_OBJECTS: &str = include_str!("../../schema/postgres/adk_rs_objects.sql");
/// Upgrading the first layout of adk-rs in place.
const LEGACY_UPGRADE: &str = include_str!("../../schema/postgres/legacy_upgrade.sql");
/// Upgrading adk-rs's additions from version 1 (which refused U+0000) to version 2.
const ADK_RS_V2: &str = include_str!("../../schema/postgres/adk_rs_v2.sql");
/// Version 3 of adk-rs's additions: the effect journal.
const ADK_RS_JOURNAL: &str = include_str!("../../schema/postgres/adk_rs_journal.sql");

/// A session's load (see `Statements::load_all`) in one statement, which reads one snapshot: the
/// session's row with its shared states (at position -1), then one row for each event `$events`
/// selects (a query of the same seven columns, the first the event's position, ordered by it).
/// Every column of both halves has the same type, so the halves are one `Append` read in turn;
/// an `ORDER BY` over both would sort every event again (on PostgreSQL 15, to disk from a few
/// thousand), where each half's own order costs nothing more than before. The store checks the
/// order as the rows come (see `RowParser`).
macro_rules! load {
    ($events:literal) => {
        concat!(
            "SELECT -1::bigint, state::text, revision, \
            extract(epoch FROM update_time)::float8, \
            (SELECT state::text FROM app_states WHERE app_name = $1), \
            (SELECT state::text FROM user_states WHERE app_name = $1 AND user_id = $2), \
            NULL::text FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3 \
            UNION ALL (",
            $events,
            ")"
        )
    };
}

impl Dialect for Postgres {
    const SQL: Statements = Statements {
        begin_read: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        // Writers lock the session's row (`lock_session`), so a plain transaction suffices.
        begin_write: "BEGIN",
        // Replicas starting together change the layout once; the others wait, then find it
        // ready. The lock is per schema and ends with the transaction.
        lock_layout: Some(
            "SELECT pg_advisory_xact_lock(hashtext('adk-rs sessions layout ' || current_schema()))",
        ),
        find_tables: "SELECT to_regclass('sessions') IS NOT NULL, \
            to_regclass('_sqlx_migrations') IS NOT NULL, \
            to_regclass('adk_internal_metadata') IS NOT NULL",
        read_metadata: "SELECT value FROM adk_internal_metadata WHERE key = $1",
        insert_session: "INSERT INTO sessions \
            (app_name, user_id, id, state, revision, create_time, update_time) \
            VALUES ($1, $2, $3, adk_jsonb_text($4)::jsonb, \
            coalesce((SELECT revision + 1 FROM deleted_sessions \
            WHERE app_name = $1 AND user_id = $2 AND id = $3), 0), \
            to_timestamp($5) AT TIME ZONE 'UTC', to_timestamp($5) AT TIME ZONE 'UTC') \
            RETURNING revision",
        select_sessions: "SELECT id, state::text, revision, \
            extract(epoch FROM update_time)::float8 FROM sessions \
            WHERE app_name = $1 AND user_id = $2 ORDER BY id",
        // The row lock makes a concurrent writer of this session wait until the commit; it then
        // reads the new revision and fails as stale. The state stays in the database.
        lock_session: "SELECT revision, NULL::text FROM sessions \
            WHERE app_name = $1 AND user_id = $2 AND id = $3 FOR UPDATE",
        insert_event: "INSERT INTO events (app_name, user_id, session_id, seq, id, invocation_id, \
            timestamp, event_data, exact_event_data) \
            VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7) AT TIME ZONE 'UTC', \
            adk_jsonb_text($8)::jsonb, adk_exact_json($8))",
        // The session's row is locked as it is checked: a concurrent writer of the session
        // waits for the commit, then finds the revision changed (the condition is checked again
        // on the row as committed) and inserts nothing.
        insert_event_at: "INSERT INTO events (app_name, user_id, session_id, seq, id, \
            invocation_id, timestamp, event_data, exact_event_data) \
            SELECT $1, $2, $3, $4, $5, $6, to_timestamp($7) AT TIME ZONE 'UTC', \
            adk_jsonb_text($8)::jsonb, adk_exact_json($8) FROM sessions \
            WHERE app_name = $1 AND user_id = $2 AND id = $3 AND revision = $9 FOR UPDATE",
        update_session: "UPDATE sessions SET revision = $4, \
            update_time = GREATEST(update_time, to_timestamp($5) AT TIME ZONE 'UTC'), \
            state = coalesce(state || adk_jsonb_text($6)::jsonb, state) \
            WHERE app_name = $1 AND user_id = $2 AND id = $3",
        // One statement: the row's lock makes the remembered revision its last one, so that a
        // re-created session starts after it. The events go with it (ON DELETE CASCADE).
        delete_session: &["WITH gone AS (DELETE FROM sessions \
            WHERE app_name = $1 AND user_id = $2 AND id = $3 \
            RETURNING app_name, user_id, id, revision) \
            INSERT INTO deleted_sessions (app_name, user_id, id, revision) \
            SELECT app_name, user_id, id, revision FROM gone \
            ON CONFLICT (app_name, user_id, id) \
            DO UPDATE SET revision = GREATEST(deleted_sessions.revision, excluded.revision)"],
        record_intent: "INSERT INTO adk_tool_journal (app_name, user_id, session_id, \
            function_call_id, invocation_id, tool_name, args_hash, attempts) \
            VALUES ($1, $2, $3, $4, $5, $6, $7, 1) \
            ON CONFLICT (app_name, user_id, session_id, function_call_id) \
            DO UPDATE SET attempts = adk_tool_journal.attempts + 1",
        complete_call: "UPDATE adk_tool_journal SET result_event_id = $4 \
            WHERE app_name = $1 AND user_id = $2 AND session_id = $3 \
            AND function_call_id = $5 AND result_event_id IS NULL",
        select_journal: "SELECT function_call_id, tool_name, args_hash, attempts, result_event_id \
            FROM adk_tool_journal WHERE app_name = $1 AND user_id = $2 \
            AND session_id = $3 AND invocation_id = $4 ORDER BY position",
        select_state: ByScope {
            app: "SELECT state::text FROM app_states WHERE app_name = $1",
            user: "SELECT state::text FROM user_states WHERE app_name = $1 AND user_id = $2",
        },
        select_shared: "SELECT (SELECT state::text FROM app_states WHERE app_name = $1), \
            (SELECT state::text FROM user_states WHERE app_name = $1 AND user_id = $2)",
        ensure_state: ByScope {
            app: "INSERT INTO app_states (app_name, state, update_time) \
                VALUES ($1, $2::jsonb, to_timestamp($3) AT TIME ZONE 'UTC') \
                ON CONFLICT (app_name) DO NOTHING",
            user: "INSERT INTO user_states (app_name, user_id, state, update_time) \
                VALUES ($1, $2, $3::jsonb, to_timestamp($4) AT TIME ZONE 'UTC') \
                ON CONFLICT (app_name, user_id) DO NOTHING",
        },
        // `jsonb ||` keeps the scope's other keys, so concurrent writers of different sessions
        // both keep theirs.
        upsert_state: ByScope {
            app: "INSERT INTO app_states (app_name, state, update_time) \
                VALUES ($1, adk_jsonb_text($2)::jsonb, to_timestamp($3) AT TIME ZONE 'UTC') \
                ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || EXCLUDED.state, \
                update_time = EXCLUDED.update_time",
            user: "INSERT INTO user_states (app_name, user_id, state, update_time) \
                VALUES ($1, $2, adk_jsonb_text($3)::jsonb, to_timestamp($4) AT TIME ZONE 'UTC') \
                ON CONFLICT (app_name, user_id) DO UPDATE SET \
                state = user_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time",
        },
        load_all: load!(
            "SELECT seq, NULL::text, NULL::bigint, NULL::float8, NULL::text, NULL::text, \
            coalesce(exact_event_data, event_data::text) FROM events \
            WHERE app_name = $1 AND user_id = $2 AND session_id = $3 ORDER BY seq"
        ),
        load_after: load!(
            "SELECT seq, NULL::text, NULL::bigint, NULL::float8, NULL::text, NULL::text, \
            coalesce(exact_event_data, event_data::text) FROM events \
            WHERE app_name = $1 AND user_id = $2 AND session_id = $3 \
            AND timestamp >= to_timestamp($4) AT TIME ZONE 'UTC' ORDER BY seq"
        ),
        load_recent: load!(
            "SELECT seq, NULL::text, NULL::bigint, NULL::float8, NULL::text, NULL::text, data \
            FROM (SELECT seq, coalesce(exact_event_data, event_data::text) AS data FROM events \
            WHERE app_name = $1 AND user_id = $2 AND session_id = $3 \
            AND timestamp >= to_timestamp($4) AT TIME ZONE 'UTC' \
            ORDER BY seq DESC LIMIT $5) AS recent ORDER BY seq"
        ),
    };
    const LAYOUT_VERSION: u32 = 3;
    const MERGES_STATE: bool = true;
    // Rows are fetched one per event and parsed in batches while the rest come:
    // `string_agg(… ORDER BY seq)` measured slower on 10,000 events (81 ms against 26 ms median;
    // the server sorts and copies the text again).
    const JOINS_EVENTS: bool = false;
    const TEXT_HOLDS_NUL: bool = false;

    type Time = f64;
    type Writer = ();
    type WriterGuard<'a> = PoolConnection<Postgres>;
    type CancelListener = CancelListener;

    fn time(seconds: f64) -> f64 {
        seconds
    }

    fn seconds(time: f64) -> Result<f64> {
        Ok(time)
    }

    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }

    async fn writer<'a>(
        _writer: &'a Self::Writer,
        pool: &'a Pool<Self>,
    ) -> sqlx::Result<Self::WriterGuard<'a>> {
        pool.acquire().await
    }

    fn try_writer(_writer: &Self::Writer) -> Option<Self::WriterGuard<'_>> {
        None
    }

    fn abandon_writer(writer: &mut PoolConnection<Postgres>) {
        writer.close_on_drop();
    }

    fn scripts(plan: Plan) -> &'static [&'static str] {
        match plan {
            Plan::Ready => &[],
            Plan::Create => &[
                ADK_PYTHON_V1,
                ADK_RS_TEXT,
                ADK_RS_COLUMNS,
                ADK_RS_OBJECTS,
                ADK_RS_JOURNAL,
            ],
            Plan::Adopt => &[ADK_RS_TEXT, ADK_RS_COLUMNS, ADK_RS_OBJECTS, ADK_RS_JOURNAL],
            Plan::UpgradeLegacy => &[ADK_RS_TEXT, LEGACY_UPGRADE, ADK_RS_OBJECTS, ADK_RS_JOURNAL],
            Plan::Upgrade(1) => &[ADK_RS_TEXT, ADK_RS_V2, ADK_RS_JOURNAL],
            Plan::Upgrade(_) => &[ADK_RS_JOURNAL],
        }
    }

    async fn announce_cancel(pool: &Pool<Self>, key: &SessionKey) -> Result<()> {
        listener::announce(pool, key).await
    }

    async fn listen_for_cancels(
        pool: &Pool<Self>,
        board: Arc<CancelBoard>,
    ) -> Result<CancelListener> {
        CancelListener::start(pool, board).await
    }
}
