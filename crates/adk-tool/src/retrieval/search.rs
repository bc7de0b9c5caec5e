//! What a search is asked ([`SearchOptions`], [`Ranking`]) and what it finds ([`Passage`]).

use adk_core::Ranking;
use serde::Serialize;

use super::Span;

/// How a search is run: how many passages it returns, how it ranks, and the least similarity a
/// passage needs.
///
/// ```
/// use adk_tool::retrieval::{Ranking, SearchOptions};
///
/// let options = SearchOptions::new().top_k(3).ranking(Ranking::Vector).min_score(0.2);
/// assert_eq!(options.top_k, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// How many passages at most (default 5, at least 1).
    pub top_k: usize,
    /// How chunks are ranked (default [`Ranking::Fused`]).
    pub ranking: Ranking,
    /// Passages less similar to the query than this cosine similarity are left out (default:
    /// none are).
    pub min_score: Option<f32>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            top_k: 5,
            ranking: Ranking::default(),
            min_score: None,
        }
    }
}

impl SearchOptions {
    /// Five passages, fused ranking, no least score.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how many passages a search returns at most (at least 1).
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k.max(1);
        self
    }

    /// Sets how chunks are ranked.
    pub fn ranking(mut self, ranking: Ranking) -> Self {
        self.ranking = ranking;
        self
    }

    /// Leaves out passages whose cosine similarity to the query is below `min_score`.
    pub fn min_score(mut self, min_score: f32) -> Self {
        self.min_score = Some(min_score);
        self
    }
}

/// A passage a search found, with what a citation needs: where it comes from and where in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Passage {
    /// The document: its path as it was indexed, its artifact name, or the name given to a text.
    pub source: String,
    /// Where the passage lies in the document.
    pub span: Span,
    /// The headings above the passage, outermost first, joined by `" > "`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The cosine similarity of the passage to the query, from -1 to 1.
    pub score: f32,
    /// The passage, exactly as it is in the document.
    pub text: String,
}
