//! [`Dialect`]: what the session store needs of a SQL database that differs from one database to
//! another. The store itself (`SqlStore`, in the sibling module `store`) is written once over it,
//! so this module names no part of the store.

use std::fmt::Debug;
use std::ops::DerefMut;
use std::sync::Arc;

use adk_core::SessionKey;

use sqlx::{Database, Decode, Encode, Pool, Type};

use super::layout::Plan;
use crate::cancel_signals::CancelBoard;
use crate::error::Result;

/// A database the SQL session store runs on, implemented for sqlx's `Sqlite` and `Postgres`: its
/// statements, how a write transaction keeps other writers out, how times are stored, and how its
/// layout is brought up to date.
pub(crate) trait Dialect: Database {
    /// The store's statements in this database's SQL.
    const SQL: Statements;
    /// The version of adk-rs's additions (`adk_rs_schema_version`) this build writes.
    const LAYOUT_VERSION: u32;
    /// Whether a state delta is merged inside the database (PostgreSQL's `jsonb ||`), so only
    /// the delta is sent; otherwise a writer reads the state, sets the delta's keys, and writes the
    /// whole state back (under its write transaction, which keeps other writers out).
    const MERGES_STATE: bool;
    /// Whether a load's events come back from the database joined into one string (SQLite's
    /// `group_concat`); otherwise one row per event, parsed as the rows come.
    const JOINS_EVENTS: bool;
    /// Whether the database's text can hold U+0000 (PostgreSQL's cannot).
    const TEXT_HOLDS_NUL: bool;

    /// A point in time as the database binds and returns it.
    type Time: for<'q> Encode<'q, Self>
        + for<'r> Decode<'r, Self>
        + Type<Self>
        + Clone
        + Send
        + Sync
        + Unpin
        + 'static;
    /// What the store keeps to write with: the one writer connection (SQLite), or nothing when
    /// writers take any connection of the pool (PostgreSQL).
    type Writer: Debug + Send + Sync + 'static;
    /// A connection held by one writer for its transaction.
    type WriterGuard<'a>: DerefMut<Target = Self::Connection> + Send
    where
        Self: 'a;

    /// `seconds` since the Unix epoch as the database stores a time.
    fn time(seconds: f64) -> Self::Time;

    /// A stored time as seconds since the Unix epoch.
    fn seconds(time: Self::Time) -> Result<f64>;

    /// How many rows a write statement changed.
    fn rows_affected(done: &Self::QueryResult) -> u64;

    /// Waits for a connection to write with.
    fn writer<'a>(
        writer: &'a Self::Writer,
        pool: &'a Pool<Self>,
    ) -> impl Future<Output = sqlx::Result<Self::WriterGuard<'a>>> + Send;

    /// The connection to write with when nobody holds it, without waiting; `None` when it is
    /// held, or when writers take a pooled connection (which needs waiting).
    fn try_writer(writer: &Self::Writer) -> Option<Self::WriterGuard<'_>>;

    /// Marks a writer's connection to be closed rather than reused: the future beginning its
    /// transaction was dropped before the `BEGIN` was answered (see [`super::begin`]).
    fn abandon_writer(writer: &mut Self::WriterGuard<'_>);

    /// The scripts that carry out `plan`, in order, in one transaction.
    fn scripts(plan: Plan) -> &'static [&'static str];

    /// What keeps other processes' cancel announcements coming into this one while it lives
    /// (PostgreSQL's listening connection); `()` where only this process's requests are heard.
    type CancelListener: Debug + Send + Sync + 'static;

    /// Tells the other processes sharing the database that someone asked to cancel an
    /// invocation of session `key` (nothing where none can run it: SQLite's sessions are locked
    /// in one process).
    fn announce_cancel(
        pool: &Pool<Self>,
        key: &SessionKey,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Starts hearing the other processes' announcements, handing them to `board`.
    fn listen_for_cancels(
        pool: &Pool<Self>,
        board: Arc<CancelBoard>,
    ) -> impl Future<Output = Result<Self::CancelListener>> + Send;
}

/// The statements of the session store. Each says what it binds, in order; the two databases
/// differ in placeholders, types and locking, never in what is bound.
pub(crate) struct Statements {
    /// Starts a read transaction: every read of a listing sees one snapshot. (A load is one
    /// statement, which reads one snapshot on its own.)
    pub(crate) begin_read: &'static str,
    /// Starts a write transaction.
    pub(crate) begin_write: &'static str,
    /// Run first in the transaction that prepares the layout, when `begin_write` alone does not
    /// keep other processes preparing it out.
    pub(crate) lock_layout: Option<&'static str>,
    /// Whether the tables `sessions`, `_sqlx_migrations` and `adk_internal_metadata` exist.
    pub(crate) find_tables: &'static str,
    /// Binds a key of `adk_internal_metadata`; returns its value.
    pub(crate) read_metadata: &'static str,
    /// Binds app, user, session id, state and time; returns the new session's revision, one past
    /// a deleted session's of the same id.
    pub(crate) insert_session: &'static str,
    /// Binds app and user; returns id, state, revision and update time of each session, by id.
    pub(crate) select_sessions: &'static str,
    /// Binds app, user and session id; returns the revision and, unless the database merges
    /// state itself, the state, so that no other writer can change them before the commit.
    pub(crate) lock_session: &'static str,
    /// Binds app, user, session id, position, event id, invocation id, time and the event's JSON.
    pub(crate) insert_event: &'static str,
    /// Binds as `insert_event`, then the revision the session must be at: inserts the event only
    /// if the session is at it (no row when it is missing or at another revision), keeping other
    /// writers of the session out until the commit as `lock_session` does. It checks and writes
    /// in one statement, for an append that reads no state to merge first (all of them where
    /// the database merges state).
    pub(crate) insert_event_at: &'static str,
    /// Binds app, user, session id, revision, time and the session's new state (its delta where
    /// the database merges state; null when unchanged).
    pub(crate) update_session: &'static str,
    /// Each binds app, user and session id: the last revision is remembered and the session
    /// deleted with its events.
    pub(crate) delete_session: &'static [&'static str],
    /// Binds app, user, session id, function call id, invocation id, tool name and arguments
    /// hash: records a call's intent with one attempt, or one more attempt of a recorded call.
    pub(crate) record_intent: &'static str,
    /// Binds app, user, session id, event id and function call id: the call's result is in the
    /// event (a call completed before keeps its first result).
    pub(crate) complete_call: &'static str,
    /// Binds app, user, session id and invocation id; returns function call id, tool name,
    /// arguments hash, attempts and result event id of each call, in the order first recorded.
    pub(crate) select_journal: &'static str,
    /// Bind app (and user); return the scope's state.
    pub(crate) select_state: ByScope,
    /// Binds app and user; returns the app's state and the user's (null where never set).
    pub(crate) select_shared: &'static str,
    /// Bind app (and user), state and time: the scope's row is created if missing.
    pub(crate) ensure_state: ByScope,
    /// Bind app (and user), state (the delta where the database merges state) and time.
    pub(crate) upsert_state: ByScope,
    /// A session's load in one statement, which reads one snapshot without a transaction of
    /// ours. Each returns no row when the session is missing; otherwise rows of seven columns:
    /// position, state, revision, update time, app state, user state, event. The session's row
    /// has the state, revision, update time and shared states set; where the database joins a
    /// load's events (see [`Dialect::JOINS_EVENTS`]) it is the only row and its last column holds
    /// them all, oldest first; otherwise each event comes in a row of its own with its position,
    /// oldest first, after the session's. Each binds app, user and session id; `load_after` then
    /// the earliest time; `load_recent` the earliest time and how many.
    pub(crate) load_all: &'static str,
    pub(crate) load_after: &'static str,
    pub(crate) load_recent: &'static str,
}

/// One statement for each scope shared between sessions.
pub(crate) struct ByScope {
    pub(crate) app: &'static str,
    pub(crate) user: &'static str,
}

/// A scope shared between sessions.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shared {
    App,
    User,
}

impl ByScope {
    /// The statement for `scope`.
    pub(crate) fn of(&self, scope: Shared) -> &'static str {
        match scope {
            Shared::App => self.app,
            Shared::User => self.user,
        }
    }
}
