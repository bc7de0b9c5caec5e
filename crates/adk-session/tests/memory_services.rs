//! The memory services: keyword search in memory, FTS5 in SQLite and shared words in PostgreSQL
//! behave alike, and so does search by meaning with an embedder (scoping, isolation between users,
//! re-embedding).

use std::sync::Arc;

use adk_core::{Content, Event, InvocationId, MemoryService, Session, SessionKey};
use adk_core::{IdGen as _, UuidIdGen};
use adk_session::{
    InMemoryMemoryService, PostgresMemoryService, Ranking, SemanticSearch, SqliteMemoryService,
};
use adk_test::ConceptEmbedder;
use futures::future::BoxFuture;
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

fn session(user: &str, id: &str, texts: &[&str]) -> Session {
    let mut session = Session::new(SessionKey::new("app", user, id));
    for (n, text) in texts.iter().enumerate() {
        let mut event =
            Event::new(InvocationId::from("e-1"), "agent").with_content(Content::model(*text));
        event.timestamp = 1_000.0 + n as f64;
        session.events.push(event);
    }
    // An event without text is not remembered.
    session
        .events
        .push(Event::new(InvocationId::from("e-1"), "agent"));
    session
}

async fn search(memory: &dyn MemoryService, user: &str, query: &str) -> Vec<String> {
    memory
        .search_memory("app", user, query)
        .await
        .unwrap()
        .memories
        .into_iter()
        .map(|entry| entry.content.text().unwrap_or_default())
        .collect()
}

async fn check(memory: Arc<dyn MemoryService>) {
    let memory = &*memory;
    memory
        .add_session_to_memory(&session(
            "ada",
            "s1",
            &[
                "The weather in Paris is sunny",
                "I like Zürich trains",
                "東京 is big",
            ],
        ))
        .await
        .unwrap();
    memory
        .add_session_to_memory(&session("ada", "s2", &["Paris weather tomorrow: rain"]))
        .await
        .unwrap();
    memory
        .add_session_to_memory(&session("bob", "s1", &["Bob's secret Paris plan"]))
        .await
        .unwrap();

    let found = search(memory, "ada", "paris WEATHER?").await;
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|text| text.contains("Paris")));
    assert_eq!(
        search(memory, "ada", "zürich").await,
        ["I like Zürich trains"]
    );
    assert_eq!(search(memory, "ada", "東京").await, ["東京 is big"]);
    assert!(
        search(memory, "ada", "secret").await.is_empty(),
        "bob's memories stay bob's"
    );
    assert!(search(memory, "ada", "").await.is_empty());
    assert!(
        search(memory, "ada", "\" OR * NEAR(").await.is_empty(),
        "query syntax is inert"
    );
    assert!(search(memory, "carol", "paris").await.is_empty());

    // Adding a session again replaces its memories rather than doubling them.
    memory
        .add_session_to_memory(&session("ada", "s2", &["Paris weather tomorrow: rain"]))
        .await
        .unwrap();
    assert_eq!(search(memory, "ada", "tomorrow").await.len(), 1);
    let entry = &memory
        .search_memory("app", "ada", "tomorrow")
        .await
        .unwrap()
        .memories[0];
    assert_eq!(entry.author.as_deref(), Some("agent"));
    assert_eq!(entry.timestamp, Some(1_000.0));
}

#[tokio::test]
async fn in_memory_keyword_search() {
    check(Arc::new(InMemoryMemoryService::new())).await;
}

#[tokio::test]
async fn sqlite_fts5_search() {
    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteMemoryService::open(dir.path().join("memory.db"))
        .await
        .unwrap();
    check(Arc::new(memory)).await;
}

/// A way to open a memory service searching with a given embedder, on one store that outlives
/// each service (a file for SQLite), so that reopening with another embedder finds what the last
/// one stored. `None` opens it without an embedder.
type Open = Box<dyn Fn(Option<SemanticSearch>) -> BoxFuture<'static, Arc<dyn MemoryService>>>;

/// Texts of the first sentence of each memory found for `query`.
async fn texts_for(memory: &dyn MemoryService, user: &str, query: &str) -> Vec<String> {
    search(memory, user, query).await
}

/// Memory by meaning on one backend: a paraphrase with no shared word is found, users and apps stay
/// apart, keyword hits still count, a failing embedder fails the add with a model error and loses
/// nothing, and a new embedder re-embeds what another model (or none) stored, once.
async fn check_semantic(open: Open, reopens: bool) {
    let first = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let memory = open(Some(SemanticSearch::new(Arc::clone(&first)))).await;
    let memory = &*memory;
    memory
        .add_session_to_memory(&session(
            "ada",
            "s1",
            &["Is it cold in the Alps?", "I bought new running shoes"],
        ))
        .await
        .unwrap();
    memory
        .add_session_to_memory(&session("ada", "s2", &["My dog loves the park"]))
        .await
        .unwrap();
    memory
        .add_session_to_memory(&session("bob", "s1", &["Snowy peaks forecast"]))
        .await
        .unwrap();
    assert_eq!(first.calls(), 3, "one call per session added");

    // No word in common, found by meaning.
    let found = texts_for(memory, "ada", "mountain weather").await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("Is it cold in the Alps?"),
        "{found:?}"
    );
    assert!(
        !found.iter().any(|text| text.contains("Snowy")),
        "bob's memories stay bob's"
    );
    let found = texts_for(memory, "ada", "purchased sneakers for jogging").await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("I bought new running shoes")
    );
    // A keyword hit ranks first when the vectors agree.
    let found = texts_for(memory, "ada", "dog").await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("My dog loves the park")
    );
    assert!(
        texts_for(memory, "carol", "mountain weather")
            .await
            .is_empty()
    );
    assert!(
        memory
            .search_memory("other-app", "ada", "mountain weather")
            .await
            .unwrap()
            .memories
            .is_empty()
    );
    assert!(texts_for(memory, "ada", "").await.is_empty());

    // A failing embedder fails the add with a model error, and the memories stay as they were.
    first.fail(true);
    let error = memory
        .add_session_to_memory(&session("ada", "s2", &["Something else entirely"]))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), adk_core::ErrorKind::Model, "{error}");
    assert!(error.to_string().contains("told to fail"), "{error}");
    first.fail(false);
    let found = texts_for(memory, "ada", "puppy").await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("My dog loves the park")
    );

    if !reopens {
        return;
    }
    // Another model: everything of the user is embedded again at the first search, once.
    let second = Arc::new(ConceptEmbedder::new("concepts-v2"));
    let memory = open(Some(SemanticSearch::new(Arc::clone(&second)))).await;
    let found = texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("Is it cold in the Alps?")
    );
    assert_eq!(second.texts(), 3 + 1, "ada's three memories and the query");
    texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(second.texts(), 3 + 2, "only the query the second time");

    // Memories added without an embedder are embedded when one searches.
    let plain = open(None).await;
    plain
        .add_session_to_memory(&session("ada", "s3", &["Freezing summit"]))
        .await
        .unwrap();
    assert!(
        texts_for(&*plain, "ada", "mountain weather")
            .await
            .is_empty(),
        "keywords only"
    );
    let found = texts_for(&*memory, "ada", "cold mountains").await;
    assert!(
        found.iter().any(|text| text == "Freezing summit"),
        "{found:?}"
    );
    assert_eq!(second.texts(), 3 + 2 + 1 + 1);

    // Vector ranking alone returns at most its limit.
    let vector_only = open(Some(
        SemanticSearch::new(Arc::clone(&second))
            .ranking(Ranking::Vector)
            .limit(2),
    ))
    .await;
    let found = texts_for(&*vector_only, "ada", "alps").await;
    let mut found = found;
    found.sort();
    assert_eq!(found, ["Freezing summit", "Is it cold in the Alps?"]);
}

#[tokio::test]
async fn in_memory_semantic_search() {
    let open: Open = Box::new(|semantic| {
        Box::pin(async move {
            with_semantic(
                InMemoryMemoryService::new(),
                semantic,
                InMemoryMemoryService::with_semantic_search,
            )
        })
    });
    check_semantic(open, false).await;
}

/// Opens the SQLite memory at `path`, with the embedder given.
fn open_sqlite(path: std::path::PathBuf) -> Open {
    Box::new(move |semantic| {
        let path = path.clone();
        Box::pin(async move {
            let memory = SqliteMemoryService::open(&path).await.unwrap();
            with_semantic(memory, semantic, SqliteMemoryService::with_semantic_search)
        })
    })
}

/// Opens a PostgreSQL memory on `pool`, with the embedder given.
fn open_postgres(pool: PgPool) -> Open {
    Box::new(move |semantic| {
        let pool = pool.clone();
        Box::pin(async move {
            let memory = PostgresMemoryService::from_pool(pool).await.unwrap();
            with_semantic(
                memory,
                semantic,
                PostgresMemoryService::with_semantic_search,
            )
        })
    })
}

/// `memory`, searching by meaning when `semantic` is given.
fn with_semantic<M: MemoryService + 'static>(
    memory: M,
    semantic: Option<SemanticSearch>,
    with: fn(M, SemanticSearch) -> M,
) -> Arc<dyn MemoryService> {
    match semantic {
        Some(semantic) => Arc::new(with(memory, semantic)),
        None => Arc::new(memory),
    }
}

#[tokio::test]
async fn sqlite_semantic_search_and_reembedding() {
    let dir = tempfile::tempdir().unwrap();
    check_semantic(open_sqlite(dir.path().join("memory.db")), true).await;
}

/// A pool on a fresh schema of the database at `$ADK_POSTGRES_URL`, with an admin pool and the
/// schema's name to drop it; `None` (reported as skipped) when the variable is unset outside CI.
async fn postgres_schema() -> Option<(PgPool, PgPool, String)> {
    let url = adk_test::postgres_url()?;
    let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
    let admin = PgPool::connect_with(options.clone())
        .await
        .expect("connecting");
    let schema = format!("adk_memory_{}", UuidIdGen.new_uuid().replace('-', ""));
    sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&admin)
        .await
        .expect("creating the test schema");
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options.options([("search_path", schema.as_str())]))
        .await
        .expect("connecting to the test schema");
    Some((admin, pool, schema))
}

async fn drop_schema(admin: PgPool, pool: PgPool, schema: String) {
    pool.close().await;
    sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&admin)
        .await
        .expect("dropping the test schema");
}

#[tokio::test]
async fn postgres_keyword_search() {
    let Some((admin, pool, schema)) = postgres_schema().await else {
        return;
    };
    let memory = PostgresMemoryService::from_pool(pool.clone())
        .await
        .unwrap();
    check(Arc::new(memory)).await;
    drop_schema(admin, pool, schema).await;
}

#[tokio::test]
async fn postgres_semantic_search_and_reembedding() {
    let Some((admin, pool, schema)) = postgres_schema().await else {
        return;
    };
    check_semantic(open_postgres(pool.clone()), true).await;
    drop_schema(admin, pool, schema).await;
}

/// A way around a SQL memory service, to change its store as it would not: a memory stored
/// without a vector behind its back, or the record of which model embedded each user's memories
/// wiped, as in a store written before that record was kept.
enum Behind {
    Sqlite(sqlx::SqlitePool),
    Postgres(PgPool),
}

impl Behind {
    async fn store_unembedded(&self, user: &str, text: &str) {
        let content = serde_json::to_string(&Content::model(text)).unwrap();
        match self {
            Self::Sqlite(pool) => {
                sqlx::query(
                    "INSERT INTO memories \
                     (text, app_name, user_id, session_id, author, timestamp, content) \
                     VALUES (?1, 'app', ?2, 'behind', 'agent', 1000.0, ?3)",
                )
                .bind(text)
                .bind(user)
                .bind(content)
                .execute(pool)
                .await
                .unwrap();
            }
            Self::Postgres(pool) => {
                let words: Vec<String> = text.split(' ').map(str::to_lowercase).collect();
                sqlx::query(
                    "INSERT INTO adk_memories \
                     (app_name, user_id, session_id, author, timestamp, text, words, content) \
                     VALUES ('app', $1, 'behind', 'agent', 1000, $2, $3, $4)",
                )
                .bind(user)
                .bind(text)
                .bind(words)
                .bind(content)
                .execute(pool)
                .await
                .unwrap();
            }
        }
    }

    async fn forget_who_embedded(&self) {
        match self {
            Self::Sqlite(pool) => {
                sqlx::query("DELETE FROM memory_scopes")
                    .execute(pool)
                    .await
                    .unwrap();
            }
            Self::Postgres(pool) => {
                sqlx::query("DELETE FROM adk_memory_scopes")
                    .execute(pool)
                    .await
                    .unwrap();
            }
        }
    }
}

/// A search looks for memories to embed again only when the user's memories are not known to be
/// embedded by its model: with nothing stale it embeds the query alone and does not look at all
/// (a memory slipped into the store without a vector stays unseen), while another embedder, or a
/// store that does not say which model embedded it, makes the search look and embed what lacks a
/// vector, once.
async fn check_stale_lookup(open: Open, behind: Behind) {
    let first = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let memory = open(Some(SemanticSearch::new(Arc::clone(&first)))).await;
    memory
        .add_session_to_memory(&session("ada", "s1", &["Is it cold in the Alps?"]))
        .await
        .unwrap();
    assert_eq!(first.texts(), 1);
    let found = texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(found, ["Is it cold in the Alps?"]);
    assert_eq!(first.texts(), 2, "the query alone");

    behind.store_unembedded("ada", "Freezing summit").await;
    let found = texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(
        found,
        ["Is it cold in the Alps?"],
        "the stale row is not seen"
    );
    assert_eq!(
        first.texts(),
        3,
        "the query alone: no stale memory was looked for"
    );

    // Another model looks, and embeds every memory of the user again, once.
    let second = Arc::new(ConceptEmbedder::new("concepts-v2"));
    let memory = open(Some(SemanticSearch::new(Arc::clone(&second)))).await;
    let mut found = texts_for(&*memory, "ada", "mountain weather").await;
    found.sort();
    assert_eq!(found, ["Freezing summit", "Is it cold in the Alps?"]);
    assert_eq!(second.texts(), 2 + 1, "both memories and the query");
    texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(second.texts(), 2 + 2, "the query alone the second time");

    // A store that does not say which model embedded the memories is looked through once.
    behind.forget_who_embedded().await;
    behind.store_unembedded("ada", "Snowy peaks").await;
    let found = texts_for(&*memory, "ada", "mountain weather").await;
    assert!(found.iter().any(|text| text == "Snowy peaks"), "{found:?}");
    assert_eq!(
        second.texts(),
        4 + 1 + 1,
        "the unembedded memory and the query"
    );
    texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(second.texts(), 6 + 1, "the query alone again");

    // The first model's vectors were replaced: it looks, and embeds all three again.
    let memory = open(Some(SemanticSearch::new(Arc::clone(&first)))).await;
    texts_for(&*memory, "ada", "mountain weather").await;
    assert_eq!(first.texts(), 3 + 3 + 1);
}

/// Adds of one user's sessions, one with an embedder and one without, running together as two
/// servers would (several users, so that both orders and the race on the user's first record are
/// met): whichever commits last, the user's memories are not taken as all embedded, and the next
/// search embeds the memory that has no vector.
async fn check_concurrent_adds(open: Open) {
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let embedding = open(Some(SemanticSearch::new(Arc::clone(&embedder)))).await;
    let plain = open(None).await;
    let users: Vec<String> = (0..16).map(|n| format!("user-{n}")).collect();
    let adds = users.iter().map(|user| {
        let (embedding, plain) = (Arc::clone(&embedding), Arc::clone(&plain));
        async move {
            let with = session(user, "s1", &["Is it cold in the Alps?"]);
            let without = session(user, "s2", &["Snowy peaks"]);
            let (with, without) = tokio::join!(
                embedding.add_session_to_memory(&with),
                plain.add_session_to_memory(&without)
            );
            with.unwrap();
            without.unwrap();
        }
    });
    futures::future::join_all(adds).await;
    assert_eq!(embedder.texts(), users.len());
    for (n, user) in users.iter().enumerate() {
        let mut found = texts_for(&*embedding, user, "mountain weather").await;
        found.sort();
        assert_eq!(found, ["Is it cold in the Alps?", "Snowy peaks"], "{user}");
        assert_eq!(
            embedder.texts(),
            users.len() + 2 * (n + 1),
            "{user}: the memory added without a vector, and the query"
        );
    }
}

#[tokio::test]
async fn sqlite_adds_running_together_leave_stale_memories_found() {
    let dir = tempfile::tempdir().unwrap();
    check_concurrent_adds(open_sqlite(dir.path().join("memory.db"))).await;
}

#[tokio::test]
async fn postgres_adds_running_together_leave_stale_memories_found() {
    let Some((admin, pool, schema)) = postgres_schema().await else {
        return;
    };
    check_concurrent_adds(open_postgres(pool.clone())).await;
    drop_schema(admin, pool, schema).await;
}

#[tokio::test]
async fn in_memory_search_embeds_again_only_what_is_stale() {
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let memory = InMemoryMemoryService::new();
    memory
        .add_session_to_memory(&session("ada", "s1", &["Is it cold in the Alps?"]))
        .await
        .unwrap();
    // The embedder comes after the memory was added: the first search embeds it, once.
    let memory = memory.with_semantic_search(SemanticSearch::new(Arc::clone(&embedder)));
    let found = texts_for(&memory, "ada", "mountain weather").await;
    assert_eq!(found, ["Is it cold in the Alps?"]);
    assert_eq!(embedder.texts(), 1 + 1, "the memory and the query");
    memory
        .add_session_to_memory(&session("ada", "s2", &["Snowy peaks"]))
        .await
        .unwrap();
    texts_for(&memory, "ada", "mountain weather").await;
    assert_eq!(
        embedder.texts(),
        2 + 1 + 1,
        "the added memory and the query"
    );
}

#[tokio::test]
async fn sqlite_search_looks_for_stale_memories_only_when_some_may_be() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let open = open_sqlite(path.clone());
    // The service's first open creates the tables the way around it writes to.
    drop(open(None).await);
    let behind =
        sqlx::SqlitePool::connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(&path))
            .await
            .unwrap();
    check_stale_lookup(open, Behind::Sqlite(behind)).await;
}

#[tokio::test]
async fn postgres_search_looks_for_stale_memories_only_when_some_may_be() {
    let Some((admin, pool, schema)) = postgres_schema().await else {
        return;
    };
    check_stale_lookup(open_postgres(pool.clone()), Behind::Postgres(pool.clone())).await;
    drop_schema(admin, pool, schema).await;
}
