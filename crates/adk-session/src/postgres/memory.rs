//! [`PostgresMemoryService`]: memories in PostgreSQL, found by shared words, and by meaning when it
//! holds an embedder: chunk vectors of unit length as `real[]` arrays, ranked by pgvector's inner
//! product in the database when the `vector` extension is available, else streamed out and scored
//! by their dot product with the query here. The service itself is [`SqlMemory`]; this module holds PostgreSQL's
//! [`MemoryDialect`].

use adk_core::{BoxError, Session};
use futures::TryStreamExt as _;
use sqlx::postgres::{PgPoolOptions, PgValueFormat, PgValueRef};
use sqlx::{PgConnection, PgPool, Postgres, Row as _};

use crate::error::{Error, Result};
use crate::semantic::{BestChunks, SemanticSearch};
use crate::sql::memory::{EntryRow, MemoryDialect, MemoryRow, MemoryStatements, Scope, SqlMemory};

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
    vector    REAL[] NOT NULL,
    PRIMARY KEY (memory_id, chunk)
);
CREATE INDEX IF NOT EXISTS adk_memory_vectors_by_user ON adk_memory_vectors (app_name, user_id, model);
CREATE TABLE IF NOT EXISTS adk_memory_scopes (
    app_name      TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    embedded_with TEXT,
    version       BIGINT NOT NULL,
    PRIMARY KEY (app_name, user_id)
);
-- Vectors are stored at unit length now; the norm an earlier build stored beside them is unused.
ALTER TABLE adk_memory_vectors DROP COLUMN IF EXISTS norm;";

/// The advisory lock key taken while the tables are created: "adkmemry" in ASCII.
const DDL_LOCK: i64 = 0x61646b6d656d7279;

impl MemoryDialect for Postgres {
    const MEMORY: MemoryStatements = MemoryStatements {
        begin_write: "BEGIN",
        // The vectors go with their memories (ON DELETE CASCADE).
        delete_session: &[
            "DELETE FROM adk_memories WHERE app_name = $1 AND user_id = $2 AND session_id = $3",
        ],
        // A set difference of two index scans, hashed or sorted: linear in the user's memories
        // whatever the statistics. As `NOT EXISTS`, right after a bulk insert (no statistics yet)
        // it was planned as a nested loop scanning the whole model index for every memory: 3.9 s
        // at 10,000 memories and over 30 s at 100,000, against 23 ms and 390 ms this way.
        select_stale: "SELECT id, text FROM adk_memories WHERE id IN ( \
            SELECT id FROM adk_memories WHERE app_name = $1 AND user_id = $2 \
            EXCEPT SELECT memory_id FROM adk_memory_vectors \
            WHERE app_name = $1 AND user_id = $2 AND model = $3)",
        select_embedded_with: "SELECT embedded_with, version FROM adk_memory_scopes \
            WHERE app_name = $1 AND user_id = $2",
        mark_added: "UPDATE adk_memory_scopes SET version = version + 1, embedded_with = \
            CASE WHEN embedded_with = $3 THEN embedded_with END \
            WHERE app_name = $1 AND user_id = $2 RETURNING version",
        // Two first adds of one user may run together: the second waits for the first's row and
        // then updates it as `mark_added` would have.
        mark_first_added: "INSERT INTO adk_memory_scopes AS s \
            (app_name, user_id, embedded_with, version) \
            SELECT $1, $2, CASE WHEN EXISTS (SELECT 1 FROM adk_memories WHERE app_name = $1 \
            AND user_id = $2 AND session_id <> $4) THEN NULL ELSE $3 END, 0 \
            ON CONFLICT (app_name, user_id) DO UPDATE SET version = s.version + 1, \
            embedded_with = CASE WHEN s.embedded_with = excluded.embedded_with \
            THEN s.embedded_with END",
        mark_embedded: "INSERT INTO adk_memory_scopes AS s \
            (app_name, user_id, embedded_with, version) VALUES ($1, $2, $3, 0) \
            ON CONFLICT (app_name, user_id) DO UPDATE SET embedded_with = excluded.embedded_with \
            WHERE s.version = $4",
        // Writers do not keep each other out of the database: the row is locked until the commit.
        lock_current: "SELECT id FROM adk_memories WHERE id = $1 AND text = $2 FOR UPDATE",
        delete_vectors: "DELETE FROM adk_memory_vectors WHERE memory_id = $1",
        insert_vector: "INSERT INTO adk_memory_vectors \
            (memory_id, chunk, app_name, user_id, model, vector) \
            VALUES ($1, $2, $3, $4, $5, $6)",
    };
    const TEXT_HOLDS_NUL: bool = false;

    type Vector = Vec<f32>;
    type Ranker = PgRanker;

    fn vector(unit: &[f32]) -> Vec<f32> {
        unit.to_vec()
    }

    async fn create_tables(pool: &PgPool) -> sqlx::Result<PgRanker> {
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(DDL_LOCK)
            .execute(&mut *tx)
            .await?;
        sqlx::raw_sql(TABLES).execute(&mut *tx).await?;
        tx.commit().await?;
        PgRanker::find(pool).await
    }

    async fn insert_memory(
        conn: &mut PgConnection,
        session: &Session,
        row: &MemoryRow,
    ) -> sqlx::Result<i64> {
        sqlx::query_scalar(
            "INSERT INTO adk_memories \
             (app_name, user_id, session_id, author, timestamp, text, words, content) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(session.app_name.as_str())
        .bind(session.user_id.as_str())
        .bind(session.id.as_str())
        .bind(row.author.as_str())
        .bind(row.timestamp)
        .bind(row.text.as_str())
        .bind(&row.words)
        .bind(row.content.as_str())
        .fetch_one(conn)
        .await
    }

    /// More shared words first, then newer memories, as the in-memory service ranks.
    async fn keyword_ranking(
        pool: &PgPool,
        scope: Scope<'_>,
        words: &[String],
        limit: Option<usize>,
    ) -> sqlx::Result<Vec<i64>> {
        sqlx::query_scalar(
            "SELECT id FROM adk_memories WHERE app_name = $1 AND user_id = $2 AND words && $3 \
             ORDER BY (SELECT count(*) FROM unnest(words) AS w WHERE w = ANY($3)) DESC, \
             timestamp DESC, id LIMIT $4",
        )
        .bind(scope.app_name)
        .bind(scope.user_id)
        .bind(words)
        .bind(limit.map(|limit| i64::try_from(limit).unwrap_or(i64::MAX)))
        .fetch_all(pool)
        .await
    }

    /// With pgvector, ranked in the database so that only the best ids cross the connection;
    /// without it, the user's vectors stream in and are scored here (see [`PgRanker`]).
    async fn vector_ranking(
        pool: &PgPool,
        ranker: &PgRanker,
        scope: Scope<'_>,
        model: &str,
        query: &[f32],
        count: usize,
        what: &str,
    ) -> Result<Vec<i64>> {
        let PgRanker::Pgvector = ranker else {
            let storage = |error| Error::storage(what, error);
            let mut rows = sqlx::query(
                "SELECT memory_id, vector FROM adk_memory_vectors \
                 WHERE app_name = $1 AND user_id = $2 AND model = $3",
            )
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(model)
            .fetch(pool);
            let mut similarity = BestChunks::default();
            while let Some(row) = rows.try_next().await.map_err(storage)? {
                let id: i64 = row.try_get(0).map_err(storage)?;
                let vector = row.try_get_raw(1).map_err(storage)?;
                let score =
                    dot_real_array(vector, query).map_err(|error| Error::corrupt(what, error))?;
                similarity.offer(id, score);
            }
            return Ok(similarity.best(count));
        };
        sqlx::query_scalar(PGVECTOR_RANKING)
            .bind(scope.app_name)
            .bind(scope.user_id)
            .bind(model)
            .bind(query)
            .bind(i64::try_from(count).unwrap_or(i64::MAX))
            .fetch_all(pool)
            .await
            .map_err(|error| Error::storage(what, error))
    }

    async fn entries(pool: &PgPool, ids: &[i64]) -> sqlx::Result<Vec<EntryRow>> {
        sqlx::query_as("SELECT id, content, author, timestamp FROM adk_memories WHERE id = ANY($1)")
            .bind(ids)
            .fetch_all(pool)
            .await
    }
}

/// The dot product of `query` with a stored `real[]` as PostgreSQL sends it, read in place: sqlx's
/// decoding into a `Vec<f32>` handles each number on its own and allocates for every row. 0 when
/// the lengths differ, as [`adk_core::ranking::dot`] answers.
fn dot_real_array(value: PgValueRef<'_>, query: &[f32]) -> std::result::Result<f32, BoxError> {
    if value.format() != PgValueFormat::Binary {
        return Err("a stored vector came as text, not in binary".into());
    }
    Ok(dot_binary_array(value.as_bytes()?, query)?)
}

/// The object id of PostgreSQL's `real` (`float4`), the element type of stored vectors.
const FLOAT4_OID: u32 = 700;

/// [`dot_real_array`] over the bytes of PostgreSQL's binary array format: the number of
/// dimensions, a flags word and the element type's object id; for each dimension its length and
/// lower bound; then each element as its byte length (-1 for NULL) and its bytes, big-endian.
fn dot_binary_array(bytes: &[u8], query: &[f32]) -> std::result::Result<f32, String> {
    let cut_short = || format!("a stored vector of {} bytes is cut short", bytes.len());
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|word| u32::from_be_bytes([word[0], word[1], word[2], word[3]]))
            .ok_or_else(cut_short)
    };
    match word(0)? {
        // An empty array has no dimensions, and no length to match the query's.
        0 => return Ok(0.0),
        1 => {}
        dimensions => return Err(format!("a stored vector has {dimensions} dimensions")),
    }
    let element_type = word(8)?;
    if element_type != FLOAT4_OID {
        return Err(format!(
            "a stored vector holds elements of type {element_type}, not real"
        ));
    }
    let len = usize::try_from(word(12)?).map_err(|error| error.to_string())?;
    let elements = bytes.get(20..).ok_or_else(cut_short)?;
    if elements.len() != len.saturating_mul(8) {
        return Err(format!(
            "a stored vector of {len} numbers holds {} bytes of them",
            elements.len()
        ));
    }
    if len != query.len() {
        return Ok(0.0);
    }
    let mut sum = 0.0;
    for (element, q) in elements.chunks_exact(8).zip(query) {
        if element[..4] != [0, 0, 0, 4] {
            return Err("a stored vector holds a NULL".to_owned());
        }
        sum += f32::from_be_bytes([element[4], element[5], element[6], element[7]]) * q;
    }
    Ok(sum)
}

/// How PostgreSQL's stored vectors are ranked: both take the dot product of each of the user's
/// vectors (of unit length, so the dot product is the cosine similarity) with the query and keep
/// each memory's best chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PgRanker {
    /// The user's `real[]` vectors streamed out and scored here, in any PostgreSQL: a dot product
    /// over `unnest` in SQL took seconds from 10,000 chunks on.
    Arrays,
    /// With pgvector's negative inner product `<#>` on the arrays cast to its `vector` type,
    /// computed in C, when the extension is installed in the database or can be created there.
    Pgvector,
}

impl PgRanker {
    /// Whether pgvector can be used: installed in the database, or available and created now
    /// (which needs the right to create it; without it, arrays are ranked as without pgvector).
    async fn find(pool: &PgPool) -> sqlx::Result<Self> {
        let (installed, available): (bool, bool) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'), \
             EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
        )
        .fetch_one(pool)
        .await?;
        if installed {
            return Ok(Self::Pgvector);
        }
        if !available {
            return Ok(Self::Arrays);
        }
        match sqlx::query("CREATE EXTENSION IF NOT EXISTS vector")
            .execute(pool)
            .await
        {
            Ok(_) => Ok(Self::Pgvector),
            // Not allowed to create it: the array ranking works without.
            Err(sqlx::Error::Database(_)) => Ok(Self::Arrays),
            Err(error) => Err(error),
        }
    }
}

/// pgvector's ranking statement: binds app, user, model, the query vector and how many ids;
/// returns memory ids, the best first. `<#>` is the negative inner product, so the best chunk has
/// the least.
const PGVECTOR_RANKING: &str = "SELECT memory_id FROM adk_memory_vectors \
     WHERE app_name = $1 AND user_id = $2 AND model = $3 \
     GROUP BY memory_id \
     ORDER BY min(vector::vector <#> $4::real[]::vector) ASC NULLS LAST, memory_id LIMIT $5";

/// Memories in the `adk_memories` table of a PostgreSQL database (which may be the sessions').
///
/// Every event of an added session that has text becomes one row; adding the session again
/// replaces its rows. Without an embedder, a search matches rows sharing a word with the query
/// (more shared words first, then newer), as the in-memory service does. With one
/// ([`with_semantic_search`](Self::with_semantic_search)) the chunks of each row are embedded when
/// the session is added and kept as `real[]` of unit length in `adk_memory_vectors` with the
/// model's name; a search ranks the user's rows by cosine similarity (with pgvector in the
/// database, else over the user's vectors streamed out; without an index), fused with the
/// keyword ranking unless [`Ranking::Vector`](crate::Ranking::Vector) is asked for. Rows without a vector of the current
/// model are embedded at the next search of their user.
#[derive(Debug, Clone)]
pub struct PostgresMemoryService {
    memory: SqlMemory<Postgres>,
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

crate::boundary::memory_service!(PostgresMemoryService, |service| service.memory);

#[cfg(test)]
mod tests {
    use adk_core::{IdGen as _, UuidIdGen};
    use sqlx::AssertSqlSafe;
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

    use super::*;

    /// A pool on a fresh schema of `$ADK_POSTGRES_URL` and the admin pool to drop it with.
    async fn schema() -> Option<(PgPool, PgPool, String)> {
        let url = adk_test::postgres_url()?;
        let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
        let admin = PgPool::connect_with(options.clone())
            .await
            .expect("connect");
        let schema = format!("adk_pgvector_{}", UuidIdGen.new_uuid().replace('-', ""));
        sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
            .execute(&admin)
            .await
            .expect("create the schema");
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect_with(options.options([("search_path", schema.as_str())]))
            .await
            .expect("connect to the schema");
        Some((admin, pool, schema))
    }

    /// Stores chunk vectors of memories 1 to 4 of one user, and one of another user's.
    async fn store_vectors(pool: &PgPool) {
        sqlx::raw_sql(TABLES).execute(pool).await.unwrap();
        let vectors: [(i64, &[f32]); 6] = [
            (1, &[1.0, 0.0, 0.0]),
            (2, &[0.0, 1.0, 0.0]),
            (2, &[0.6, 0.8, 0.0]),
            (3, &[0.0, 0.0, 1.0]),
            (4, &[0.8, 0.0, 0.6]),
            (5, &[1.0, 0.0, 0.0]),
        ];
        for (chunk, (id, vector)) in vectors.into_iter().enumerate() {
            let user = if id == 5 { "bob" } else { "ada" };
            sqlx::query(
                "INSERT INTO adk_memories (id, app_name, user_id, session_id, author, timestamp, \
                 text, words, content) VALUES ($1, 'app', $2, 's', 'a', 0, 't', '{t}', '{}') \
                 ON CONFLICT DO NOTHING",
            )
            .bind(id)
            .bind(user)
            .execute(pool)
            .await
            .unwrap();
            sqlx::query(Postgres::MEMORY.insert_vector)
                .bind(id)
                .bind(chunk as i64)
                .bind("app")
                .bind(user)
                .bind("m")
                .bind(vector)
                .execute(pool)
                .await
                .unwrap();
        }
    }

    /// `numbers` in PostgreSQL's binary array format, as a `real[]` column is sent.
    fn binary_array(numbers: &[f32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let len = u32::try_from(numbers.len()).unwrap();
        for word in [1, 0, FLOAT4_OID, len, 1] {
            bytes.extend(word.to_be_bytes());
        }
        for number in numbers {
            bytes.extend(4_u32.to_be_bytes());
            bytes.extend(number.to_be_bytes());
        }
        bytes
    }

    #[test]
    fn stored_arrays_are_scored_from_their_binary_form() {
        let array = binary_array(&[0.6, 0.8]);
        assert!((dot_binary_array(&array, &[0.6, 0.8]).unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(dot_binary_array(&array, &[1.0]).unwrap(), 0.0);
        assert_eq!(dot_binary_array(&[0; 12], &[1.0]).unwrap(), 0.0, "empty");
        assert!(dot_binary_array(&array[..array.len() - 1], &[0.6, 0.8]).is_err());
        assert!(dot_binary_array(&array[..10], &[0.6, 0.8]).is_err());
        let mut null = array.clone();
        null[28..32].copy_from_slice(&(-1_i32).to_be_bytes());
        assert!(dot_binary_array(&null, &[0.6, 0.8]).is_err());
        let mut doubles = array;
        doubles[8..12].copy_from_slice(&701_u32.to_be_bytes());
        assert!(dot_binary_array(&doubles, &[0.6, 0.8]).is_err());
    }

    async fn rank(pool: &PgPool, ranker: PgRanker) -> Vec<i64> {
        let scope = Scope {
            app_name: "app",
            user_id: "ada",
        };
        Postgres::vector_ranking(pool, &ranker, scope, "m", &[0.8, 0.6, 0.0], 3, "ranking")
            .await
            .unwrap()
    }

    /// pgvector's statement, run on what it needs of pgvector when pgvector is not installed: a
    /// `vector` type over `real[]` and the negative inner product `<#>`, written in SQL in the
    /// test's schema. Both statements rank the same: memory 2 (its best chunk), 1, then 4.
    #[tokio::test]
    async fn both_rankings_order_memories_by_their_best_chunk() {
        let Some((admin, pool, schema)) = schema().await else {
            return;
        };
        store_vectors(&pool).await;
        let expected = [2, 1, 4];
        assert_eq!(rank(&pool, PgRanker::Arrays).await, expected);
        if PgRanker::find(&pool).await.unwrap() == PgRanker::Arrays {
            sqlx::raw_sql(
                "CREATE DOMAIN vector AS real[];
                 CREATE FUNCTION negative_inner_product(a real[], b real[]) RETURNS real
                   LANGUAGE sql IMMUTABLE AS 'SELECT -sum(x * y) FROM unnest(a, b) AS t(x, y)';
                 CREATE OPERATOR <#> (LEFTARG = real[], RIGHTARG = real[],
                   FUNCTION = negative_inner_product);",
            )
            .execute(&pool)
            .await
            .unwrap();
        }
        assert_eq!(rank(&pool, PgRanker::Pgvector).await, expected);
        pool.close().await;
        sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
            .execute(&admin)
            .await
            .unwrap();
    }

    /// With pgvector in the database, the service finds it and ranks with it. Where it is not
    /// available (it is not packaged for every PostgreSQL), this says so and checks that the array
    /// ranking is chosen instead.
    #[tokio::test]
    async fn pgvector_is_used_when_the_database_has_it() {
        let Some((admin, pool, schema)) = schema().await else {
            return;
        };
        let (available,): (bool,) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        let ranker = PgRanker::find(&pool).await.unwrap();
        if available {
            assert_eq!(ranker, PgRanker::Pgvector);
            store_vectors(&pool).await;
            assert_eq!(rank(&pool, ranker).await, [2, 1, 4]);
        } else {
            adk_test::report_skipped(
                "pgvector is not available in this PostgreSQL: its ranking statement ran on a \
                 stand-in only (both_rankings_order_memories_by_their_best_chunk)",
            );
            assert_eq!(ranker, PgRanker::Arrays);
        }
        pool.close().await;
        sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
            .execute(&admin)
            .await
            .unwrap();
    }
}
