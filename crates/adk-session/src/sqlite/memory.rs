//! [`SqliteMemoryService`]: memories in a SQLite FTS5 table, ranked by BM25, and by meaning when
//! it holds an embedder: the vectors of their chunks in the `memory_vectors` table, as BLOBs of
//! little-endian `f32` of unit length, ranked by their dot product with the query in Rust. The
//! service itself is [`SqlMemory`]; this module holds SQLite's [`MemoryDialect`].

use std::path::Path;

use adk_core::Session;
use futures::TryStreamExt as _;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};

use crate::error::{Error, Result};
use crate::semantic::{BestChunks, SemanticSearch};
use crate::sql::memory::{EntryRow, MemoryDialect, MemoryRow, MemoryStatements, Scope, SqlMemory};

/// The table of vectors beside the FTS5 table `memories` (created with the session layout),
/// created when a memory service opens the database: it belongs to memory, not to the session
/// layout, so it has no layout version.
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
CREATE INDEX IF NOT EXISTS memory_vectors_by_user ON memory_vectors (app_name, user_id, model);
CREATE TABLE IF NOT EXISTS memory_scopes (
    app_name      TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    embedded_with TEXT,
    version       INTEGER NOT NULL,
    PRIMARY KEY (app_name, user_id)
);";

impl MemoryDialect for Sqlite {
    const MEMORY: MemoryStatements = MemoryStatements {
        // Writers take the database's write lock at once, so two never deadlock upgrading.
        begin_write: "BEGIN IMMEDIATE",
        // FTS5 tables have no foreign keys, so the vectors go first, by the rows they belong to.
        delete_session: &[
            "DELETE FROM memory_vectors WHERE memory_id IN (SELECT rowid FROM memories \
             WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3)",
            "DELETE FROM memories WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3",
        ],
        select_stale: "SELECT rowid, text FROM memories WHERE app_name = ?1 AND user_id = ?2 \
            AND NOT EXISTS (SELECT 1 FROM memory_vectors \
            WHERE memory_id = memories.rowid AND model = ?3)",
        select_embedded_with: "SELECT embedded_with, version FROM memory_scopes \
            WHERE app_name = ?1 AND user_id = ?2",
        mark_added: "UPDATE memory_scopes SET version = version + 1, embedded_with = \
            CASE WHEN embedded_with = ?3 THEN embedded_with END \
            WHERE app_name = ?1 AND user_id = ?2 RETURNING version",
        // The write transaction keeps every other writer out, so the row is still missing. The
        // select needs its WHERE for SQLite to read the upsert without ambiguity.
        mark_first_added: "INSERT INTO memory_scopes (app_name, user_id, embedded_with, version) \
            SELECT ?1, ?2, CASE WHEN EXISTS (SELECT 1 FROM memories WHERE app_name = ?1 \
            AND user_id = ?2 AND session_id <> ?4) THEN NULL ELSE ?3 END, 0 WHERE true",
        mark_embedded: "INSERT INTO memory_scopes (app_name, user_id, embedded_with, version) \
            VALUES (?1, ?2, ?3, 0) ON CONFLICT (app_name, user_id) \
            DO UPDATE SET embedded_with = excluded.embedded_with \
            WHERE memory_scopes.version = ?4",
        // The write transaction keeps every other writer out.
        lock_current: "SELECT rowid FROM memories WHERE rowid = ?1 AND text = ?2",
        delete_vectors: "DELETE FROM memory_vectors WHERE memory_id = ?1",
        insert_vector: "INSERT INTO memory_vectors \
            (memory_id, chunk, app_name, user_id, model, vector) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    };
    const TEXT_HOLDS_NUL: bool = true;

    type Vector = Vec<u8>;
    type Ranker = ();

    fn vector(unit: &[f32]) -> Vec<u8> {
        unit.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    async fn create_tables(pool: &SqlitePool) -> sqlx::Result<()> {
        sqlx::raw_sql(VECTOR_TABLE).execute(pool).await.map(drop)
    }

    async fn insert_memory(
        conn: &mut SqliteConnection,
        session: &Session,
        row: &MemoryRow,
    ) -> sqlx::Result<i64> {
        let inserted = sqlx::query(
            "INSERT INTO memories (text, app_name, user_id, session_id, author, timestamp, content) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(row.text.as_str())
        .bind(session.app_name.as_str())
        .bind(session.user_id.as_str())
        .bind(session.id.as_str())
        .bind(row.author.as_str())
        .bind(row.timestamp)
        .bind(row.content.as_str())
        .execute(conn)
        .await?;
        Ok(inserted.last_insert_rowid())
    }

    async fn keyword_ranking(
        pool: &SqlitePool,
        scope: Scope<'_>,
        words: &[String],
        limit: Option<usize>,
    ) -> sqlx::Result<Vec<i64>> {
        // Words are letters and digits only, so quoting each one makes a safe FTS5 query.
        let terms: Vec<String> = words.iter().map(|word| format!("\"{word}\"")).collect();
        let ids: Vec<(i64,)> = sqlx::query_as(
            "SELECT rowid FROM memories WHERE memories MATCH ?1 AND app_name = ?2 \
             AND user_id = ?3 ORDER BY rank LIMIT ?4",
        )
        .bind(terms.join(" OR "))
        .bind(scope.app_name)
        .bind(scope.user_id)
        .bind(limit.map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX)))
        .fetch_all(pool)
        .await?;
        Ok(ids.into_iter().map(|(id,)| id).collect())
    }

    /// Brute force in Rust (SQLite has no vector type, and a vector extension would need `unsafe`
    /// FFI, which the workspace forbids): the user's vectors are streamed, never all held, each
    /// scored straight from its bytes, and only the best memories sorted.
    async fn vector_ranking(
        pool: &SqlitePool,
        _ranker: &(),
        scope: Scope<'_>,
        model: &str,
        query: &[f32],
        count: usize,
        what: &str,
    ) -> Result<Vec<i64>> {
        let mut rows = sqlx::query_as::<_, (i64, Vec<u8>)>(
            "SELECT memory_id, vector FROM memory_vectors \
             WHERE app_name = ?1 AND user_id = ?2 AND model = ?3",
        )
        .bind(scope.app_name)
        .bind(scope.user_id)
        .bind(model)
        .fetch(pool);
        let mut similarity = BestChunks::default();
        while let Some((id, blob)) = rows
            .try_next()
            .await
            .map_err(|error| Error::storage(what, error))?
        {
            let score = dot_le_bytes(&blob, query).map_err(|error| Error::corrupt(what, error))?;
            similarity.offer(id, score);
        }
        Ok(similarity.best(count))
    }

    async fn entries(pool: &SqlitePool, ids: &[i64]) -> sqlx::Result<Vec<EntryRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // One JSON array bound as text: no limit on how many ids, unlike an `IN` list of
        // placeholders.
        let ids = serde_json::Value::from(ids).to_string();
        sqlx::query_as(
            "SELECT rowid, content, author, timestamp FROM memories \
             WHERE rowid IN (SELECT value FROM json_each(?1))",
        )
        .bind(ids)
        .fetch_all(pool)
        .await
    }
}

/// The dot product of a stored vector (little-endian `f32`s) with `query`; 0 when their lengths
/// differ.
fn dot_le_bytes(blob: &[u8], query: &[f32]) -> std::result::Result<f32, String> {
    if !blob.len().is_multiple_of(4) {
        return Err(format!(
            "a stored vector has {} bytes, not a multiple of 4",
            blob.len()
        ));
    }
    if blob.len() != query.len() * 4 {
        return Ok(0.0);
    }
    Ok(blob
        .chunks_exact(4)
        .zip(query)
        .map(|(bytes, q)| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) * q)
        .sum())
}

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
#[derive(Debug, Clone)]
pub struct SqliteMemoryService {
    memory: SqlMemory<Sqlite>,
}

impl SqliteMemoryService {
    /// Opens the database at `path`, creating it when missing, and brings its layout up to date.
    pub async fn open(path: impl AsRef<Path>) -> adk_core::Result<Self> {
        let pool = super::open_pool(path.as_ref())
            .await
            .map_err(Error::into_memory)?;
        let memory = SqlMemory::new(pool).await.map_err(Error::into_memory)?;
        Ok(Self { memory })
    }

    /// Searches by meaning as `semantic` says, as well as by keyword.
    pub fn with_semantic_search(self, semantic: SemanticSearch) -> Self {
        Self {
            memory: self.memory.with_semantic_search(semantic),
        }
    }
}

crate::boundary::memory_service!(SqliteMemoryService, |service| service.memory);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_vectors_are_scored_from_their_bytes() {
        let blob = Sqlite::vector(&[0.6, 0.8]);
        assert_eq!(blob.len(), 8);
        assert!((dot_le_bytes(&blob, &[0.6, 0.8]).unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(dot_le_bytes(&blob, &[1.0]).unwrap(), 0.0);
        assert!(dot_le_bytes(&blob[..7], &[1.0, 1.0]).is_err());
    }
}
