//! [`InMemoryMemoryService`]: memories in a list, searched by keyword.

use std::collections::{BTreeSet, HashMap};

use adk_core::{MemoryEntry, Session};
use parking_lot::Mutex;

use crate::error::Result;
use crate::keywords::{content_text, words};

/// Memories kept in memory: every event with text of the sessions added, found by the words of a
/// query (an entry matches when it shares at least one word; more shared words rank higher, then
/// newer entries).
#[derive(Debug, Default)]
pub struct InMemoryMemoryService {
    /// Per (app, user): per session id, its remembered events. Adding a session again replaces it.
    memories: Mutex<HashMap<(String, String), SessionMemories>>,
}

/// The remembered events of one user's sessions, by session id.
type SessionMemories = HashMap<String, Vec<Remembered>>;

#[derive(Debug, Clone)]
struct Remembered {
    entry: MemoryEntry,
    words: BTreeSet<String>,
}

impl InMemoryMemoryService {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }
}

// The methods are `async` to fit the trait boundary (`boundary::memory_service!`); none awaits.
impl InMemoryMemoryService {
    async fn add(&self, session: &Session) -> Result<()> {
        let remembered: Vec<Remembered> = session
            .events
            .iter()
            .filter_map(|event| {
                let content = event.content()?;
                let words = words(&content_text(content));
                (!words.is_empty()).then(|| Remembered {
                    entry: MemoryEntry::new(content.clone())
                        .with_origin(event.author.clone(), event.timestamp),
                    words,
                })
            })
            .collect();
        self.memories
            .lock()
            .entry((session.app_name.clone(), session.user_id.clone()))
            .or_default()
            .insert(session.id.as_str().to_owned(), remembered);
        Ok(())
    }

    async fn search(&self, app_name: &str, user_id: &str, query: &str) -> Result<Vec<MemoryEntry>> {
        let query = words(query);
        let memories = self.memories.lock();
        let Some(sessions) = memories.get(&(app_name.to_owned(), user_id.to_owned())) else {
            return Ok(Vec::new());
        };
        let mut hits: Vec<(usize, &Remembered)> = sessions
            .values()
            .flatten()
            .filter_map(|remembered| {
                let shared = remembered.words.intersection(&query).count();
                (shared > 0).then_some((shared, remembered))
            })
            .collect();
        hits.sort_by(|(a_shared, a), (b_shared, b)| {
            b_shared.cmp(a_shared).then(
                b.entry
                    .timestamp
                    .unwrap_or_default()
                    .total_cmp(&a.entry.timestamp.unwrap_or_default()),
            )
        });
        Ok(hits
            .into_iter()
            .map(|(_, remembered)| remembered.entry.clone())
            .collect())
    }
}

crate::boundary::memory_service!(InMemoryMemoryService);
