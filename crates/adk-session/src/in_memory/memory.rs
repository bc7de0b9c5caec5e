//! [`InMemoryMemoryService`]: memories in a list, searched by keyword, and by meaning (cosine
//! similarity of unit vectors, brute force) when it holds an embedder.

use std::collections::{BTreeSet, HashMap};

use adk_core::{MemoryEntry, Session};
use parking_lot::Mutex;

use crate::error::Result;
use crate::keywords::{content_text, words};
use adk_core::ranking::dot;

use crate::semantic::{SemanticSearch, best};

/// Memories kept in memory: every event with text of the sessions added.
///
/// Without an embedder, a search finds memories by the words of the query (an entry matches when
/// it shares at least one word; more shared words rank higher, then newer entries). With one
/// ([`with_semantic_search`](Self::with_semantic_search)), each remembered text is embedded in
/// chunks when its session is added, and a search ranks every memory of the user by the cosine
/// similarity of its best chunk to the query, fused with the keyword ranking unless
/// [`Ranking::Vector`](crate::Ranking::Vector) is asked for.
#[derive(Debug, Default)]
pub struct InMemoryMemoryService {
    /// Per (app, user): that user's memories.
    memories: Mutex<HashMap<(String, String), UserMemories>>,
    semantic: Option<SemanticSearch>,
}

/// The memories of one user of one app.
#[derive(Debug, Default)]
struct UserMemories {
    /// Per session id, its remembered events. Adding a session again replaces it.
    sessions: HashMap<String, Vec<Remembered>>,
    /// The model every memory's vectors were made by, when known: a search with that model has
    /// nothing to embed again and does not look.
    embedded_with: Option<String>,
    /// Raised by each add, so that a search which embedded what it found stale records its model
    /// only when nothing was added meanwhile.
    version: u64,
}

#[derive(Debug, Clone)]
struct Remembered {
    entry: MemoryEntry,
    text: String,
    words: BTreeSet<String>,
    /// The vectors of the text's chunks and the model that made them, when embedded.
    vectors: Option<Vectors>,
}

#[derive(Debug, Clone)]
struct Vectors {
    model: String,
    chunks: Vec<Vec<f32>>,
}

impl InMemoryMemoryService {
    /// An empty memory, searched by keyword.
    pub fn new() -> Self {
        Self::default()
    }

    /// Searches by meaning as `semantic` says, as well as by keyword.
    pub fn with_semantic_search(mut self, semantic: SemanticSearch) -> Self {
        self.semantic = Some(semantic);
        self
    }
}

/// The vectors of the chunks of each text in `texts`, made by `semantic`'s model.
async fn embed_texts(semantic: &SemanticSearch, texts: &[&str]) -> Result<Vec<Vectors>> {
    Ok(semantic
        .embed_chunks(texts)
        .await?
        .into_iter()
        .map(|chunks| Vectors {
            model: semantic.model().to_owned(),
            chunks,
        })
        .collect())
}

// The methods are `async` to fit the trait boundary (`boundary::memory_service!`); only the
// embedder's calls await, never under the lock.
impl InMemoryMemoryService {
    async fn add(&self, session: &Session) -> Result<()> {
        let mut remembered: Vec<Remembered> = session
            .events
            .iter()
            .filter_map(|event| {
                let content = event.content()?;
                let text = content_text(content);
                let words = words(&text);
                (!words.is_empty()).then(|| Remembered {
                    entry: MemoryEntry::new(content.clone())
                        .with_origin(event.author.clone(), event.timestamp),
                    text,
                    words,
                    vectors: None,
                })
            })
            .collect();
        if let Some(semantic) = &self.semantic {
            let texts: Vec<&str> = remembered.iter().map(|r| r.text.as_str()).collect();
            let vectors = embed_texts(semantic, &texts).await?;
            for (remembered, vectors) in remembered.iter_mut().zip(vectors) {
                remembered.vectors = Some(vectors);
            }
        }
        let model = self.semantic.as_ref().map(SemanticSearch::model);
        let mut memories = self.memories.lock();
        let user = memories
            .entry((session.app_name.clone(), session.user_id.clone()))
            .or_default();
        let others = user
            .sessions
            .iter()
            .any(|(id, remembered)| id != session.id.as_str() && !remembered.is_empty());
        // The user's memories all stay embedded by one model only when this add embedded with it
        // too (or the user has no other memories).
        user.embedded_with = match model {
            Some(model) if !others || user.embedded_with.as_deref() == Some(model) => {
                Some(model.to_owned())
            }
            _ => None,
        };
        user.version += 1;
        user.sessions
            .insert(session.id.as_str().to_owned(), remembered);
        Ok(())
    }

    /// Embeds again, with the current model, the memories of the user whose vectors another model
    /// made (or none), looking for them only when the user's memories are not known to be
    /// embedded by the current model.
    async fn reembed(&self, semantic: &SemanticSearch, scope: &(String, String)) -> Result<()> {
        let (stale, version): (Vec<(String, usize, String)>, u64) = {
            let memories = self.memories.lock();
            let Some(user) = memories.get(scope) else {
                return Ok(());
            };
            if user.embedded_with.as_deref() == Some(semantic.model()) {
                return Ok(());
            }
            let stale = user
                .sessions
                .iter()
                .flat_map(|(session, remembered)| {
                    remembered.iter().enumerate().filter_map(|(at, r)| {
                        let current = r
                            .vectors
                            .as_ref()
                            .is_some_and(|vectors| vectors.model == semantic.model());
                        (!current).then(|| (session.clone(), at, r.text.clone()))
                    })
                })
                .collect();
            (stale, user.version)
        };
        let texts: Vec<&str> = stale.iter().map(|(_, _, text)| text.as_str()).collect();
        let vectors = embed_texts(semantic, &texts).await?;
        let mut memories = self.memories.lock();
        let Some(user) = memories.get_mut(scope) else {
            return Ok(());
        };
        for ((session, at, text), vectors) in stale.into_iter().zip(vectors) {
            // The session may have been added again meanwhile; only the same text takes them.
            if let Some(remembered) = user.sessions.get_mut(&session).and_then(|r| r.get_mut(at))
                && remembered.text == text
            {
                remembered.vectors = Some(vectors);
            }
        }
        if user.version == version {
            user.embedded_with = Some(semantic.model().to_owned());
        }
        Ok(())
    }

    async fn search(&self, app_name: &str, user_id: &str, query: &str) -> Result<Vec<MemoryEntry>> {
        let scope = (app_name.to_owned(), user_id.to_owned());
        let query_vector = match &self.semantic {
            Some(semantic) if !query.trim().is_empty() => {
                self.reembed(semantic, &scope).await?;
                Some(semantic.embed_query(query).await?)
            }
            _ => None,
        };
        let query = words(query);
        let memories = self.memories.lock();
        let Some(user) = memories.get(&scope) else {
            return Ok(Vec::new());
        };
        let all: Vec<&Remembered> = user.sessions.values().flatten().collect();
        let ranked = match (&self.semantic, query_vector) {
            (Some(semantic), Some(query_vector)) => {
                // As the SQL services do: fusion takes as many keyword matches as vector ones.
                let by_keyword = if semantic.fuses() {
                    let mut by_keyword = keyword_ranking(&all, &query);
                    by_keyword.truncate(semantic.candidates());
                    by_keyword
                } else {
                    Vec::new()
                };
                let scored = all
                    .iter()
                    .enumerate()
                    .filter_map(|(at, remembered)| {
                        let vectors = remembered.vectors.as_ref()?;
                        let similarity = vectors
                            .chunks
                            .iter()
                            .map(|chunk| dot(chunk, &query_vector))
                            .fold(f32::MIN, f32::max);
                        Some((at, similarity))
                    })
                    .collect();
                let by_vector = best(scored, semantic.candidates());
                semantic.rank(&by_keyword, &by_vector)
            }
            _ => keyword_ranking(&all, &query),
        };
        Ok(ranked.into_iter().map(|at| all[at].entry.clone()).collect())
    }
}

/// The positions in `all` of the memories sharing a word with `query`: more shared words first,
/// then newer ones.
fn keyword_ranking(all: &[&Remembered], query: &BTreeSet<String>) -> Vec<usize> {
    let mut hits: Vec<(usize, usize)> = all
        .iter()
        .enumerate()
        .filter_map(|(at, remembered)| {
            let shared = remembered.words.intersection(query).count();
            (shared > 0).then_some((shared, at))
        })
        .collect();
    let time = |at: usize| all[at].entry.timestamp.unwrap_or_default();
    hits.sort_by(|(a_shared, a), (b_shared, b)| {
        b_shared.cmp(a_shared).then(time(*b).total_cmp(&time(*a)))
    });
    hits.into_iter().map(|(_, at)| at).collect()
}

crate::boundary::memory_service!(InMemoryMemoryService);
