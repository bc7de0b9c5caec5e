//! [`SqliteSessionService`]: sessions in a SQLite file.

use std::path::Path;

use adk_core::{
    CreateSessionRequest, Event, GetSessionRequest, IdGen, ScopedState, Session, SessionKey,
    SessionService, UuidIdGen,
};
use async_trait::async_trait;
use serde_json::{Map, Value};
use sqlx::{Connection, SqliteConnection, SqlitePool};

use super::time;
use crate::error::{Error, Result};
use crate::scoped::{apply_delta, merged_state, now, split_delta, stored_event};
use crate::sql::{EventFilter, event_json, is_unique_violation, parse_events, parse_state};

/// Sessions in a SQLite database file: the embedded default.
///
/// The file has ADK Python's v1 layout (its `DatabaseSessionService` reads and appends to it)
/// with a session revision and an event position added; a file ADK Python made is adopted, and
/// one of adk-rs's first layout is upgraded, when it is opened.
///
/// Writes of one process queue for one warm connection behind an async mutex and run as
/// `BEGIN IMMEDIATE` transactions, so two writers (of this process or another) can never both pass
/// the revision check; reads run concurrently from a pool, on WAL snapshots.
#[derive(Debug)]
pub struct SqliteSessionService {
    pool: SqlitePool,
    writer: tokio::sync::Mutex<SqliteConnection>,
}

impl SqliteSessionService {
    /// Opens the database at `path`, creating it when missing, and brings its layout up to date.
    pub async fn open(path: impl AsRef<Path>) -> adk_core::Result<Self> {
        let pool = super::open_pool(path.as_ref())
            .await
            .map_err(Error::into_session)?;
        let writer = pool
            .acquire()
            .await
            .map_err(|error| Error::storage("opening the writer connection", error).into_session())?
            .detach();
        Ok(Self {
            pool,
            writer: tokio::sync::Mutex::new(writer),
        })
    }

    /// Closes the reading connections, waiting for work in progress (the writer connection
    /// closes when the service is dropped).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn create(&self, request: CreateSessionRequest) -> Result<Session> {
        let session_id = request.session_id.unwrap_or_else(|| UuidIdGen.session_id());
        let key = SessionKey::new(request.app_name, request.user_id, session_id);
        let what = format!("creating session {}", key.session_id);
        let scoped = ScopedState::split(&request.state);
        let session_state =
            serde_json::to_string(&scoped.session).map_err(|error| Error::corrupt(&what, error))?;
        let time = now();
        let time_text = time::to_text(time);

        let mut writer = self.writer.lock().await;
        let mut tx = begin_write(&mut writer, &what).await?;
        // A session re-created with the id of a deleted one starts after its last revision.
        let inserted: std::result::Result<i64, _> = sqlx::query_scalar(
            "INSERT INTO sessions (app_name, user_id, id, state, revision, create_time, update_time) \
             VALUES (?1, ?2, ?3, ?4, coalesce((SELECT revision + 1 FROM deleted_sessions \
             WHERE app_name = ?1 AND user_id = ?2 AND id = ?3), 0), ?5, ?5) RETURNING revision",
        )
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .bind(&session_state)
        .bind(&time_text)
        .fetch_one(&mut *tx)
        .await;
        let revision = match inserted {
            Err(error) if is_unique_violation(&error) => return Err(Error::already_exists(&key)),
            other => other.map_err(|error| Error::storage(&what, error))?,
        };
        // ADK Python appends only to sessions whose app and user state rows exist.
        merge_shared(&mut tx, Shared::App, &key, scoped.app, &time_text, &what).await?;
        merge_shared(&mut tx, Shared::User, &key, scoped.user, &time_text, &what).await?;
        let (app, user) = load_shared(&mut tx, &key, &what).await?;
        tx.commit()
            .await
            .map_err(|error| Error::storage(&what, error))?;

        let mut session = Session::new(key);
        session.state = merged_state(app, user, scoped.session);
        session.last_update_time = time;
        session.revision = stored_revision(revision);
        Ok(session)
    }

    async fn get(&self, request: GetSessionRequest) -> Result<Option<Session>> {
        let key = &request.key;
        let what = format!("loading session {}", key.session_id);
        let storage = |error| Error::storage(&what, error);
        // One read transaction: the events, state and revision come from one snapshot.
        let mut tx = self.pool.begin().await.map_err(storage)?;
        let row: Option<(String, i64, String)> = sqlx::query_as(
            "SELECT state, revision, update_time FROM sessions \
             WHERE app_name = ? AND user_id = ? AND id = ?",
        )
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(storage)?;
        let Some((state, revision, update_time)) = row else {
            return Ok(None);
        };
        let (app, user) = load_shared(&mut tx, key, &what).await?;
        let rows = load_event_rows(&mut tx, key, EventFilter::of(&request))
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)?;

        let mut session = Session::new(key.clone());
        session.state = merged_state(app, user, parse_state(&state)?);
        session.events = parse_events(rows).await?;
        session.last_update_time = time::from_text(&update_time)?;
        session.revision = stored_revision(revision);
        Ok(Some(session))
    }

    async fn list(&self, app_name: &str, user_id: &str) -> Result<Vec<Session>> {
        let what = format!("listing the sessions of user {user_id} in app {app_name}");
        let storage = |error| Error::storage(&what, error);
        let mut tx = self.pool.begin().await.map_err(storage)?;
        let rows: Vec<(String, String, i64, String)> = sqlx::query_as(
            "SELECT id, state, revision, update_time FROM sessions \
             WHERE app_name = ? AND user_id = ? ORDER BY id",
        )
        .bind(app_name)
        .bind(user_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(storage)?;
        let key = SessionKey::new(app_name, user_id, "");
        let (app, user) = load_shared(&mut tx, &key, &what).await?;
        tx.commit().await.map_err(storage)?;
        rows.into_iter()
            .map(|(id, state, revision, update_time)| {
                let mut session = Session::new(SessionKey::new(app_name, user_id, id));
                session.state = merged_state(app.clone(), user.clone(), parse_state(&state)?);
                session.last_update_time = time::from_text(&update_time)?;
                session.revision = stored_revision(revision);
                Ok(session)
            })
            .collect()
    }

    async fn delete(&self, key: &SessionKey) -> Result<()> {
        let what = format!("deleting session {}", key.session_id);
        let mut writer = self.writer.lock().await;
        let mut tx = begin_write(&mut writer, &what).await?;
        // Its last revision is remembered, so that a re-created session starts after it.
        sqlx::query(
            "INSERT INTO deleted_sessions (app_name, user_id, id, revision) \
             SELECT app_name, user_id, id, revision FROM sessions \
             WHERE app_name = ?1 AND user_id = ?2 AND id = ?3 \
             ON CONFLICT (app_name, user_id, id) \
             DO UPDATE SET revision = max(revision, excluded.revision)",
        )
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .execute(&mut *tx)
        .await
        .map_err(|error| Error::storage(&what, error))?;
        // The events go with it (ON DELETE CASCADE).
        sqlx::query("DELETE FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?")
            .bind(&key.app_name)
            .bind(&key.user_id)
            .bind(key.session_id.as_str())
            .execute(&mut *tx)
            .await
            .map_err(|error| Error::storage(&what, error))?;
        tx.commit()
            .await
            .map_err(|error| Error::storage(&what, error))
    }

    async fn persist(&self, key: &SessionKey, revision: u64, event: &Event) -> Result<u64> {
        let what = format!("appending an event to session {}", key.session_id);
        let storage = |error| Error::storage(&what, error);
        let event = stored_event(event);
        let data = event_json(&event)?;
        let scoped = split_delta(&event);
        let next = revision + 1;

        let mut writer = self.writer.lock().await;
        let mut tx = begin_write(&mut writer, &what).await?;
        // Under BEGIN IMMEDIATE nobody else can write until we commit: check, then write.
        let row: Option<(i64, String)> = sqlx::query_as(
            "SELECT revision, state FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?",
        )
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(storage)?;
        let Some((stored, state)) = row else {
            return Err(Error::not_found(key));
        };
        let stored = stored_revision(stored);
        if stored != revision {
            return Err(Error::stale(key, revision, stored));
        }
        let time = time::to_text(event.timestamp);
        let inserted = sqlx::query(
            "INSERT INTO events \
             (app_name, user_id, session_id, seq, id, invocation_id, timestamp, event_data) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .bind(sql_revision(next))
        .bind(event.id.as_str())
        .bind(event.invocation_id.as_str())
        .bind(&time)
        .bind(&data)
        .execute(&mut *tx)
        .await;
        match inserted {
            Err(error) if is_unique_violation(&error) => {
                return Err(Error::duplicate_event(key, event.id.as_str()));
            }
            other => other.map_err(storage)?,
        };
        let new_state = if scoped.session.is_empty() {
            None
        } else {
            let mut state = parse_state(&state)?;
            apply_delta(&mut state, scoped.session);
            Some(serde_json::to_string(&state).map_err(|error| Error::corrupt(&what, error))?)
        };
        sqlx::query(
            "UPDATE sessions SET revision = ?, update_time = max(update_time, ?), \
             state = coalesce(?, state) WHERE app_name = ? AND user_id = ? AND id = ?",
        )
        .bind(sql_revision(next))
        .bind(&time)
        .bind(new_state)
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(key.session_id.as_str())
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        // The scopes' rows exist since the session was created: only a delta is written.
        if !scoped.app.is_empty() {
            merge_shared(&mut tx, Shared::App, key, scoped.app, &time, &what).await?;
        }
        if !scoped.user.is_empty() {
            merge_shared(&mut tx, Shared::User, key, scoped.user, &time, &what).await?;
        }
        tx.commit().await.map_err(storage)?;
        Ok(next)
    }
}

/// Starts a write transaction on the writer connection: `BEGIN IMMEDIATE` takes the database's
/// write lock at once, so the revision read under it cannot change before the commit.
async fn begin_write<'c>(
    writer: &'c mut SqliteConnection,
    what: &str,
) -> Result<sqlx::Transaction<'c, sqlx::Sqlite>> {
    writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(|error| Error::storage(what, error))
}

/// A revision as SQLite stores it (a signed 64-bit integer).
fn sql_revision(revision: u64) -> i64 {
    i64::try_from(revision).unwrap_or(i64::MAX)
}

/// A revision read back from SQLite (never negative: it only ever grows from 0).
fn stored_revision(revision: i64) -> u64 {
    u64::try_from(revision).unwrap_or_default()
}

/// A scope shared between sessions.
#[derive(Debug, Clone, Copy)]
enum Shared {
    App,
    User,
}

/// Sets `delta` in the app or user state of `key`'s scope; an empty delta only makes sure the
/// scope's row exists.
async fn merge_shared(
    conn: &mut SqliteConnection,
    scope: Shared,
    key: &SessionKey,
    delta: Map<String, Value>,
    time: &str,
    what: &str,
) -> Result<()> {
    if delta.is_empty() {
        let query = match scope {
            Shared::App => sqlx::query(
                "INSERT INTO app_states (app_name, state, update_time) VALUES (?, '{}', ?) \
                 ON CONFLICT (app_name) DO NOTHING",
            )
            .bind(&key.app_name),
            Shared::User => sqlx::query(
                "INSERT INTO user_states (app_name, user_id, state, update_time) \
                 VALUES (?, ?, '{}', ?) ON CONFLICT (app_name, user_id) DO NOTHING",
            )
            .bind(&key.app_name)
            .bind(&key.user_id),
        };
        query
            .bind(time)
            .execute(&mut *conn)
            .await
            .map_err(|error| Error::storage(what, error))?;
        return Ok(());
    }
    let mut state = load_scope(conn, scope, key, what).await?;
    apply_delta(&mut state, delta);
    let text = serde_json::to_string(&state).map_err(|error| Error::corrupt(what, error))?;
    let query = match scope {
        Shared::App => sqlx::query(
            "INSERT INTO app_states (app_name, state, update_time) VALUES (?, ?, ?) \
             ON CONFLICT (app_name) DO UPDATE SET state = excluded.state, \
             update_time = excluded.update_time",
        )
        .bind(&key.app_name),
        Shared::User => sqlx::query(
            "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, ?, ?) \
             ON CONFLICT (app_name, user_id) DO UPDATE SET state = excluded.state, \
             update_time = excluded.update_time",
        )
        .bind(&key.app_name)
        .bind(&key.user_id),
    };
    query
        .bind(text)
        .bind(time)
        .execute(&mut *conn)
        .await
        .map_err(|error| Error::storage(what, error))?;
    Ok(())
}

/// The stored state of one shared scope of `key` (empty when never set).
async fn load_scope(
    conn: &mut SqliteConnection,
    scope: Shared,
    key: &SessionKey,
    what: &str,
) -> Result<Map<String, Value>> {
    let query = match scope {
        Shared::App => sqlx::query_scalar("SELECT state FROM app_states WHERE app_name = ?")
            .bind(&key.app_name),
        Shared::User => {
            sqlx::query_scalar("SELECT state FROM user_states WHERE app_name = ? AND user_id = ?")
                .bind(&key.app_name)
                .bind(&key.user_id)
        }
    };
    let text: Option<String> = query
        .fetch_optional(&mut *conn)
        .await
        .map_err(|error| Error::storage(what, error))?;
    text.map_or_else(|| Ok(Map::new()), |text| parse_state(&text))
}

/// The app and user states of `key`'s scopes.
async fn load_shared(
    conn: &mut SqliteConnection,
    key: &SessionKey,
    what: &str,
) -> Result<(Map<String, Value>, Map<String, Value>)> {
    let app = load_scope(conn, Shared::App, key, what).await?;
    let user = load_scope(conn, Shared::User, key, what).await?;
    Ok((app, user))
}

/// The stored JSON of the events `filter` selects, oldest first, joined by
/// [`EVENT_SEPARATOR`](crate::sql::EVENT_SEPARATOR) (`None` when there are none).
///
/// The order comes from the subquery's `ORDER BY`: SQLite never flattens an ordered subquery into
/// an aggregate, and it is several times cheaper than `group_concat(… ORDER BY seq)`, which sorts
/// the rows again.
async fn load_event_rows(
    conn: &mut SqliteConnection,
    key: &SessionKey,
    filter: EventFilter,
) -> Result<Option<String>, sqlx::Error> {
    let query = |sql: &'static str| {
        sqlx::query_scalar::<_, Option<String>>(sql)
            .bind(key.app_name.clone())
            .bind(key.user_id.clone())
            .bind(key.session_id.as_str().to_owned())
    };
    let query = match filter {
        EventFilter::All => query(
            "SELECT group_concat(event_data, char(10)) FROM ( \
             SELECT event_data FROM events \
             WHERE app_name = ? AND user_id = ? AND session_id = ? ORDER BY seq)",
        ),
        EventFilter::After(after) => query(
            "SELECT group_concat(event_data, char(10)) FROM ( \
             SELECT event_data FROM events \
             WHERE app_name = ? AND user_id = ? AND session_id = ? AND timestamp >= ? \
             ORDER BY seq)",
        )
        .bind(time::to_text(after)),
        EventFilter::Recent { count, after } => query(
            "SELECT group_concat(event_data, char(10)) FROM ( \
             SELECT seq, event_data FROM ( \
             SELECT seq, event_data FROM events \
             WHERE app_name = ? AND user_id = ? AND session_id = ? AND timestamp >= ? \
             ORDER BY seq DESC LIMIT ?) ORDER BY seq)",
        )
        .bind(time::to_text(after.unwrap_or(f64::NEG_INFINITY)))
        .bind(count),
    };
    query.fetch_one(&mut *conn).await
}

#[async_trait]
impl SessionService for SqliteSessionService {
    async fn create_session(&self, request: CreateSessionRequest) -> adk_core::Result<Session> {
        self.create(request).await.map_err(Error::into_session)
    }

    async fn get_session(&self, request: GetSessionRequest) -> adk_core::Result<Option<Session>> {
        self.get(request).await.map_err(Error::into_session)
    }

    async fn list_sessions(&self, app_name: &str, user_id: &str) -> adk_core::Result<Vec<Session>> {
        self.list(app_name, user_id)
            .await
            .map_err(Error::into_session)
    }

    async fn delete_session(&self, key: &SessionKey) -> adk_core::Result<()> {
        self.delete(key).await.map_err(Error::into_session)
    }

    async fn persist_event(
        &self,
        key: &SessionKey,
        revision: u64,
        event: &Event,
    ) -> adk_core::Result<u64> {
        self.persist(key, revision, event)
            .await
            .map_err(Error::into_session)
    }
}
