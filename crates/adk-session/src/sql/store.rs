//! [`SqlStore`]: the session store of every SQL database, written once over its [`Dialect`].

use std::sync::Arc;

use adk_core::{
    CancelSignals, CreateSessionRequest, Event, GetSessionRequest, IdGen, InvocationId,
    JournalEntry, ScopedState, Session, SessionKey, ToolIntent, UuidIdGen,
};
use futures::TryStreamExt as _;
use serde_json::{Map, Value};
use sqlx::pool::PoolConnection;
use sqlx::query::QueryAs;
use sqlx::{
    Arguments, ColumnIndex, Connection, Decode, Encode, Executor, IntoArguments, Pool, Type,
};
use sqlx::{SqlSafeStr, SqlStr};
use tokio::sync::oneshot;

use super::appends::{AppendQueue, MAX_GROUP, Waiters, Waiting};
use super::begin::Beginning;
use super::dialect::{Dialect, Shared};
use super::layout::{ADK_RS_VERSION_KEY, Found, PYTHON_VERSION_KEY};
use super::{EventFilter, RowParser, event_json, is_unique_violation, parse_events};
use super::{parse_state, state_json};
use crate::cancel_signals::CancelBoard;
use crate::error::{Error, Result};
use crate::scoped::{apply_delta, completed_calls, merged_state, now, split_delta, stored_event};

/// Sessions in ADK Python's v1 tables with adk-rs's additions, in the database of dialect `D`.
///
/// Every write is one transaction that keeps other writers of the session out until it commits
/// (the dialect's write transaction or row lock), so the revision it checks cannot change under
/// it; every load reads one snapshot.
#[derive(Debug)]
pub(crate) struct SqlStore<D: Dialect> {
    pool: Pool<D>,
    writer: D::Writer,
    /// Where appends wait to be committed in groups, when the store groups them.
    appends: Option<AppendQueue<Append<D>>>,
    /// The runs of this process waiting to hear of cancel requests.
    cancels: Arc<CancelBoard>,
    /// What brings other processes' cancel requests, started with the first subscriber.
    listener: tokio::sync::OnceCell<D::CancelListener>,
}

/// The app and user states of a session's shared scopes.
type SharedStates = (Map<String, Value>, Map<String, Value>);

impl<D: Dialect> SqlStore<D>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    D::Arguments: IntoArguments<D>,
    for<'q> &'q str: Encode<'q, D> + Type<D>,
    String: for<'q> Encode<'q, D> + for<'r> Decode<'r, D> + Type<D>,
    i64: for<'q> Encode<'q, D> + for<'r> Decode<'r, D> + Type<D>,
    Option<String>: for<'q> Encode<'q, D>,
    bool: for<'r> Decode<'r, D> + Type<D>,
    usize: ColumnIndex<D::Row>,
{
    /// A store reading from `pool` and writing through `writer`.
    #[cfg_attr(
        not(feature = "postgres"),
        allow(dead_code, reason = "SQLite's store groups its appends")
    )]
    pub(crate) fn new(pool: Pool<D>, writer: D::Writer) -> Self {
        Self {
            pool,
            writer,
            appends: None,
            cancels: Arc::default(),
            listener: tokio::sync::OnceCell::new(),
        }
    }

    /// A store whose appends wait in `appends` to be committed in groups.
    #[cfg_attr(
        not(feature = "sqlite"),
        allow(dead_code, reason = "only SQLite groups appends")
    )]
    pub(crate) fn with_appends(
        pool: Pool<D>,
        writer: D::Writer,
        appends: AppendQueue<Append<D>>,
    ) -> Self {
        Self {
            pool,
            writer,
            appends: Some(appends),
            cancels: Arc::default(),
            listener: tokio::sync::OnceCell::new(),
        }
    }

    /// Closes the pool's connections, waiting for work in progress.
    pub(crate) async fn close(&self) {
        self.pool.close().await;
    }

    /// Brings the database behind `conn` to the current layout (see [`super::layout`]) in one
    /// write transaction, so that two processes opening one new database cannot both create it.
    pub(crate) async fn prepare(conn: &mut D::Connection, what: &str) -> Result<()> {
        let storage = |error| Error::storage(format!("{what} (schema)"), error);
        let mut tx = conn
            .begin_with(sql(D::SQL.begin_write))
            .await
            .map_err(storage)?;
        if let Some(lock) = D::SQL.lock_layout {
            sqlx::query(sql(lock))
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        let found = Self::inspect(&mut tx).await.map_err(storage)?;
        for &script in D::scripts(found.plan(D::LAYOUT_VERSION)?) {
            sqlx::raw_sql(sql(script))
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)
    }

    /// What the database holds.
    async fn inspect(conn: &mut D::Connection) -> sqlx::Result<Found> {
        let (sessions, sqlx_migrations, metadata): (bool, bool, bool) =
            sqlx::query_as(sql(D::SQL.find_tables))
                .fetch_one(&mut *conn)
                .await?;
        let mut found = Found {
            sessions,
            sqlx_migrations,
            ..Found::default()
        };
        if metadata {
            let read = |key: &'static str| {
                sqlx::query_scalar::<D, String>(sql(D::SQL.read_metadata)).bind(key)
            };
            let python = read(PYTHON_VERSION_KEY).fetch_optional(&mut *conn).await?;
            let adk_rs = read(ADK_RS_VERSION_KEY).fetch_optional(&mut *conn).await?;
            found.set_metadata(python, adk_rs);
        }
        Ok(found)
    }

    /// Runs `work` in a write transaction and commits what it did; an error rolls it back.
    async fn write<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&mut D::Connection) -> Result<T>,
    ) -> Result<T> {
        let writer = D::writer(&self.writer, &self.pool)
            .await
            .map_err(|error| Error::storage(what, error))?;
        Self::write_on(writer, what, work).await
    }

    /// Runs `work` in a write transaction on `writer` and commits what it did; an error rolls it
    /// back.
    async fn write_on<T>(
        writer: D::WriterGuard<'_>,
        what: &str,
        work: impl AsyncFnOnce(&mut D::Connection) -> Result<T>,
    ) -> Result<T> {
        let storage = |error| Error::storage(what, error);
        let mut writer = Beginning::new(writer, D::abandon_writer);
        let mut tx = writer
            .conn
            .begin_with(sql(D::SQL.begin_write))
            .await
            .map_err(storage)?;
        writer.begun = true;
        let done = work(&mut tx).await?;
        tx.commit().await.map_err(storage)?;
        Ok(done)
    }

    /// Runs `work`, one statement that is atomic on its own, on a writer's connection outside
    /// any transaction of ours (the database commits it alone): one round trip to the database
    /// instead of three (`BEGIN`, the statement, `COMMIT`), for writes that need nothing read
    /// first.
    async fn write_alone<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&mut D::Connection) -> Result<T>,
    ) -> Result<T> {
        let mut writer = D::writer(&self.writer, &self.pool)
            .await
            .map_err(|error| Error::storage(what, error))?;
        work(&mut writer).await
    }

    /// Runs `work` in a read transaction: everything it reads comes from one snapshot.
    async fn read<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&mut D::Connection) -> Result<T>,
    ) -> Result<T> {
        let storage = |error| Error::storage(what, error);
        let conn = self.pool.acquire().await.map_err(storage)?;
        let mut conn = Beginning::new(conn, PoolConnection::close_on_drop);
        let mut tx = conn
            .conn
            .begin_with(sql(D::SQL.begin_read))
            .await
            .map_err(storage)?;
        conn.begun = true;
        let done = work(&mut tx).await?;
        tx.commit().await.map_err(storage)?;
        Ok(done)
    }

    /// Creates a session: its row, and its app and user state rows when missing.
    pub(crate) async fn create(&self, request: CreateSessionRequest) -> Result<Session> {
        let session_id = request.session_id.unwrap_or_else(|| UuidIdGen.session_id());
        let key = SessionKey::new(request.app_name, request.user_id, session_id);
        let what = format!("creating session {}", key.session_id);
        check_key::<D>(&key, &what)?;
        let scoped = ScopedState::split(&request.state);
        let session_state = state_json(&scoped.session, &what)?;
        let seconds = now();
        let time = D::time(seconds);

        let (revision, app, user) = self
            .write(&what, async |conn| {
                let inserted =
                    sqlx::query_scalar_with(sql(D::SQL.insert_session), key_args::<D>(&key)?)
                        .bind(session_state)
                        .bind(time.clone())
                        .fetch_one(&mut *conn)
                        .await;
                let revision: i64 = match inserted {
                    Err(error) if is_unique_violation(&error) => {
                        return Err(Error::already_exists(&key));
                    }
                    other => other.map_err(|error| Error::storage(&what, error))?,
                };
                // ADK Python appends only to sessions whose app and user state rows exist.
                Self::merge_shared(conn, Shared::App, &key, scoped.app, &time, &what).await?;
                Self::merge_shared(conn, Shared::User, &key, scoped.user, &time, &what).await?;
                let (app, user) = Self::load_shared(conn, &key, &what).await?;
                Ok((revision, app, user))
            })
            .await?;

        let mut session = Session::new(key);
        session.state = merged_state(app, user, scoped.session);
        session.last_update_time = seconds;
        session.revision = stored_revision(revision);
        Ok(session)
    }

    /// Loads a session with the events `request` selects, from one snapshot: one statement on
    /// a pooled connection, outside any transaction of ours (one round trip instead of six).
    pub(crate) async fn get(&self, request: GetSessionRequest) -> Result<Option<Session>> {
        let key = &request.key;
        let what = format!("loading session {}", key.session_id);
        let storage = |error| Error::storage(&what, error);
        check_key::<D>(key, &what)?;
        let mut conn = self.pool.acquire().await.map_err(storage)?;
        let mut rows = Self::load_query(key, EventFilter::of(&request))?.fetch(&mut *conn);
        let mut session_row = None;
        let mut parser = RowParser::default();
        // Read to the end, which also lets the statement (and with it its snapshot) finish.
        while let Some((position, state, revision, update_time, app, user, event)) =
            rows.try_next().await.map_err(storage)?
        {
            match (revision, event) {
                (Some(revision), events) if session_row.is_none() => {
                    session_row = Some((state, revision, update_time, app, user, events));
                }
                (None, Some(event)) => parser.push(position.unwrap_or_default(), event),
                _ => {
                    return Err(Error::corrupt(
                        &what,
                        "a row of the load is neither the session's nor an event's",
                    ));
                }
            }
        }
        drop(rows);
        drop(conn);
        let Some((state, revision, update_time, app, user, events)) = session_row else {
            // The events of a session go with it: no session row, no rows at all.
            return Ok(None);
        };
        let (Some(state), Some(update_time)) = (state, update_time) else {
            return Err(Error::corrupt(
                &what,
                "the session's row has no state or update time",
            ));
        };

        let mut session = Session::new(key.clone());
        session.state = merged_state(
            parse_shared(app)?,
            parse_shared(user)?,
            parse_state(&state)?,
        );
        session.events = if D::JOINS_EVENTS {
            parse_events(events).await?
        } else {
            parser.finish().await?
        };
        session.last_update_time = D::seconds(update_time)?;
        session.revision = stored_revision(revision);
        Ok(Some(session))
    }

    /// The sessions of a user in an app, without their events.
    pub(crate) async fn list(&self, app_name: &str, user_id: &str) -> Result<Vec<Session>> {
        let what = format!("listing the sessions of user {user_id} in app {app_name}");
        let key = SessionKey::new(app_name, user_id, "");
        check_key::<D>(&key, &what)?;
        let (rows, (app, user)) = self
            .read(&what, async |conn| {
                let rows: Vec<(String, String, i64, D::Time)> =
                    sqlx::query_as(sql(D::SQL.select_sessions))
                        .bind(app_name)
                        .bind(user_id)
                        .fetch_all(&mut *conn)
                        .await
                        .map_err(|error| Error::storage(&what, error))?;
                Ok((rows, Self::load_shared(conn, &key, &what).await?))
            })
            .await?;
        rows.into_iter()
            .map(|(id, state, revision, update_time)| {
                let mut session = Session::new(SessionKey::new(app_name, user_id, id));
                session.state = merged_state(app.clone(), user.clone(), parse_state(&state)?);
                session.last_update_time = D::seconds(update_time)?;
                session.revision = stored_revision(revision);
                Ok(session)
            })
            .collect()
    }

    /// Deletes a session and its events, remembering its last revision.
    pub(crate) async fn delete(&self, key: &SessionKey) -> Result<()> {
        let what = format!("deleting session {}", key.session_id);
        check_key::<D>(key, &what)?;
        self.write(&what, async |conn| {
            for &statement in D::SQL.delete_session {
                sqlx::query_with(sql(statement), key_args::<D>(key)?)
                    .execute(&mut *conn)
                    .await
                    .map_err(|error| Error::storage(&what, error))?;
            }
            Ok(())
        })
        .await
    }

    /// Appends `event` if the session is still at `revision`; returns the new revision. Where the
    /// store groups appends (SQLite), the append waits for its group's commit.
    pub(crate) async fn persist(
        &self,
        key: &SessionKey,
        revision: u64,
        event: &Event,
    ) -> Result<u64> {
        let append = Append::prepare(key, revision, event)?;
        let what = append.what.clone();
        let writer = match &self.appends {
            // A writer nobody holds takes the append at once, in a transaction of its own, as
            // without groups; one that is busy means others are waiting, and the append joins
            // the next group.
            Some(appends) => match D::try_writer(&self.writer) {
                Some(writer) => writer,
                None => {
                    let what = append.what.clone();
                    return appends.append(&what, append).await;
                }
            },
            None => D::writer(&self.writer, &self.pool)
                .await
                .map_err(|error| Error::storage(&what, error))?,
        };
        Self::write_on(writer, &what, async |conn| {
            Self::apply_append(conn, append).await
        })
        .await
    }

    /// The writer task of an [`AppendQueue`]: commits every append waiting in `waiters`, in
    /// groups of up to [`MAX_GROUP`], through `writer`, until the queue is dropped.
    #[cfg_attr(
        not(feature = "sqlite"),
        allow(dead_code, reason = "only SQLite groups appends")
    )]
    pub(crate) async fn write_groups(
        mut waiters: Waiters<Append<D>>,
        writer: D::Writer,
        pool: Pool<D>,
    ) {
        let mut group = Vec::with_capacity(MAX_GROUP);
        while waiters.recv_many(&mut group, MAX_GROUP).await > 0 {
            // A caller that went away before its group began does not have its event stored.
            group.retain(|waiting: &Waiting<Append<D>>| !waiting.done.is_closed());
            if !group.is_empty() {
                Self::commit_group(&writer, &pool, std::mem::take(&mut group)).await;
            }
        }
    }

    /// Commits `group` in one transaction, each append in a savepoint when there are several,
    /// and tells each caller its outcome once the transaction committed (or failed).
    #[cfg_attr(
        not(feature = "sqlite"),
        allow(dead_code, reason = "only SQLite groups appends")
    )]
    async fn commit_group(writer: &D::Writer, pool: &Pool<D>, group: Vec<Waiting<Append<D>>>) {
        let alone = group.len() == 1;
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(group.len());
        let mut appends = Vec::with_capacity(group.len());
        for Waiting { append, done } in group {
            outcomes.push(Outcome {
                done,
                what: append.what.clone(),
                applied: None,
            });
            appends.push(append);
        }
        let committed: sqlx::Result<()> = async {
            let writer = D::writer(writer, pool).await?;
            let mut writer = Beginning::new(writer, D::abandon_writer);
            let mut tx = writer.conn.begin_with(sql(D::SQL.begin_write)).await?;
            writer.begun = true;
            for (append, outcome) in appends.into_iter().zip(&mut outcomes) {
                outcome.applied = Some(if alone || append.writes_once() {
                    // Every refusal of such an append (stale, missing, a duplicate event) comes
                    // before it writes; a failure of the database itself fails the group.
                    let applied = Self::apply_append(&mut tx, append).await;
                    if let Err(error) = &applied
                        && !alone
                        && !error.refused_before_writing()
                    {
                        return Err(sqlx::Error::Protocol(error.to_string()));
                    }
                    applied
                } else {
                    // A failed append is undone alone; the others of its group stay.
                    let mut savepoint = Connection::begin(&mut *tx).await?;
                    let applied = Self::apply_append(&mut savepoint, append).await;
                    if applied.is_ok() {
                        savepoint.commit().await?;
                    } else {
                        savepoint.rollback().await?;
                    }
                    applied
                });
            }
            tx.commit().await
        }
        .await;
        for Outcome {
            done,
            what,
            applied,
        } in outcomes
        {
            let outcome = match (&committed, applied) {
                (Ok(()), Some(outcome)) => outcome,
                (Err(error), _) => Err(Error::storage(&what, error.to_string())),
                // Unreachable: every append has its outcome once the group committed.
                (Ok(()), None) => Err(Error::storage(&what, "the append was not attempted")),
            };
            // A caller that went away meanwhile learns nothing; its event is stored all the
            // same, as when a commit it started was under way.
            let _ = done.send(outcome);
        }
    }

    /// Writes `append` in the transaction of `conn`: checks the session's revision, then stores
    /// the event, the session's new revision and state, the shared scopes' deltas and the calls
    /// the event completes in the journal. Returns the new revision.
    pub(crate) async fn apply_append(conn: &mut D::Connection, append: Append<D>) -> Result<u64> {
        let Append {
            key,
            what,
            revision,
            event_id,
            invocation_id,
            time,
            data,
            scoped,
            completed,
        } = append;
        let storage = |error| Error::storage(&what, error);
        let next = revision + 1;
        // Nobody else can write this session until the commit: check, then write. Unless a
        // state must be read to merge the event's delta into, the event's insert checks the
        // revision itself: one statement fewer.
        let checked = D::MERGES_STATE || scoped.session.is_empty();
        let stored_state = if checked {
            None
        } else {
            Self::check_revision(conn, &key, revision, &what).await?
        };
        // Merged before the first write, so that every failure but the database's own comes
        // before anything is written (a grouped append relies on it, see `commit_group`).
        let new_state = (!scoped.session.is_empty())
            .then(|| Self::merged_json(stored_state.as_deref(), scoped.session, &what))
            .transpose()?;
        let statement = if checked {
            D::SQL.insert_event_at
        } else {
            D::SQL.insert_event
        };
        let mut insert = sqlx::query_with(sql(statement), key_args::<D>(&key)?)
            .bind(sql_revision(next))
            .bind(event_id.as_str())
            .bind(invocation_id.as_str())
            .bind(time.clone())
            .bind(data);
        if checked {
            insert = insert.bind(sql_revision(revision));
        }
        match insert.execute(&mut *conn).await {
            Err(error) if is_unique_violation(&error) => {
                return Err(Error::duplicate_event(&key, &event_id));
            }
            Err(error) => return Err(storage(error)),
            Ok(done) if checked && D::rows_affected(&done) == 0 => {
                // Nothing was written: the session is missing or at another revision.
                Self::check_revision(conn, &key, revision, &what).await?;
                return Err(Error::storage(
                    &what,
                    "the event was not stored, yet the session is at its revision",
                ));
            }
            Ok(_) => {}
        }
        // The update time moves to the event's, as in memory; ADK Python's writers compare it to
        // tell whether their copy of the session is stale.
        sqlx::query_with(sql(D::SQL.update_session), key_args::<D>(&key)?)
            .bind(sql_revision(next))
            .bind(time.clone())
            .bind(new_state)
            .execute(&mut *conn)
            .await
            .map_err(storage)?;
        // The scopes' rows exist since the session was created: only a delta is written.
        if !scoped.app.is_empty() {
            Self::merge_shared(conn, Shared::App, &key, scoped.app, &time, &what).await?;
        }
        if !scoped.user.is_empty() {
            Self::merge_shared(conn, Shared::User, &key, scoped.user, &time, &what).await?;
        }
        // The calls the event answers are complete in the journal in this same transaction: a
        // crash leaves both or neither.
        for call_id in completed {
            sqlx::query_with(sql(D::SQL.complete_call), key_args::<D>(&key)?)
                .bind(event_id.as_str())
                .bind(call_id)
                .execute(&mut *conn)
                .await
                .map_err(storage)?;
        }
        Ok(next)
    }

    /// Records the intent to run a call, or one more attempt of a call recorded before.
    pub(crate) async fn record_intent(&self, key: &SessionKey, intent: &ToolIntent) -> Result<()> {
        let what = format!(
            "recording the intent of call {} in session {}",
            intent.function_call_id, key.session_id
        );
        check_key::<D>(key, &what)?;
        let texts = [
            intent.function_call_id.as_str(),
            intent.invocation_id.as_str(),
            intent.tool_name.as_str(),
        ];
        if !D::TEXT_HOLDS_NUL && texts.iter().any(|text| text.contains('\0')) {
            return Err(Error::unstorable(
                &what,
                "the call's id, invocation id or tool name contains U+0000, which the database \
                 cannot hold",
            ));
        }
        self.write_alone(&what, async |conn| {
            let mut args = key_args::<D>(key)?;
            for text in texts.into_iter().chain([intent.args_hash.as_str()]) {
                add(&mut args, text)?;
            }
            match sqlx::query_with(sql(D::SQL.record_intent), args)
                .execute(&mut *conn)
                .await
            {
                // The journal's rows belong to a session: a missing one fails its foreign key.
                Err(sqlx::Error::Database(error)) if error.is_foreign_key_violation() => {
                    Err(Error::not_found(key))
                }
                other => other
                    .map(drop)
                    .map_err(|error| Error::storage(&what, error)),
            }
        })
        .await
    }

    /// Keeps a request to cancel an invocation in its journal, then tells the runs of this
    /// process and of the others sharing the database.
    pub(crate) async fn request_cancel(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<()> {
        self.record_intent(key, &adk_core::cancel_request_intent(invocation_id))
            .await?;
        self.cancels.announce(key);
        D::announce_cancel(&self.pool, key).await
    }

    /// The cancel requests of a session from now on, from every process sharing the database
    /// where it can tell.
    pub(crate) async fn cancel_signals(&self, key: &SessionKey) -> Result<CancelSignals> {
        self.listener
            .get_or_try_init(|| D::listen_for_cancels(&self.pool, self.cancels.clone()))
            .await?;
        Ok(self.cancels.subscribe(key))
    }

    /// The journal of one invocation of a session, in the order its intents were recorded.
    pub(crate) async fn journal(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<Vec<JournalEntry>> {
        let what = format!("reading the effect journal of session {}", key.session_id);
        check_key::<D>(key, &what)?;
        let storage = |error| Error::storage(&what, error);
        let mut args = key_args::<D>(key)?;
        add(&mut args, invocation_id.as_str())?;
        // One statement reads one snapshot: no transaction of ours is needed around it.
        let mut conn = self.pool.acquire().await.map_err(storage)?;
        let rows: Vec<(String, String, String, i64, Option<String>)> =
            sqlx::query_as_with(sql(D::SQL.select_journal), args)
                .fetch_all(&mut *conn)
                .await
                .map_err(storage)?;
        drop(conn);
        Ok(rows
            .into_iter()
            .map(|(call_id, tool_name, args_hash, attempts, result)| {
                let intent =
                    ToolIntent::new(invocation_id.clone(), call_id.into(), tool_name, args_hash);
                let attempts = u32::try_from(attempts).unwrap_or(u32::MAX);
                JournalEntry::new(intent, attempts, result.map(Into::into))
            })
            .collect())
    }

    /// Checks that session `key` exists at `revision` (under the write transaction of `conn`);
    /// returns its state where the database does not merge state itself.
    async fn check_revision(
        conn: &mut D::Connection,
        key: &SessionKey,
        revision: u64,
        what: &str,
    ) -> Result<Option<String>> {
        let row: Option<(i64, Option<String>)> =
            sqlx::query_as_with(sql(D::SQL.lock_session), key_args::<D>(key)?)
                .fetch_optional(&mut *conn)
                .await
                .map_err(|error| Error::storage(what, error))?;
        let Some((stored, state)) = row else {
            return Err(Error::not_found(key));
        };
        let stored = stored_revision(stored);
        if stored != revision {
            return Err(Error::stale(key, revision, stored));
        }
        Ok(state)
    }

    /// What to write to set `delta`'s keys in a state stored as `stored`: the delta itself where
    /// the database merges state, else the whole state with the delta applied.
    fn merged_json(stored: Option<&str>, delta: Map<String, Value>, what: &str) -> Result<String> {
        if D::MERGES_STATE {
            return state_json(&delta, what);
        }
        let mut state = stored.map_or_else(|| Ok(Map::new()), parse_state)?;
        apply_delta(&mut state, delta);
        state_json(&state, what)
    }

    /// Sets `delta` in the app or user state of `key`'s scope; an empty delta only makes sure the
    /// scope's row exists.
    async fn merge_shared(
        conn: &mut D::Connection,
        scope: Shared,
        key: &SessionKey,
        delta: Map<String, Value>,
        time: &D::Time,
        what: &str,
    ) -> Result<()> {
        let (statement, state) = if delta.is_empty() {
            (D::SQL.ensure_state.of(scope), String::from("{}"))
        } else {
            let stored = if D::MERGES_STATE {
                None
            } else {
                Self::load_scope(conn, scope, key, what).await?
            };
            let state = Self::merged_json(stored.as_deref(), delta, what)?;
            (D::SQL.upsert_state.of(scope), state)
        };
        let storage = |error| Error::storage(what, error);
        sqlx::query_with(sql(statement), scope_args::<D>(scope, key)?)
            .bind(state)
            .bind(time.clone())
            .execute(&mut *conn)
            .await
            .map_err(storage)?;
        Ok(())
    }

    /// The state of one shared scope of `key`, as stored (`None` when never set).
    async fn load_scope(
        conn: &mut D::Connection,
        scope: Shared,
        key: &SessionKey,
        what: &str,
    ) -> Result<Option<String>> {
        let storage = |error| Error::storage(what, error);
        sqlx::query_scalar_with(
            sql(D::SQL.select_state.of(scope)),
            scope_args::<D>(scope, key)?,
        )
        .fetch_optional(&mut *conn)
        .await
        .map_err(storage)
    }

    /// The app and user states of `key`'s scopes (empty when never set).
    async fn load_shared(
        conn: &mut D::Connection,
        key: &SessionKey,
        what: &str,
    ) -> Result<SharedStates> {
        let (app, user): (Option<String>, Option<String>) =
            sqlx::query_as(sql(D::SQL.select_shared))
                .bind(key.app_name.as_str())
                .bind(key.user_id.as_str())
                .fetch_one(&mut *conn)
                .await
                .map_err(|error| Error::storage(what, error))?;
        Ok((parse_shared(app)?, parse_shared(user)?))
    }

    /// The load of `key` with the events `filter` selects (see `Statements::load_all`).
    fn load_query<'q>(
        key: &SessionKey,
        filter: EventFilter,
    ) -> Result<QueryAs<'q, D, LoadRow<D>, D::Arguments>> {
        let mut args = key_args::<D>(key)?;
        let statement = match filter {
            EventFilter::All => D::SQL.load_all,
            EventFilter::After(after) => {
                add(&mut args, D::time(after))?;
                D::SQL.load_after
            }
            EventFilter::Recent { count, after } => {
                add(&mut args, D::time(after.unwrap_or(f64::NEG_INFINITY)))?;
                add(&mut args, count)?;
                D::SQL.load_recent
            }
        };
        Ok(sqlx::query_as_with(sql(statement), args))
    }
}

/// A row of a session's load (see `Statements::load_all`): position, state, revision, update
/// time, app state, user state, and the events joined or one event.
type LoadRow<D> = (
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<<D as Dialect>::Time>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A shared scope's state as stored (empty when never set).
fn parse_shared(text: Option<String>) -> Result<Map<String, Value>> {
    text.map_or_else(|| Ok(Map::new()), |text| parse_state(&text))
}

/// What a caller of a grouped append hears: its channel, what the append was (for errors), and
/// the append's result once it ran in the group's transaction.
#[cfg_attr(
    not(feature = "sqlite"),
    allow(dead_code, reason = "only SQLite groups appends")
)]
struct Outcome {
    done: oneshot::Sender<Result<u64>>,
    what: String,
    applied: Option<Result<u64>>,
}

/// One event's append, prepared (checked and serialized) before it waits for the writer.
pub(crate) struct Append<D: Dialect> {
    key: SessionKey,
    /// What the append is, for its errors.
    pub(crate) what: String,
    revision: u64,
    event_id: String,
    invocation_id: String,
    time: D::Time,
    /// The event's JSON as stored.
    data: String,
    scoped: ScopedState,
    /// The ids of the calls the event completes in the effect journal.
    completed: Vec<String>,
}

impl<D: Dialect> Append<D> {
    /// Whether the append writes nothing after its event and session rows (no shared scope, no
    /// journal entry): it needs no savepoint of its own in a group.
    #[cfg_attr(
        not(feature = "sqlite"),
        allow(dead_code, reason = "only SQLite groups appends")
    )]
    fn writes_once(&self) -> bool {
        self.scoped.app.is_empty() && self.scoped.user.is_empty() && self.completed.is_empty()
    }

    /// The append of `event` to session `key` at `revision`, or why it cannot be stored.
    fn prepare(key: &SessionKey, revision: u64, event: &Event) -> Result<Self> {
        let what = format!("appending an event to session {}", key.session_id);
        check_key::<D>(key, &what)?;
        let event = stored_event(event);
        let ids = [event.id.as_str(), event.invocation_id.as_str()];
        if !D::TEXT_HOLDS_NUL && ids.iter().any(|id| id.contains('\0')) {
            return Err(Error::unstorable(
                &what,
                "the event's id or invocation id contains U+0000, which the database cannot hold",
            ));
        }
        Ok(Self {
            key: key.clone(),
            revision,
            event_id: event.id.as_str().to_owned(),
            invocation_id: event.invocation_id.as_str().to_owned(),
            time: D::time(event.timestamp),
            data: event_json(&event)?,
            scoped: split_delta(&event),
            completed: completed_calls(&event)
                .map(|id| id.as_str().to_owned())
                .collect(),
            what,
        })
    }
}

/// A statement of the dialect as sqlx takes it. (Converted outside the async code that runs it:
/// a `&'static str` held across an await loses its `'static` where the future's `Send` is
/// checked, and sqlx takes only `'static` text.)
fn sql(statement: &'static str) -> SqlStr {
    statement.into_sql_str()
}

/// The arguments every statement about one session starts with: app, user and session id.
fn key_args<D: Dialect>(key: &SessionKey) -> Result<D::Arguments>
where
    for<'q> &'q str: Encode<'q, D> + Type<D>,
{
    let mut args = D::Arguments::default();
    for id in [&key.app_name, &key.user_id, key.session_id.as_str()] {
        add(&mut args, id)?;
    }
    Ok(args)
}

/// The arguments every statement about a shared scope starts with: app (and user).
fn scope_args<D: Dialect>(scope: Shared, key: &SessionKey) -> Result<D::Arguments>
where
    for<'q> &'q str: Encode<'q, D> + Type<D>,
{
    let mut args = D::Arguments::default();
    add(&mut args, key.app_name.as_str())?;
    if let Shared::User = scope {
        add(&mut args, key.user_id.as_str())?;
    }
    Ok(args)
}

/// Adds `value` to `args` (text and numbers always encode; the error is there for the type's
/// sake).
fn add<'t, A: Arguments>(
    args: &mut A,
    value: impl Encode<'t, A::Database> + Type<A::Database>,
) -> Result<()> {
    args.add(value)
        .map_err(|error| Error::storage("binding a statement's arguments", error))
}

/// Refuses a key the database cannot hold (U+0000 where its text cannot hold it), which could
/// otherwise only fail deep in the driver.
fn check_key<D: Dialect>(key: &SessionKey, what: &str) -> Result<()> {
    let ids = [&key.app_name, &key.user_id, key.session_id.as_str()];
    if !D::TEXT_HOLDS_NUL && ids.iter().any(|id| id.contains('\0')) {
        return Err(Error::unstorable(
            what,
            "an app name, user id or session id contains U+0000, which the database cannot hold",
        ));
    }
    Ok(())
}

/// A revision as the databases store it (a signed 64-bit integer).
fn sql_revision(revision: u64) -> i64 {
    i64::try_from(revision).unwrap_or(i64::MAX)
}

/// A revision read back (never negative: it only ever grows from 0).
fn stored_revision(revision: i64) -> u64 {
    u64::try_from(revision).unwrap_or_default()
}
