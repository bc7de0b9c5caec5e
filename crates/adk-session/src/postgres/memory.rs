//! [`PostgresMemoryService`]: memories in PostgreSQL, found by shared words, and by meaning when it
//! holds an embedder: chunk vectors as `real[]` arrays, ranked by cosine similarity in SQL.

use adk_core::{Content, MemoryEntry, Session};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::error::{Error, Result};
use crate::keywords::{content_text, words};
use crate::semantic::SemanticSearch;

/// The memory tables, created when a memory service connects (under an advisory lock, so that
/// servers starting together do not race on the DDL).
const TABLES: &str = "\
CREATE TABLE IF NOT EXISTS adk_memories (
    id         BIGSERIAL PRIMARY KEY,
    app_name   TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    author     TEXT NOT NULL,
    timestamp  DOUBLE PRECISION NOT NULL,
    text       TEXT NOT NULL,
    words      TEXT[] NOT NULL,
    content    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adk_memories_by_session ON adk_memories (app_name, user_id, session_id);
CREATE TABLE IF NOT EXISTS adk_memory_vectors (
    memory_id BIGINT NOT NULL REFERENCES adk_memories (id) ON DELETE CASCADE,
    chunk     INTEGER NOT NULL,
    app_name  TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    model     TEXT NOT NULL,
    norm      REAL NOT NULL,
    vector    REAL[] NOT NULL,
    PRIMARY KEY (memory_id, chunk)
);
CREATE INDEX IF NOT EXISTS adk_memory_vectors_by_user ON adk_memory_vectors (app_name, user_id, model);";

/// The advisory lock key taken while the tables are created: "adkmemry" in ASCII.
const DDL_LOCK: i64 = 0x61646b6d656d7279;

/// Memories in the `adk_memories` table of a PostgreSQL database (which may be the sessions').
///
/// Every event of an added session that has text becomes one row; adding the session again
/// replaces its rows. Without an embedder, a search matches rows sharing a word with the query
/// (more shared words first, then newer), as the in-memory service does. With one
/// ([`with_semantic_search`](Self::with_semantic_search)) the chunks of each row are embedded when
/// the session is added and kept as `real[]` in `adk_memory_vectors` with the model's name; a
/// search ranks the user's rows by cosine similarity in SQL (over the user's vectors, without an
/// index: pgvector is not used), fused with the keyword ranking unless
/// [`Ranking::Vector`](crate::Ranking::Vector) is asked for. Rows without a vector of the current
/// model are embedded at the next search of their user.
#[derive(Debug, Clone)]
pub struct PostgresMemoryService {
    pool: PgPool,
    semantic: Option<SemanticSearch>,
}

impl PostgresMemoryService {
    /// Connects to the database at `url` and creates the memory tables when missing.
    pub async fn connect(url: &str) -> adk_core::Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect(url)
            .await
            .map_err(|error| Error::storage("connecting to PostgreSQL", error).into_memory())?;
        Self::from_pool(pool).await
    }

    /// Uses `pool` and creates the memory tables when missing.
    pub async fn from_pool(pool: PgPool) -> adk_core::Result<Self> {
        let storage = |error| Error::storage("creating the memory tables", error).into_memory();
        let mut tx = pool.begin().await.map_err(storage)?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(DDL_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        sqlx::raw_sql(TABLES)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)?;
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
            // PostgreSQL's text cannot hold U+0000; the JSON copy escapes it, the text loses it.
            let text = content_text(content).replace('\0', "\u{FFFD}");
            let words: Vec<String> = words(&text).into_iter().collect();
            if words.is_empty() {
                continue;
            }
            let json =
                serde_json::to_string(content).map_err(|error| Error::corrupt(&what, error))?;
            rows.push((
                text,
                words,
                event.author.replace('\0', "\u{FFFD}"),
                event.timestamp,
                json,
            ));
        }
        // The embedder is called before the transaction, so a failing one changes nothing.
        let vectors = match &self.semantic {
            Some(semantic) => {
                let texts: Vec<&str> = rows.iter().map(|(text, ..)| text.as_str()).collect();
                Some(semantic.embed_chunks(&texts).await?)
            }
            None => None,
        };
        let mut tx = self.pool.begin().await.map_err(storage)?;
        sqlx::query(
            "DELETE FROM adk_memories WHERE app_name = $1 AND user_id = $2 AND session_id = $3",
        )
        .bind(&session.app_name)
        .bind(&session.user_id)
        .bind(session.id.as_str())
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        for (at, (text, words, author, timestamp, json)) in rows.into_iter().enumerate() {
            let (id,): (i64,) = sqlx::query_as(
                "INSERT INTO adk_memories \
                 (app_name, user_id, session_id, author, timestamp, text, words, content) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(&session.app_name)
            .bind(&session.user_id)
            .bind(session.id.as_str())
            .bind(author)
            .bind(timestamp)
            .bind(text)
            .bind(words)
            .bind(json)
            .fetch_one(&mut *tx)
            .await
            .map_err(storage)?;
            if let (Some(semantic), Some(vectors)) = (&self.semantic, &vectors) {
                let scope = (session.app_name.as_str(), session.user_id.as_str());
                insert_vectors(&mut tx, id, scope, semantic.model(), &vectors[at])
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
            "SELECT id, text FROM adk_memories m WHERE app_name = $1 AND user_id = $2 AND NOT \
             EXISTS (SELECT 1 FROM adk_memory_vectors v WHERE v.memory_id = m.id AND v.model = $3)",
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
        let mut tx = self.pool.begin().await.map_err(storage)?;
        for ((id, text), vectors) in stale.iter().zip(&vectors) {
            // Only a row still holding the embedded text (locked until the commit) takes them.
            let current: Option<(i64,)> = sqlx::query_as(
                "SELECT id FROM adk_memories WHERE id = $1 AND text = $2 FOR UPDATE",
            )
            .bind(id)
            .bind(text)
            .fetch_optional(&mut *tx)
            .await
            .map_err(storage)?;
            if current.is_none() {
                continue;
            }
            sqlx::query("DELETE FROM adk_memory_vectors WHERE memory_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
            insert_vectors(&mut tx, *id, (app_name, user_id), semantic.model(), vectors)
                .await
                .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)
    }

    async fn search(&self, app_name: &str, user_id: &str, query: &str) -> Result<Vec<MemoryEntry>> {
        let what = format!("searching the memory of user {user_id} in app {app_name}");
        let storage = |error| Error::storage(&what, error);
        let query_words: Vec<String> = words(query).into_iter().collect();
        let by_keyword: Vec<(i64,)> = if query_words.is_empty() {
            Vec::new()
        } else {
            sqlx::query_as(
                "SELECT id FROM adk_memories WHERE app_name = $1 AND user_id = $2 AND words && $3 \
                 ORDER BY (SELECT count(*) FROM unnest(words) AS w WHERE w = ANY($3)) DESC, \
                 timestamp DESC, id",
            )
            .bind(app_name)
            .bind(user_id)
            .bind(&query_words)
            .fetch_all(&self.pool)
            .await
            .map_err(storage)?
        };
        let by_keyword: Vec<i64> = by_keyword.into_iter().map(|(id,)| id).collect();
        let ranked = match self.semantic.as_ref().filter(|_| !query.trim().is_empty()) {
            None => by_keyword,
            Some(semantic) => {
                self.reembed(semantic, app_name, user_id).await?;
                let query_vector = semantic.embed_query(query).await?;
                let norm = query_vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                let by_vector: Vec<(i64,)> = sqlx::query_as(
                    "SELECT memory_id FROM ( \
                       SELECT memory_id, \
                         (SELECT sum(a * b) FROM unnest(vector, $4::real[]) AS t(a, b)) \
                           / NULLIF(norm * $5, 0) AS similarity \
                       FROM adk_memory_vectors \
                       WHERE app_name = $1 AND user_id = $2 AND model = $3 \
                     ) AS scored \
                     GROUP BY memory_id ORDER BY max(similarity) DESC NULLS LAST, memory_id \
                     LIMIT $6",
                )
                .bind(app_name)
                .bind(user_id)
                .bind(semantic.model())
                .bind(&query_vector)
                .bind(norm)
                .bind(semantic.candidates() as i64)
                .fetch_all(&self.pool)
                .await
                .map_err(storage)?;
                let by_vector: Vec<i64> = by_vector.into_iter().map(|(id,)| id).collect();
                semantic.rank(&by_keyword, &by_vector)
            }
        };
        let rows: Vec<(i64, String, String, f64)> = sqlx::query_as(
            "SELECT id, content, author, timestamp FROM adk_memories WHERE id = ANY($1)",
        )
        .bind(&ranked)
        .fetch_all(&self.pool)
        .await
        .map_err(storage)?;
        let mut entries = std::collections::HashMap::with_capacity(rows.len());
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

/// Stores the chunk vectors of memory `memory_id` with their norms.
async fn insert_vectors(
    tx: &mut sqlx::PgConnection,
    memory_id: i64,
    (app_name, user_id): (&str, &str),
    model: &str,
    vectors: &[Vec<f32>],
) -> sqlx::Result<()> {
    for (chunk, vector) in vectors.iter().enumerate() {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        sqlx::query(
            "INSERT INTO adk_memory_vectors \
             (memory_id, chunk, app_name, user_id, model, norm, vector) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(memory_id)
        .bind(chunk as i32)
        .bind(app_name)
        .bind(user_id)
        .bind(model)
        .bind(norm)
        .bind(vector)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

crate::boundary::memory_service!(PostgresMemoryService);
