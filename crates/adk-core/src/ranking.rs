//! Ranking by meaning, shared by every search over embeddings (memory, retrieval): how a search
//! ranks ([`Ranking`]), vectors scaled to unit length so that their cosine similarity is a dot
//! product ([`normalize`], [`dot`]), and reciprocal rank fusion of several rankings ([`fuse`]).

use std::collections::HashMap;
use std::hash::Hash;

/// The constant of reciprocal rank fusion: an item at rank `r` (from 1) of a ranking scores
/// `1 / (RRF_K + r)`. 60 is the value of the paper that introduced the method (Cormack, Clarke and
/// Büttcher, 2009), which damps the weight of the very first ranks without ignoring them.
const RRF_K: f64 = 60.0;

/// How a search over embeddings ranks what it finds.
///
/// ```
/// use adk_core::Ranking;
///
/// assert_eq!(Ranking::default(), Ranking::Fused);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Ranking {
    /// The vector ranking fused with a keyword ranking by reciprocal rank fusion (the default):
    /// what both find ranks first, what either finds is kept, and an exact name or number that
    /// the embedder blurs is still found by its words.
    #[default]
    Fused,
    /// The vector ranking alone, by cosine similarity to the query.
    Vector,
}

impl Ranking {
    /// Whether the vector ranking is fused with a keyword ranking.
    pub fn fuses(self) -> bool {
        matches!(self, Self::Fused)
    }

    /// How far down each ranking a search looks to return `limit` results: fusion reorders, so
    /// it looks three times as far as it returns.
    ///
    /// ```
    /// use adk_core::Ranking;
    ///
    /// assert_eq!(Ranking::Vector.candidates(5), 5);
    /// assert_eq!(Ranking::Fused.candidates(5), 15);
    /// ```
    pub fn candidates(self, limit: usize) -> usize {
        if self.fuses() {
            limit.saturating_mul(3)
        } else {
            limit
        }
    }
}

/// Scales `vector` to length 1, so that the dot product of two such vectors is their cosine
/// similarity; all zeros stays all zeros (it matches nothing).
///
/// ```
/// let mut vector = vec![3.0, 4.0];
/// adk_core::ranking::normalize(&mut vector);
/// assert_eq!(vector, [0.6, 0.8]);
/// ```
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product of `a` and `b`: their cosine similarity when both have unit length (see
/// [`normalize`]); 0 when their lengths differ, as vectors of two models never match.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Reciprocal rank fusion of `rankings` (each best first): an item scores the sum of
/// `1 / (60 + rank)` over the rankings it is in; ties keep the order of first appearance.
///
/// ```
/// let by_keyword = [1, 2, 3];
/// let by_vector = [4, 3, 1];
/// assert_eq!(adk_core::ranking::fuse(&[&by_keyword, &by_vector]), [1, 3, 4, 2]);
/// ```
pub fn fuse<K: Copy + Eq + Hash>(rankings: &[&[K]]) -> Vec<K> {
    let mut scores: HashMap<K, (f64, usize)> = HashMap::new();
    for ranking in rankings {
        for (rank, &item) in ranking.iter().enumerate() {
            let first = scores.len();
            let entry = scores.entry(item).or_insert((0.0, first));
            entry.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(K, f64, usize)> = scores
        .into_iter()
        .map(|(item, (score, first))| (item, score, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused.into_iter().map(|(item, _, _)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_ranks_what_both_found_first() {
        assert_eq!(fuse(&[&[1, 2, 3], &[4, 3, 1]]), [1, 3, 4, 2]);
        assert!(fuse::<u8>(&[&[], &[]]).is_empty());
    }

    #[test]
    fn unit_vectors_make_the_dot_product_a_cosine() {
        let cosine = |a: &[f32], b: &[f32]| {
            let (mut a, mut b) = (a.to_vec(), b.to_vec());
            normalize(&mut a);
            normalize(&mut b);
            dot(&a, &b)
        };
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 1.0]), 0.0);
    }
}
