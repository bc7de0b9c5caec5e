//! [`SqliteMemoryService`]: memories in a SQLite FTS5 table, ranked by BM25, and by meaning when
//! it holds an embedder: the vectors of their chunks in the `memory_vectors` table, as BLOBs of
//! little-endian `f32`, ranked by cosine similarity in Rust.

use std::collections::HashMap;
use std::path::Path;

use adk_core::{Content, MemoryEntry, Session};
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::error::{Error, Result};
use crate::keywords::{content_text, words};
use crate::semantic::{SemanticSearch, best, cosine};

/// The table of vectors beside the FTS5 table `memories`, created when a memory service opens the
/// database (it belongs to memory, not to the session layout, so it has no layout version).
const VECTOR_TABLE: &str = "\
CREATE TABLE IF NOT EXISTS memory_vectors (
    memory_id INTEGER NOT NULL,
    chunk     INTEGER NOT NULL,
    app_name  TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    model     TEXT    NOT NULL,
    vector    BLOB    NOT NULL,
    PRIMARY KEY (memory_id, chunk)
);
CREATE INDEX IF NOT EXISTS memory_vectors_by_user ON memory_vectors (app_name, user_id, model);";

/// Memories in the `memories` FTS5 table of a SQLite database (which may be the sessions' file).
///
/// Every event of an added session that has text becomes one row; adding the session again
/// replaces its rows. Without an embedder a search matches rows sharing any word with the query,
/// best (BM25) first. With one ([`with_semantic_search`](Self::with_semantic_search)) the chunks
/// of each row are embedded when the session is added and kept, with the model's name, in
/// `memory_vectors`; a search ranks the user's rows by the cosine similarity of their best chunk to
/// the query (computed in Rust over the user's vectors: brute force, see `docs/memory.md`), fused
/// with the keyword ranking unless [`Ranking::Vector`](crate::Ranking::Vector) is asked for.
/// Rows without a vector of the current model (added without an embedder, or with another model)
/// are embedded at the next search of their user.
#[derive(Debug)]
pub struct SqliteMemoryService {
    pool: SqlitePool,
    semantic: Option<SemanticSearch>,
}

impl SqliteMemoryService {
    /// Opens the database at `path`, creating it when missing, and brings its layout up to date.
    pub async fn open(path: impl AsRef<Path>) -> adk_core::Result<Self> {
        let pool = super::open_pool(path.as_ref())
            .await
            .map_err(Error::into_memory)?;
        sqlx::raw_sql(VECTOR_TABLE)
            .execute(&pool)
            .await
            .map_err(|error| Error::storage("creating the memory_vectors table", error))
            .map_err(Error::into_memory)?;
        Ok(Self {
            pool,
            semantic: None,
        })
    }

    /// Searches by meaning as `semantic` says, as well as by keyword.
    pub fn with_semantic_search(mut self, semantic: SemanticSearch) -> Self {
        self.semantic = Some(semantic);
        self
    }

    async fn add(&self, session: &Session) -> Result<()> {
        let what = format!("adding session {} to memory", session.id);
        let storage = |error| Error::storage(&what, error);
        let mut rows = Vec::new();
        for event in &session.events {
            let Some(content) = event.content() else {
                continue;
            };
            let text = content_text(content);
            if words(&text).is_empty() {
                continue;
            }
            let json =
                serde_json::to_string(content).map_err(|error| Error::corrupt(&what, error))?;
            rows.push((text, event.author.as_str(), event.timestamp, json));
        }
        // The embedder is called before the transaction, so that no write lock waits on it, and a
        // failing embedder leaves the stored memories as they were.
        let vectors = match &self.semantic {
            Some(semantic) => {
                let texts: Vec<&str> = rows.iter().map(|(text, ..)| text.as_str()).collect();
                Some(semantic.embed_chunks(&texts).await?)
            }
            None => None,
        };
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(storage)?;
        sqlx::query(
            "DELETE FROM memory_vectors WHERE memory_id IN (SELECT rowid FROM memories \
             WHERE app_name = ? AND user_id = ? AND session_id = ?)",
        )
        .bind(&session.app_name)
        .bind(&session.user_id)
        .bind(session.id.as_str())
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        sqlx::query("DELETE FROM memories WHERE app_name = ? AND user_id = ? AND session_id = ?")
            .bind(&session.app_name)
            .bind(&session.user_id)
            .bind(session.id.as_str())
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        for (at, (text, author, timestamp, json)) in rows.into_iter().enumerate() {
            let inserted = sqlx::query(
                "INSERT INTO memories (text, app_name, user_id, session_id, author, timestamp, content) \
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(text)
            .bind(&session.app_name)
            .bind(&session.user_id)
            .bind(session.id.as_str())
            .bind(author)
            .bind(timestamp)
            .bind(json)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
            if let (Some(semantic), Some(vectors)) = (&self.semantic, &vectors) {
                let memory_id = inserted.last_insert_rowid();
                let scope = (session.app_name.as_str(), session.user_id.as_str());
                insert_vectors(&mut tx, memory_id, scope, semantic.model(), &vectors[at])
                    .await
                    .map_err(storage)?;
            }
        }
        tx.commit().await.map_err(storage)
    }

    /// Embeds, with the current model, the memories of the user that have no vector of it.
    async fn reembed(
        &self,
        semantic: &SemanticSearch,
        app_name: &str,
        user_id: &str,
    ) -> Result<()> {
        let what = format!("embedding the memory of user {user_id} in app {app_name} again");
        let storage = |error| Error::storage(&what, error);
        let stale: Vec<(i64, String)> = sqlx::query_as(
            "SELECT rowid, text FROM memories WHERE app_name = ? AND user_id = ? AND NOT EXISTS \
             (SELECT 1 FROM memory_vectors WHERE memory_id = memories.rowid AND model = ?)",
        )
        .bind(app_name)
        .bind(user_id)
        .bind(semantic.model())
        .fetch_all(&self.pool)
        .await
        .map_err(storage)?;
        if stale.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = stale.iter().map(|(_, text)| text.as_str()).collect();
        let vectors = semantic.embed_chunks(&texts).await?;
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(storage)?;
        for ((memory_id, text), vectors) in stale.iter().zip(&vectors) {
            // The session may have been added again meanwhile: only a row still holding the text
            // that was embedded takes its vectors.
            let current: Option<(i64,)> =
                sqlx::query_as("SELECT rowid FROM memories WHERE rowid = ? AND text = ?")
                    .bind(memory_id)
                    .bind(text)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(storage)?;
            if current.is_none() {
                continue;
            }
            sqlx::query("DELETE FROM memory_vectors WHERE memory_id = ?")
                .bind(memory_id)
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
            insert_vectors(
                &mut tx,
                *memory_id,
                (app_name, user_id),
                semantic.model(),
                vectors,
            )
            .await
            .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)
    }

    async fn search(&self, app_name: &str, user_id: &str, query: &str) -> Result<Vec<MemoryEntry>> {
        let what = format!("searching the memory of user {user_id} in app {app_name}");
        let storage = |error| Error::storage(&what, error);
        let by_keyword = self.keyword_search(app_name, user_id, query, &what).await?;
        let Some(semantic) = self.semantic.as_ref().filter(|_| !query.trim().is_empty()) else {
            return Ok(by_keyword.into_iter().map(|(_, entry)| entry).collect());
        };
        self.reembed(semantic, app_name, user_id).await?;
        let query_vector = semantic.embed_query(query).await?;
        let stored: Vec<(i64, Vec<u8>)> = sqlx::query_as(
            "SELECT memory_id, vector FROM memory_vectors \
             WHERE app_name = ? AND user_id = ? AND model = ?",
        )
        .bind(app_name)
        .bind(user_id)
        .bind(semantic.model())
        .fetch_all(&self.pool)
        .await
        .map_err(storage)?;
        let mut similarity: HashMap<i64, f32> = HashMap::new();
        for (memory_id, blob) in &stored {
            let score = cosine(&decode_vector(blob, &what)?, &query_vector);
            let best = similarity.entry(*memory_id).or_insert(f32::MIN);
            *best = best.max(score);
        }
        let by_vector = best(similarity.into_iter().collect(), semantic.candidates());
        let keyword_ids: Vec<i64> = by_keyword.iter().map(|(id, _)| *id).collect();
        let ranked = semantic.rank(&keyword_ids, &by_vector);
        let mut entries: HashMap<i64, MemoryEntry> = by_keyword.into_iter().collect();
        let missing: Vec<i64> = ranked
            .iter()
            .copied()
            .filter(|id| !entries.contains_key(id))
            .collect();
        entries.extend(self.entries(&missing, &what).await?);
        Ok(ranked
            .into_iter()
            .filter_map(|id| entries.remove(&id))
            .collect())
    }

    /// The rows sharing a word with `query`, best (BM25) first, with their ids.
    async fn keyword_search(
        &self,
        app_name: &str,
        user_id: &str,
        query: &str,
        what: &str,
    ) -> Result<Vec<(i64, MemoryEntry)>> {
        // Words are letters and digits only, so quoting each one makes a safe FTS5 query.
        let terms: Vec<String> = words(query)
            .into_iter()
            .map(|word| format!("\"{word}\""))
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(i64, String, String, f64)> = sqlx::query_as(
            "SELECT rowid, content, author, timestamp FROM memories \
             WHERE memories MATCH ? AND app_name = ? AND user_id = ? ORDER BY rank",
        )
        .bind(terms.join(" OR "))
        .bind(app_name)
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|error| Error::storage(what, error))?;
        rows.into_iter().map(|row| read_entry(row, what)).collect()
    }

    /// The rows of `ids`, in no order.
    async fn entries(&self, ids: &[i64], what: &str) -> Result<Vec<(i64, MemoryEntry)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = QueryBuilder::<Sqlite>::new(
            "SELECT rowid, content, author, timestamp FROM memories WHERE rowid IN (",
        );
        let mut list = query.separated(", ");
        for id in ids {
            list.push_bind(id);
        }
        query.push(")");
        let rows: Vec<(i64, String, String, f64)> = query
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(|error| Error::storage(what, error))?;
        rows.into_iter().map(|row| read_entry(row, what)).collect()
    }
}

/// A row of `memories` as a memory entry with its id.
fn read_entry(
    (id, content, author, timestamp): (i64, String, String, f64),
    what: &str,
) -> Result<(i64, MemoryEntry)> {
    let content: Content =
        serde_json::from_str(&content).map_err(|error| Error::corrupt(what, error))?;
    Ok((id, MemoryEntry::new(content).with_origin(author, timestamp)))
}

/// Stores the chunk vectors of memory `memory_id`.
async fn insert_vectors(
    tx: &mut sqlx::SqliteConnection,
    memory_id: i64,
    (app_name, user_id): (&str, &str),
    model: &str,
    vectors: &[Vec<f32>],
) -> sqlx::Result<()> {
    for (chunk, vector) in vectors.iter().enumerate() {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        sqlx::query(
            "INSERT INTO memory_vectors (memory_id, chunk, app_name, user_id, model, vector) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(memory_id)
        .bind(chunk as i64)
        .bind(app_name)
        .bind(user_id)
        .bind(model)
        .bind(blob)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A stored vector: little-endian `f32`s.
fn decode_vector(blob: &[u8], what: &str) -> Result<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::corrupt(
            what,
            format!(
                "a stored vector has {} bytes, not a multiple of 4",
                blob.len()
            ),
        ));
    }
    Ok(blob
        .chunks_exact(4)
        .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        .collect())
}

crate::boundary::memory_service!(SqliteMemoryService);
