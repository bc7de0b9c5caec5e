//! [`SqliteMemoryService`]: memories in a SQLite FTS5 table, ranked by BM25.

use std::path::Path;

use adk_core::{Content, MemoryEntry, Session};
use sqlx::SqlitePool;

use crate::error::{Error, Result};
use crate::keywords::{content_text, words};

/// Memories in the `memories` FTS5 table of a SQLite database (which may be the sessions' file).
///
/// Every event of an added session that has text becomes one row; adding the session again
/// replaces its rows. A search matches rows sharing any word with the query, best (BM25) first.
#[derive(Debug)]
pub struct SqliteMemoryService {
    pool: SqlitePool,
}

impl SqliteMemoryService {
    /// Opens the database at `path`, creating it when missing, and brings its layout up to date.
    pub async fn open(path: impl AsRef<Path>) -> adk_core::Result<Self> {
        let pool = super::open_pool(path.as_ref())
            .await
            .map_err(Error::into_memory)?;
        Ok(Self { pool })
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
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(storage)?;
        sqlx::query("DELETE FROM memories WHERE app_name = ? AND user_id = ? AND session_id = ?")
            .bind(&session.app_name)
            .bind(&session.user_id)
            .bind(session.id.as_str())
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        for (text, author, timestamp, json) in rows {
            sqlx::query(
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
        }
        tx.commit().await.map_err(storage)
    }

    async fn search(&self, app_name: &str, user_id: &str, query: &str) -> Result<Vec<MemoryEntry>> {
        // Words are letters and digits only, so quoting each one makes a safe FTS5 query.
        let terms: Vec<String> = words(query)
            .into_iter()
            .map(|word| format!("\"{word}\""))
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let what = format!("searching the memory of user {user_id} in app {app_name}");
        let rows: Vec<(String, String, f64)> = sqlx::query_as(
            "SELECT content, author, timestamp FROM memories \
             WHERE memories MATCH ? AND app_name = ? AND user_id = ? ORDER BY rank",
        )
        .bind(terms.join(" OR "))
        .bind(app_name)
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|error| Error::storage(&what, error))?;
        rows.into_iter()
            .map(|(content, author, timestamp)| {
                let content: Content =
                    serde_json::from_str(&content).map_err(|error| Error::corrupt(&what, error))?;
                Ok(MemoryEntry::new(content).with_origin(author, timestamp))
            })
            .collect()
    }
}

crate::boundary::memory_service!(SqliteMemoryService);
