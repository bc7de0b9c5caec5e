//! Memory search benchmarks: the latency of one `search_memory` by meaning over 1,000, 10,000 and
//! 100,000 stored chunks of one user, on each backend (in memory, SQLite in a temporary file,
//! PostgreSQL in a schema of its own under `$ADK_POSTGRES_URL`, skipped with a notice when unset),
//! with the vector ranking alone and fused with the keyword ranking.
//!
//! The embedder is a deterministic fake (seeded vectors of 384 numbers), so what is measured is the
//! store's work, not an embedding model's. The stored size of each store is printed when it is
//! filled. Run with `cargo bench -p adk-session --bench memory`; numbers go in `docs/memory.md`.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use adk_core::{
    Content, Embedder, Event, IdGen, InvocationId, MemoryService, Session, SessionKey, UuidIdGen,
};
use adk_session::{
    InMemoryMemoryService, PostgresMemoryService, Ranking, SemanticSearch, SqliteMemoryService,
};
use divan::Bencher;
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use support::RUNTIME;

/// How many numbers each fake vector has: the size of small embedding models' vectors.
const DIMENSIONS: usize = 384;
/// Events (one chunk each) per session added while filling a store.
const EVENTS_PER_SESSION: usize = 1_000;
/// Words the remembered texts and queries are made of: a query shares words with about one text
/// in eight, so the keyword ranking of a fused search has work to do.
const VOCABULARY: usize = 400;

fn main() {
    divan::main();
}

/// A deterministic embedder: each text's vector is drawn from a generator seeded by the text's
/// hash, so equal texts get equal vectors and no model runs.
#[derive(Debug)]
struct SeededEmbedder;

#[async_trait::async_trait]
impl Embedder for SeededEmbedder {
    fn model(&self) -> &str {
        "seeded-384"
    }

    fn dimensions(&self) -> Option<usize> {
        Some(DIMENSIONS)
    }

    async fn embed(&self, texts: &[String]) -> adk_core::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|text| seeded_vector(text)).collect())
    }
}

/// A vector of numbers in [-1, 1) from an xorshift generator seeded by `text`'s FNV-1a hash.
fn seeded_vector(text: &str) -> Vec<f32> {
    let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    }) | 1;
    (0..DIMENSIONS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// The `n`th remembered text: a dozen words of the vocabulary, picked by `n`.
fn text(n: usize) -> String {
    (0..12)
        .map(|k| format!("w{}", (n * 7 + k * 31 + n / 3) % VOCABULARY))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A session of `count` events of text, from the `first`th text on.
fn session(id: usize, first: usize, count: usize) -> Session {
    let mut session = Session::new(SessionKey::new("bench", "ada", format!("s{id}")));
    for n in first..first + count {
        let mut event = Event::new(InvocationId::from("e-bench"), "agent")
            .with_content(Content::model(text(n)));
        event.timestamp = n as f64;
        session.events.push(event);
    }
    session
}

/// Adds `chunks` chunks of user `ada` to `memory`, a thousand per session.
async fn fill(memory: &dyn MemoryService, chunks: usize) {
    for (id, first) in (0..chunks).step_by(EVENTS_PER_SESSION).enumerate() {
        let count = EVENTS_PER_SESSION.min(chunks - first);
        memory
            .add_session_to_memory(&session(id, first, count))
            .await
            .expect("filling the memory");
    }
}

fn semantic(ranking: Ranking) -> SemanticSearch {
    SemanticSearch::new(SeededEmbedder).ranking(ranking)
}

/// A filled database store, kept for the process so both rankings search the same one.
enum Filled {
    Sqlite(tempfile::TempDir),
    Postgres(Box<PgConnectOptions>),
}

/// Whether the schemas of earlier runs were dropped.
static CLEANED: AtomicBool = AtomicBool::new(false);

/// The filled database stores, by backend and chunk count.
type FilledStores = HashMap<(&'static str, usize), Arc<Filled>>;

/// The filled database stores of this process.
static FILLED: LazyLock<Mutex<FilledStores>> = LazyLock::new(Mutex::default);

/// A memory service of `backend` holding `chunks` chunks and ranking as `ranking` says, or `None`
/// for PostgreSQL without `$ADK_POSTGRES_URL`.
fn open(backend: &'static str, chunks: usize, ranking: Ranking) -> Option<Arc<dyn MemoryService>> {
    RUNTIME.block_on(async {
        if backend == "in_memory" {
            let memory = InMemoryMemoryService::new().with_semantic_search(semantic(ranking));
            let before = resident_bytes();
            fill(&memory, chunks).await;
            report_size(backend, chunks, resident_bytes().saturating_sub(before));
            return Some(Arc::new(memory) as Arc<dyn MemoryService>);
        }
        let filled = FILLED
            .lock()
            .expect("the store list")
            .get(&(backend, chunks))
            .cloned();
        let (filled, new) = match filled {
            Some(filled) => (filled, false),
            None => (Arc::new(create(backend).await?), true),
        };
        let memory: Arc<dyn MemoryService> = match &*filled {
            Filled::Sqlite(dir) => Arc::new(
                SqliteMemoryService::open(dir.path().join("memory.db"))
                    .await
                    .expect("open SQLite")
                    .with_semantic_search(semantic(ranking)),
            ),
            Filled::Postgres(options) => Arc::new(
                PostgresMemoryService::from_pool(
                    PgPoolOptions::new()
                        .max_connections(4)
                        .connect_with((**options).clone())
                        .await
                        .expect("connect"),
                )
                .await
                .expect("open PostgreSQL")
                .with_semantic_search(semantic(ranking)),
            ),
        };
        if new {
            fill(&*memory, chunks).await;
            report_size(backend, chunks, stored_bytes(&filled).await);
            FILLED
                .lock()
                .expect("the store list")
                .insert((backend, chunks), filled);
        }
        Some(memory)
    })
}

/// A new empty store of `backend`, or `None` for PostgreSQL without `$ADK_POSTGRES_URL`.
async fn create(backend: &str) -> Option<Filled> {
    if backend == "sqlite" {
        return Some(Filled::Sqlite(
            tempfile::tempdir().expect("a temporary directory"),
        ));
    }
    let Ok(url) = std::env::var("ADK_POSTGRES_URL") else {
        eprintln!(
            "*** NOT RUN: PostgreSQL memory benchmark skipped: ADK_POSTGRES_URL is not set ***"
        );
        return None;
    };
    let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
    let admin = PgPool::connect_with(options.clone())
        .await
        .expect("connect");
    let schema = format!("adk_bench_memory_{}", UuidIdGen.new_uuid().replace('-', ""));
    // The schemas of earlier runs are dropped by the next run (the benchmark process ends without
    // a hook), once: this run's own schemas stay until it ends.
    if !CLEANED.swap(true, Ordering::SeqCst) {
        let stale: Vec<(String,)> = sqlx::query_as(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'adk\\_bench\\_memory\\_%'",
        )
        .fetch_all(&admin)
        .await
        .expect("list old schemas");
        for (old,) in stale {
            sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {old} CASCADE")))
                .execute(&admin)
                .await
                .expect("drop an old schema");
        }
    }
    sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&admin)
        .await
        .expect("create schema");
    Some(Filled::Postgres(Box::new(
        options.options([("search_path", schema.as_str())]),
    )))
}

/// The bytes a filled database store takes: the SQLite file with its write-ahead log, or the
/// PostgreSQL memory tables with their indexes.
async fn stored_bytes(filled: &Filled) -> u64 {
    match filled {
        Filled::Sqlite(dir) => std::fs::read_dir(dir.path())
            .expect("the store's directory")
            .filter_map(|entry| entry.ok()?.metadata().ok())
            .map(|metadata| metadata.len())
            .sum(),
        Filled::Postgres(options) => {
            let pool = PgPool::connect_with((**options).clone())
                .await
                .expect("connect");
            let (bytes,): (i64,) = sqlx::query_as(
                "SELECT (sum(pg_total_relation_size(c.oid)))::int8 FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relkind = 'r'",
            )
            .fetch_one(&pool)
            .await
            .expect("the tables' size");
            u64::try_from(bytes).unwrap_or_default()
        }
    }
}

/// The process's resident memory, from `/proc/self/statm` (0 where there is none). Its growth
/// while a store is filled is the store's size only the first time: memory freed by an earlier
/// store is reused without growing it.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn report_size(backend: &str, chunks: usize, bytes: u64) {
    eprintln!(
        "memory store size: {backend} with {chunks} chunks: {:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0)
    );
}

/// One search, the query's words shared with some stored texts.
fn search(bencher: Bencher<'_, '_>, backend: &'static str, chunks: usize, ranking: Ranking) {
    let Some(memory) = open(backend, chunks, ranking) else {
        return;
    };
    let query = "w7 w38 w69 harbour";
    bencher.bench_local(|| {
        RUNTIME.block_on(async {
            let found = memory
                .search_memory("bench", "ada", query)
                .await
                .expect("search");
            assert_eq!(found.memories.len(), 10);
        });
    });
}

/// Searches ranked by similarity alone.
#[divan::bench(args = [1_000, 10_000, 100_000], consts = [0, 1, 2], max_time = 5, sample_count = 10, sample_size = 1)]
fn vector<const BACKEND: usize>(bencher: Bencher<'_, '_>, chunks: usize) {
    search(bencher, BACKENDS[BACKEND], chunks, Ranking::Vector);
}

/// Searches with the similarity and keyword rankings fused.
#[divan::bench(args = [1_000, 10_000, 100_000], consts = [0, 1, 2], max_time = 5, sample_count = 10, sample_size = 1)]
fn fused<const BACKEND: usize>(bencher: Bencher<'_, '_>, chunks: usize) {
    search(bencher, BACKENDS[BACKEND], chunks, Ranking::Fused);
}

/// The backends, by the constant the benchmarks take (0: in memory, 1: SQLite, 2: PostgreSQL).
const BACKENDS: [&str; 3] = ["in_memory", "sqlite", "postgres"];
