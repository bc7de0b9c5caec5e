//! Memory by meaning: [`SemanticSearch`] (the embedder a memory service may hold and how it
//! ranks), the chunks of text that are embedded, vectors of unit length whose cosine similarity is
//! a dot product, the best of a scored list, and reciprocal rank fusion of
//! the vector ranking with the keyword ranking.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use adk_core::{Embedder, IntoEmbedder};

use crate::error::{Error, ErrorKind, Result};

/// The default of [`SemanticSearch::limit`].
const DEFAULT_LIMIT: usize = 10;

/// The constant of reciprocal rank fusion: an item at rank `r` (from 1) of a ranking scores
/// `1 / (RRF_K + r)`. 60 is the value of the paper that introduced the method (Cormack, Clarke and
/// Büttcher, 2009), which damps the weight of the very first ranks without ignoring them.
const RRF_K: f64 = 60.0;

/// The longest chunk embedded, in bytes. A remembered text longer than this is cut, at
/// whitespace, into several chunks; the best-matching chunk ranks the memory. Small enough for the
/// context of the smallest embedding models (512 tokens).
pub(crate) const CHUNK_BYTES: usize = 1_200;

/// How a memory service with an embedder ranks what a search finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Ranking {
    /// The vector ranking and the keyword ranking fused by reciprocal rank fusion (the default):
    /// a memory found by both ranks first, and one found by either is kept.
    #[default]
    Fused,
    /// The vector ranking alone, by cosine similarity to the query.
    Vector,
}

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
        Ok(vectors.into_iter().map(unit).collect())
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
        let mut ranked = match self.ranking {
            Ranking::Vector => by_vector.to_vec(),
            Ranking::Fused => fuse(&[by_keyword, by_vector]),
        };
        ranked.truncate(self.limit);
        ranked
    }

    /// Whether the vector ranking is fused with the keyword ranking.
    pub(crate) fn fuses(&self) -> bool {
        self.ranking == Ranking::Fused
    }

    /// How many of the best vector matches take part in the ranking (and, when fused, of the best
    /// keyword matches).
    pub(crate) fn candidates(&self) -> usize {
        // Fusion reorders, so it looks further down the vector ranking than it returns.
        match self.ranking {
            Ranking::Vector => self.limit,
            Ranking::Fused => self.limit.saturating_mul(3),
        }
    }
}

/// Reciprocal rank fusion of `rankings` (each best first): every item scores the sum of
/// `1 / (60 + rank)` over the rankings it is in; ties keep the order of first appearance.
pub(crate) fn fuse<K: Copy + Eq + Hash>(rankings: &[&[K]]) -> Vec<K> {
    let mut scores: HashMap<K, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for ranking in rankings {
        for (rank, &item) in ranking.iter().enumerate() {
            let score = 1.0 / (RRF_K + rank as f64 + 1.0);
            let entry = scores.entry(item).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += score;
        }
    }
    let mut fused: Vec<(K, f64, usize)> = scores
        .into_iter()
        .map(|(item, (score, first))| (item, score, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused.into_iter().map(|(item, _, _)| item).collect()
}

/// `vector` scaled to unit length (left as it is when all zeros), so that the cosine similarity of
/// two such vectors is their [`dot`] product.
pub(crate) fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

/// The dot product of `a` and `b`: their cosine similarity when both have unit length (see
/// [`unit`]); 0 when their lengths differ.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
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
    fn fusion_ranks_what_both_found_first() {
        let keyword = [1, 2, 3];
        let vector = [4, 3, 1];
        assert_eq!(fuse(&[&keyword, &vector]), [1, 3, 4, 2]);
        assert_eq!(fuse::<u8>(&[&[], &[]]), Vec::<u8>::new());
    }

    #[test]
    fn unit_vectors_make_cosine_a_dot_product() {
        let cosine = |a: &[f32], b: &[f32]| dot(&unit(a.to_vec()), &unit(b.to_vec()));
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
        assert!((dot(&unit(vec![3.0, 4.0]), &[0.6, 0.8]) - 1.0).abs() < 1e-6);
    }

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
