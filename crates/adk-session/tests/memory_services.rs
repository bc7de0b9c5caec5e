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
            let memory = InMemoryMemoryService::new();
            let memory = match semantic {
                Some(semantic) => memory.with_semantic_search(semantic),
                None => memory,
            };
            Arc::new(memory) as Arc<dyn MemoryService>
        })
    });
    check_semantic(open, false).await;
}

#[tokio::test]
async fn sqlite_semantic_search_and_reembedding() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let open: Open = Box::new(move |semantic| {
        let path = path.clone();
        Box::pin(async move {
            let memory = SqliteMemoryService::open(&path).await.unwrap();
            let memory = match semantic {
                Some(semantic) => memory.with_semantic_search(semantic),
                None => memory,
            };
            Arc::new(memory) as Arc<dyn MemoryService>
        })
    });
    check_semantic(open, true).await;
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
    let shared = pool.clone();
    let open: Open = Box::new(move |semantic| {
        let pool = shared.clone();
        Box::pin(async move {
            let memory = PostgresMemoryService::from_pool(pool).await.unwrap();
            let memory = match semantic {
                Some(semantic) => memory.with_semantic_search(semantic),
                None => memory,
            };
            Arc::new(memory) as Arc<dyn MemoryService>
        })
    });
    check_semantic(open, true).await;
    drop_schema(admin, pool, schema).await;
}
