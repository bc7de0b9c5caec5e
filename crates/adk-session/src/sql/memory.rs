//! [`SqlMemory`]: the memory service of every SQL database, written once over its
//! [`MemoryDialect`]: what a session adds, embedding before any write, re-embedding what another
//! model made (looked for only when a user's memories are not known to be embedded by the current
//! model), and a search's keyword and vector rankings fused and read back in order. The dialects
//! keep what truly differs: how words are matched (SQLite's FTS5, PostgreSQL's word arrays), how
//! vectors are stored and where they are ranked.

use std::collections::HashMap;

use adk_core::{Content, MemoryEntry, Session};
use sqlx::{
    Connection, Database, Decode, Encode, Executor, IntoArguments, Pool, SqlSafeStr, SqlStr, Type,
};

use crate::error::{Error, Result};
use crate::keywords::{content_text, words};
use crate::semantic::SemanticSearch;

/// A database the SQL memory service runs on, implemented for sqlx's `Sqlite` and `Postgres`.
pub(crate) trait MemoryDialect: Database {
    /// The service's statements in this database's SQL.
    const MEMORY: MemoryStatements;
    /// Whether the database's text can hold U+0000 (PostgreSQL's cannot).
    const TEXT_HOLDS_NUL: bool;

    /// A vector of unit length as the database stores it.
    type Vector: for<'q> Encode<'q, Self> + Type<Self> + Send;
    /// How this database ranks vectors, found when the tables are created.
    type Ranker: std::fmt::Debug + Clone + Send + Sync;

    /// A vector of unit length (or all zeros) as the database stores it.
    fn vector(unit: &[f32]) -> Self::Vector;

    /// Creates the memory tables when missing; says how vectors will be ranked.
    fn create_tables(pool: &Pool<Self>) -> impl Future<Output = sqlx::Result<Self::Ranker>> + Send;

    /// Stores one remembered text of a session; returns its id.
    fn insert_memory(
        conn: &mut Self::Connection,
        session: &Session,
        row: &MemoryRow,
    ) -> impl Future<Output = sqlx::Result<i64>> + Send;

    /// The ids of the user's memories sharing a word of `words` (not empty), best first, at most
    /// `limit` when given.
    fn keyword_ranking(
        pool: &Pool<Self>,
        scope: Scope<'_>,
        words: &[String],
        limit: Option<usize>,
    ) -> impl Future<Output = sqlx::Result<Vec<i64>>> + Send;

    /// The ids of the user's memories with vectors of `model`, the most similar to `query` (of
    /// unit length) first by their best chunk, at most `count`.
    fn vector_ranking(
        pool: &Pool<Self>,
        ranker: &Self::Ranker,
        scope: Scope<'_>,
        model: &str,
        query: &[f32],
        count: usize,
        what: &str,
    ) -> impl Future<Output = Result<Vec<i64>>> + Send;

    /// The stored memories of `ids` (id, content JSON, author, timestamp), in no order.
    fn entries(
        pool: &Pool<Self>,
        ids: &[i64],
    ) -> impl Future<Output = sqlx::Result<Vec<EntryRow>>> + Send;
}

/// The statements the SQL memory service shares between databases. Each says what it binds, in
/// order; the databases differ in placeholders, table names and locking.
pub(crate) struct MemoryStatements {
    /// Starts a write transaction.
    pub(crate) begin_write: &'static str,
    /// Each binds app, user and session id: the session's memories and their vectors go.
    pub(crate) delete_session: &'static [&'static str],
    /// Binds app, user and model; returns id and text of the user's memories without a vector of
    /// the model.
    pub(crate) select_stale: &'static str,
    /// Binds app and user; returns the model every memory of the user has vectors of (NULL when
    /// not known) and the version of that knowledge, which each add raises. No row: nothing was
    /// added since the table was made, though an older build may have stored memories.
    pub(crate) select_embedded_with: &'static str,
    /// Run by each add, in its transaction: binds app, user and the model of the added vectors
    /// (NULL when added without an embedder). The user's row keeps its model when the add's is
    /// the same and forgets it otherwise; the version goes up and is returned (no row: the user
    /// has none yet).
    pub(crate) mark_added: &'static str,
    /// Run by each add after [`mark_added`](Self::mark_added), when it changed no row: binds app,
    /// user, the model of the added vectors (or NULL) and the session id. Creates the user's row,
    /// with the add's model when the user has no memories of another session (else NULL), or
    /// updates it as `mark_added` does when a concurrent add created it meanwhile.
    pub(crate) mark_first_added: &'static str,
    /// Run when no memory of the user lacks a vector of a model: binds app, user, the model and
    /// the version read before looking; records the model unless an add raised the version since.
    pub(crate) mark_embedded: &'static str,
    /// Binds id and text; returns the id when the memory still holds that text, locking it until
    /// the commit where the write transaction alone does not.
    pub(crate) lock_current: &'static str,
    /// Binds a memory's id: its vectors go.
    pub(crate) delete_vectors: &'static str,
    /// Binds memory id, chunk, app, user, model and the vector.
    pub(crate) insert_vector: &'static str,
}

/// The app and user a memory belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub(crate) app_name: &'a str,
    pub(crate) user_id: &'a str,
}

/// A remembered text of a session, ready to store.
#[derive(Debug)]
pub(crate) struct MemoryRow {
    /// What is searched and embedded: the text parts joined.
    pub(crate) text: String,
    /// The distinct lowercase words of `text`.
    #[cfg_attr(
        not(feature = "postgres"),
        allow(dead_code, reason = "SQLite's FTS5 finds the words itself")
    )]
    pub(crate) words: Vec<String>,
    pub(crate) author: String,
    pub(crate) timestamp: f64,
    /// The event's content as JSON, given back by a search.
    pub(crate) content: String,
}

/// A stored memory as a search reads it back: id, content JSON, author and timestamp.
pub(crate) type EntryRow = (i64, String, String, f64);

/// Memories in the database of dialect `D`, searched by keyword, and by meaning with an embedder.
#[derive(Debug)]
pub(crate) struct SqlMemory<D: MemoryDialect> {
    pool: Pool<D>,
    ranker: D::Ranker,
    semantic: Option<SemanticSearch>,
}

impl<D: MemoryDialect> Clone for SqlMemory<D> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            ranker: self.ranker.clone(),
            semantic: self.semantic.clone(),
        }
    }
}

impl<D: MemoryDialect> SqlMemory<D>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    D::Arguments: IntoArguments<D>,
    for<'q> &'q str: Encode<'q, D> + Type<D>,
    for<'q> Option<&'q str>: Encode<'q, D>,
    String: for<'r> Decode<'r, D> + Type<D>,
    i64: for<'q> Encode<'q, D> + for<'r> Decode<'r, D> + Type<D>,
    for<'r> (i64,): sqlx::FromRow<'r, D::Row>,
    for<'r> (i64, String): sqlx::FromRow<'r, D::Row>,
    for<'r> (Option<String>, i64): sqlx::FromRow<'r, D::Row>,
{
    /// A service over `pool`, whose memory tables are created when missing.
    pub(crate) async fn new(pool: Pool<D>) -> Result<Self> {
        let ranker = D::create_tables(&pool)
            .await
            .map_err(|error| Error::storage("creating the memory tables", error))?;
        Ok(Self {
            pool,
            ranker,
            semantic: None,
        })
    }

    /// Searches by meaning as `semantic` says, as well as by keyword.
    pub(crate) fn with_semantic_search(mut self, semantic: SemanticSearch) -> Self {
        self.semantic = Some(semantic);
        self
    }

    /// Replaces the memories of `session` with its events that have text.
    pub(crate) async fn add(&self, session: &Session) -> Result<()> {
        let what = format!("adding session {} to memory", session.id);
        let storage = |error| Error::storage(&what, error);
        let rows = rows::<D>(session, &what)?;
        // The embedder is called before the transaction, so that no write lock waits on it, and a
        // failing embedder leaves the stored memories as they were.
        let vectors = match &self.semantic {
            Some(semantic) => {
                let texts: Vec<&str> = rows.iter().map(|row| row.text.as_str()).collect();
                Some(semantic.embed_chunks(&texts).await?)
            }
            None => None,
        };
        let mut conn = self.pool.acquire().await.map_err(storage)?;
        let mut tx = conn
            .begin_with(sql(D::MEMORY.begin_write))
            .await
            .map_err(storage)?;
        for &statement in D::MEMORY.delete_session {
            sqlx::query(sql(statement))
                .bind(session.app_name.as_str())
                .bind(session.user_id.as_str())
                .bind(session.id.as_str())
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        let scope = Scope {
            app_name: &session.app_name,
            user_id: &session.user_id,
        };
        for (at, row) in rows.iter().enumerate() {
            let id = D::insert_memory(&mut tx, session, row)
                .await
                .map_err(storage)?;
            if let (Some(semantic), Some(vectors)) = (&self.semantic, &vectors) {
                insert_vectors::<D>(&mut tx, id, scope, semantic.model(), &vectors[at])
                    .await
                    .map_err(storage)?;
            }
        }
        let model = self.semantic.as_ref().map(SemanticSearch::model);
        let marked: Option<(i64,)> = sqlx::query_as(sql(D::MEMORY.mark_added))
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(model)
            .fetch_optional(&mut *tx)
            .await
            .map_err(storage)?;
        if marked.is_none() {
            sqlx::query(sql(D::MEMORY.mark_first_added))
                .bind(scope.app_name)
                .bind(scope.user_id)
                .bind(model)
                .bind(session.id.as_str())
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)
    }

    /// Embeds, with the current model, the memories of the user that have no vector of it. The
    /// user's memories are looked through only when they are not known to be embedded by the
    /// current model already: on a large store that search costs as much as the ranking.
    async fn reembed(&self, semantic: &SemanticSearch, scope: Scope<'_>) -> Result<()> {
        let what = format!(
            "embedding the memory of user {} in app {} again",
            scope.user_id, scope.app_name
        );
        let storage = |error| Error::storage(&what, error);
        let marked: Option<(Option<String>, i64)> =
            sqlx::query_as(sql(D::MEMORY.select_embedded_with))
                .bind(scope.app_name)
                .bind(scope.user_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(storage)?;
        // Without a row nothing is known (memories of an older build may lack vectors): looking
        // once records the model, and a version no row has keeps a concurrent add's row as it is.
        let version = match marked {
            Some((Some(model), _)) if model == semantic.model() => return Ok(()),
            Some((_, version)) => version,
            None => -1,
        };
        let stale: Vec<(i64, String)> = sqlx::query_as(sql(D::MEMORY.select_stale))
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(semantic.model())
            .fetch_all(&self.pool)
            .await
            .map_err(storage)?;
        let texts: Vec<&str> = stale.iter().map(|(_, text)| text.as_str()).collect();
        let vectors = semantic.embed_chunks(&texts).await?;
        let mut conn = self.pool.acquire().await.map_err(storage)?;
        let mut tx = conn
            .begin_with(sql(D::MEMORY.begin_write))
            .await
            .map_err(storage)?;
        for ((id, text), vectors) in stale.iter().zip(&vectors) {
            // The session may have been added again meanwhile: only a row still holding the text
            // that was embedded takes its vectors.
            let current: Option<(i64,)> = sqlx::query_as(sql(D::MEMORY.lock_current))
                .bind(*id)
                .bind(text.as_str())
                .fetch_optional(&mut *tx)
                .await
                .map_err(storage)?;
            if current.is_none() {
                continue;
            }
            sqlx::query(sql(D::MEMORY.delete_vectors))
                .bind(*id)
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
            insert_vectors::<D>(&mut tx, *id, scope, semantic.model(), vectors)
                .await
                .map_err(storage)?;
        }
        sqlx::query(sql(D::MEMORY.mark_embedded))
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(semantic.model())
            .bind(version)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)
    }

    /// The user's memories found for `query`, best first.
    pub(crate) async fn search(
        &self,
        app_name: &str,
        user_id: &str,
        query: &str,
    ) -> Result<Vec<MemoryEntry>> {
        let what = format!("searching the memory of user {user_id} in app {app_name}");
        let storage = |error| Error::storage(&what, error);
        let scope = Scope { app_name, user_id };
        let semantic = self.semantic.as_ref().filter(|_| !query.trim().is_empty());
        let query_words: Vec<String> = words(query).into_iter().collect();
        // Without an embedder every match is returned; fusion looks as far down the keyword
        // ranking as down the vector ranking, and a vector ranking alone needs no keywords.
        let keyword_limit = match semantic {
            None => Some(None),
            Some(semantic) if semantic.fuses() => Some(Some(semantic.candidates())),
            Some(_) => None,
        };
        let by_keyword = match keyword_limit {
            Some(limit) if !query_words.is_empty() => {
                D::keyword_ranking(&self.pool, scope, &query_words, limit)
                    .await
                    .map_err(storage)?
            }
            _ => Vec::new(),
        };
        let ranked = match semantic {
            None => by_keyword,
            Some(semantic) => {
                self.reembed(semantic, scope).await?;
                let query_vector = semantic.embed_query(query).await?;
                let by_vector = D::vector_ranking(
                    &self.pool,
                    &self.ranker,
                    scope,
                    semantic.model(),
                    &query_vector,
                    semantic.candidates(),
                    &what,
                )
                .await?;
                semantic.rank(&by_keyword, &by_vector)
            }
        };
        let rows = D::entries(&self.pool, &ranked).await.map_err(storage)?;
        let mut entries = HashMap::with_capacity(rows.len());
        for (id, content, author, timestamp) in rows {
            let content: Content =
                serde_json::from_str(&content).map_err(|error| Error::corrupt(&what, error))?;
            entries.insert(id, MemoryEntry::new(content).with_origin(author, timestamp));
        }
        Ok(ranked
            .into_iter()
            .filter_map(|id| entries.remove(&id))
            .collect())
    }
}

/// The events of `session` that have text, as rows to store.
fn rows<D: MemoryDialect>(session: &Session, what: &str) -> Result<Vec<MemoryRow>> {
    // PostgreSQL's text cannot hold U+0000; the JSON copy escapes it, the text loses it.
    let storable = |text: String| {
        if D::TEXT_HOLDS_NUL {
            text
        } else {
            text.replace('\0', "\u{FFFD}")
        }
    };
    let mut rows = Vec::new();
    for event in &session.events {
        let Some(content) = event.content() else {
            continue;
        };
        let text = storable(content_text(content));
        let words: Vec<String> = words(&text).into_iter().collect();
        if words.is_empty() {
            continue;
        }
        let json = serde_json::to_string(content).map_err(|error| Error::corrupt(what, error))?;
        rows.push(MemoryRow {
            text,
            words,
            author: storable(event.author.clone()),
            timestamp: event.timestamp,
            content: json,
        });
    }
    Ok(rows)
}

/// Stores the chunk vectors of memory `id` (of unit length, as [`SemanticSearch`] makes them).
async fn insert_vectors<D: MemoryDialect>(
    conn: &mut D::Connection,
    id: i64,
    scope: Scope<'_>,
    model: &str,
    vectors: &[Vec<f32>],
) -> sqlx::Result<()>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    D::Arguments: IntoArguments<D>,
    for<'q> &'q str: Encode<'q, D> + Type<D>,
    i64: for<'q> Encode<'q, D> + Type<D>,
{
    for (chunk, vector) in vectors.iter().enumerate() {
        sqlx::query(sql(D::MEMORY.insert_vector))
            .bind(id)
            .bind(chunk as i64)
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(model)
            .bind(D::vector(vector))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// A statement of the dialect as sqlx takes it.
fn sql(statement: &'static str) -> SqlStr {
    statement.into_sql_str()
}
