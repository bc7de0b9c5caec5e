//! The memory services: keyword search in memory and FTS5 in SQLite behave alike.

use std::sync::Arc;

use adk_core::{Content, Event, InvocationId, MemoryService, Session, SessionKey};
use adk_session::{InMemoryMemoryService, SqliteMemoryService};

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
