//! The arithmetic of retrieval: the best `k` of many scores with a heap and a BM25 keyword score.
//! Unit vectors and the fusion of rankings are `adk_core::ranking`'s.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

/// BM25's term-frequency saturation and length normalisation, at their customary values.
const BM25_K1: f32 = 1.2;
const BM25_B: f32 = 0.75;

/// The distinct lowercase words of `text` (runs of letters and digits, any script) with how
/// often each occurs, sorted by word so that a lookup is a binary search.
pub(crate) fn term_counts(text: &str) -> Vec<(Box<str>, u32)> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for word in words(text) {
        *counts.entry(word).or_default() += 1;
    }
    let mut terms: Vec<(Box<str>, u32)> = counts
        .into_iter()
        .map(|(word, count)| (word.into_boxed_str(), count))
        .collect();
    terms.sort_unstable();
    terms
}

/// The lowercase words of `text`, in order, repeats kept.
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// How often `term` occurs in `terms` (as [`term_counts`] made them).
pub(crate) fn count(terms: &[(Box<str>, u32)], term: &str) -> u32 {
    terms
        .binary_search_by(|(word, _)| (**word).cmp(term))
        .map_or(0, |at| terms[at].1)
}

/// What BM25 needs to know of the texts ranked: how many there are, their mean length in words,
/// and how many hold each query term.
#[derive(Debug)]
pub(crate) struct Bm25 {
    idf: Vec<f32>,
    mean_length: f32,
}

impl Bm25 {
    /// The statistics of `texts` (each its term counts and length) for `query_terms`.
    pub(crate) fn new<'a>(
        query_terms: &[String],
        texts: impl Iterator<Item = (&'a [(Box<str>, u32)], u32)>,
    ) -> Self {
        let mut holding = vec![0u32; query_terms.len()];
        let (mut total, mut length) = (0u32, 0u64);
        for (terms, words) in texts {
            total += 1;
            length += u64::from(words);
            for (at, term) in query_terms.iter().enumerate() {
                if count(terms, term) > 0 {
                    holding[at] += 1;
                }
            }
        }
        let n = total as f32;
        let idf = holding
            .iter()
            .map(|&df| (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
            .collect();
        let mean_length = if total == 0 {
            1.0
        } else {
            (length as f32 / n).max(1.0)
        };
        Self { idf, mean_length }
    }

    /// The BM25 score of one text for the query terms the statistics were made for; 0 when it
    /// holds none of them.
    pub(crate) fn score(
        &self,
        query_terms: &[String],
        terms: &[(Box<str>, u32)],
        words: u32,
    ) -> f32 {
        let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * words as f32 / self.mean_length);
        query_terms
            .iter()
            .zip(&self.idf)
            .map(|(term, idf)| {
                let tf = count(terms, term) as f32;
                idf * tf * (BM25_K1 + 1.0) / (tf + norm)
            })
            .sum()
    }
}

/// One scored item in [`best`]'s heap: ordered by score, then earlier items first.
struct Scored<T> {
    score: f32,
    order: usize,
    item: T,
}

impl<T> PartialEq for Scored<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Scored<T> {}

impl<T> PartialOrd for Scored<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Scored<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.order.cmp(&self.order))
    }
}

/// The `k` items of highest score, best first (equal scores in the order they came), kept in a
/// heap of `k` so that ranking `n` items costs `n log k` and holds no more than `k`.
pub(crate) fn best<T>(scored: impl IntoIterator<Item = (f32, T)>, k: usize) -> Vec<(f32, T)> {
    if k == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Reverse<Scored<T>>> = BinaryHeap::with_capacity(k + 1);
    for (order, (score, item)) in scored.into_iter().enumerate() {
        let entry = Scored { score, order, item };
        if heap.len() < k {
            heap.push(Reverse(entry));
        } else if heap.peek().is_some_and(|Reverse(worst)| entry > *worst) {
            heap.pop();
            heap.push(Reverse(entry));
        }
    }
    let mut best: Vec<Scored<T>> = heap.into_iter().map(|Reverse(entry)| entry).collect();
    best.sort_unstable_by(|a, b| b.cmp(a));
    best.into_iter()
        .map(|entry| (entry.score, entry.item))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_keeps_the_best_k_in_order() {
        let scores = [0.1, 0.9, 0.5, 0.9, -1.0, 0.7];
        let found: Vec<(f32, usize)> = best(scores.iter().copied().zip(0..), 3);
        assert_eq!(found, [(0.9, 1), (0.9, 3), (0.7, 5)]);
        assert!(best(scores.iter().copied().zip(0..), 0).is_empty());
        assert_eq!(best(scores.iter().copied().zip(0..), 10).len(), 6);
    }

    #[test]
    fn bm25_prefers_rare_terms_and_shorter_texts() {
        let texts = [
            term_counts("the cat sat on the mat"),
            term_counts("the dog"),
            term_counts("the cat and the dog and the bird and the fish"),
        ];
        let lengths = [6, 2, 11];
        let query: Vec<String> = words("cat dog").collect();
        let stats = Bm25::new(&query, texts.iter().map(Vec::as_slice).zip(lengths));
        let scores: Vec<f32> = texts
            .iter()
            .zip(lengths)
            .map(|(terms, length)| stats.score(&query, terms, length))
            .collect();
        assert!(scores[2] > scores[0] && scores[2] > scores[1], "{scores:?}");
        assert!(scores[1] > scores[0], "shorter text wins: {scores:?}");
        assert_eq!(stats.score(&query, &term_counts("nothing here"), 2), 0.0);
        assert_eq!(count(&term_counts("A a b"), "a"), 2);
    }
}
