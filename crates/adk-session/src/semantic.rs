//! Memory by meaning: [`SemanticSearch`] (the embedder a memory service may hold and how it
//! ranks), the chunks of text that are embedded and the best of a scored list. The vector
//! arithmetic and the fusion of rankings are `adk_core::ranking`'s.

use std::hash::Hash;
use std::sync::Arc;

use adk_core::ranking::{fuse, normalize};
use adk_core::{Embedder, IntoEmbedder, Ranking};

use crate::error::{Error, ErrorKind, Result};

/// The default of [`SemanticSearch::limit`].
const DEFAULT_LIMIT: usize = 10;

/// The longest chunk embedded, in bytes. A remembered text longer than this is cut, at
/// whitespace, into several chunks; the best-matching chunk ranks the memory. Small enough for the
/// context of the smallest embedding models (512 tokens).
pub(crate) const CHUNK_BYTES: usize = 1_200;

/// What a memory service needs to search by meaning: the [`Embedder`] that turns what sessions
/// said and each query into vectors, how results are ranked, and how many a search returns.
///
/// Each vector is stored with the name of the model that made it. When the embedder changes (a
/// memory service opened on an existing store with another model), a search first re-embeds the
/// memories whose vectors another model made, so that vectors of different models are never
/// compared.
///
/// ```
/// # use adk_core::{Embedder, Result};
/// # struct MyEmbedder;
/// # #[async_trait::async_trait]
/// # impl Embedder for MyEmbedder {
/// #     fn model(&self) -> &str { "m" }
/// #     fn dimensions(&self) -> Option<usize> { None }
/// #     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> { Ok(vec![vec![1.0]; texts.len()]) }
/// # }
/// use adk_session::{InMemoryMemoryService, Ranking, SemanticSearch};
///
/// let memory = InMemoryMemoryService::new()
///     .with_semantic_search(SemanticSearch::new(MyEmbedder).ranking(Ranking::Vector).limit(5));
/// ```
#[derive(Clone)]
pub struct SemanticSearch {
    embedder: Arc<dyn Embedder>,
    ranking: Ranking,
    limit: usize,
}

impl std::fmt::Debug for SemanticSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticSearch")
            .field("model", &self.embedder.model())
            .field("ranking", &self.ranking)
            .field("limit", &self.limit)
            .finish()
    }
}

impl SemanticSearch {
    /// Searches with `embedder`, fusing vector and keyword rankings, returning at most 10
    /// memories.
    pub fn new(embedder: impl IntoEmbedder) -> Self {
        Self {
            embedder: embedder.into_embedder(),
            ranking: Ranking::default(),
            limit: DEFAULT_LIMIT,
        }
    }

    /// Sets how results are ranked (default [`Ranking::Fused`]).
    pub fn ranking(mut self, ranking: Ranking) -> Self {
        self.ranking = ranking;
        self
    }

    /// Sets how many memories a search returns at most (default 10, at least 1). Keyword search
    /// without an embedder returns every match; a vector ranking has no such end, since every
    /// memory has some similarity.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit.max(1);
        self
    }

    /// The name of the embedder's model, stored beside each vector.
    pub(crate) fn model(&self) -> &str {
        self.embedder.model()
    }

    /// One vector per text, checked (see [`adk_core::check_embeddings`]) and scaled to unit length,
    /// so that cosine similarity is a dot product; no call for no text.
    pub(crate) async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let embedder = &*self.embedder;
        let vectors = embedder.embed(texts).await.map_err(Error::embedding)?;
        adk_core::check_embeddings(
            embedder.model(),
            embedder.dimensions(),
            texts.len(),
            &vectors,
        )
        .map_err(Error::embedding)?;
        let mut vectors = vectors;
        vectors.iter_mut().for_each(|vector| normalize(vector));
        Ok(vectors)
    }

    /// The vectors of the chunks (see [`chunks`]) of each text in `texts`, embedded in one call,
    /// regrouped per text.
    pub(crate) async fn embed_chunks(&self, texts: &[&str]) -> Result<Vec<Vec<Vec<f32>>>> {
        let per_text: Vec<Vec<&str>> = texts.iter().map(|text| chunks(text)).collect();
        let flat: Vec<String> = per_text.iter().flatten().map(|&c| c.to_owned()).collect();
        let mut vectors = self.embed(&flat).await?.into_iter();
        Ok(per_text
            .iter()
            .map(|text_chunks| vectors.by_ref().take(text_chunks.len()).collect())
            .collect())
    }

    /// The vector of `query`.
    pub(crate) async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed(&[query.to_owned()]).await?;
        Ok(vectors.pop().unwrap_or_default())
    }

    /// The final ranking of a search: `by_vector` (best first) alone, or fused with `by_keyword`
    /// (best first), cut at the limit.
    pub(crate) fn rank<K: Copy + Eq + Hash>(&self, by_keyword: &[K], by_vector: &[K]) -> Vec<K> {
        let mut ranked = if self.fuses() {
            fuse(&[by_keyword, by_vector])
        } else {
            by_vector.to_vec()
        };
        ranked.truncate(self.limit);
        ranked
    }

    /// Whether the vector ranking is fused with the keyword ranking.
    pub(crate) fn fuses(&self) -> bool {
        self.ranking.fuses()
    }

    /// How many of the best vector matches take part in the ranking (and, when fused, of the best
    /// keyword matches).
    pub(crate) fn candidates(&self) -> usize {
        self.ranking.candidates(self.limit)
    }
}

/// Each memory's best chunk similarity, gathered from the scores of its chunks as they come: a
/// memory ranks by the chunk of it that matches best.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Default)]
pub(crate) struct BestChunks(std::collections::HashMap<i64, f32>);

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl BestChunks {
    /// Counts `score`, the similarity of one chunk of memory `id`.
    pub(crate) fn offer(&mut self, id: i64, score: f32) {
        let best = self.0.entry(id).or_insert(f32::MIN);
        *best = best.max(score);
    }

    /// The `count` memories whose best chunks match best, best first.
    pub(crate) fn best(self, count: usize) -> Vec<i64> {
        best(self.0.into_iter().collect(), count)
    }
}

/// The items of `scored` (an item and its similarity) ordered best first, at most `count`: the
/// best are selected in linear time and only they are sorted.
pub(crate) fn best<K: Copy>(mut scored: Vec<(K, f32)>, count: usize) -> Vec<K> {
    let by_score = |a: &(K, f32), b: &(K, f32)| b.1.total_cmp(&a.1);
    if count == 0 {
        return Vec::new();
    }
    if scored.len() > count {
        scored.select_nth_unstable_by(count - 1, by_score);
        scored.truncate(count);
    }
    scored.sort_by(by_score);
    scored.into_iter().map(|(item, _)| item).collect()
}

/// `text` cut into chunks of at most [`CHUNK_BYTES`], at whitespace where there is some (a single
/// longer word is cut at a character boundary). Text of that size or less is one chunk.
pub(crate) fn chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut rest = text.trim();
    while rest.len() > CHUNK_BYTES {
        let mut end = CHUNK_BYTES;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let cut = rest[..end]
            .rfind(char::is_whitespace)
            .filter(|&at| at > 0)
            .unwrap_or(end);
        chunks.push(rest[..cut].trim_end());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        chunks.push(rest);
    }
    chunks
}

impl Error {
    /// The embedder failed or answered something unusable.
    pub(crate) fn embedding(source: adk_core::Error) -> Self {
        Self::new(
            ErrorKind::Embedding,
            format!("embedding for memory failed: {}", source.message()),
        )
        .with_source(source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_keeps_the_highest_scores_in_order() {
        let scored = vec![(1, 0.1), (2, 0.9), (3, -0.5), (4, 0.7), (5, 0.3)];
        assert_eq!(best(scored.clone(), 3), [2, 4, 5]);
        assert_eq!(best(scored.clone(), 10), [2, 4, 5, 1, 3]);
        assert!(best(scored, 0).is_empty());
    }

    #[test]
    fn long_text_is_cut_at_whitespace_and_nothing_is_lost() {
        let word = "wörd ";
        let text = word.repeat(1_000);
        let cut = chunks(&text);
        assert!(cut.len() > 1);
        assert!(cut.iter().all(|chunk| chunk.len() <= CHUNK_BYTES));
        assert_eq!(cut.join(" "), text.trim());
        let long_word = "é".repeat(2_000);
        assert_eq!(chunks(&long_word).concat(), long_word);
        assert_eq!(chunks("  short  "), ["short"]);
        assert!(chunks("   ").is_empty());
    }
}
