//! [`ConceptEmbedder`]: a deterministic embedder for tests of memory by meaning, which maps words
//! to the concepts of a small thesaurus, so that paraphrases sharing no word get close vectors.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use adk_core::{Embedder, Error, ErrorKind, Result};

/// Groups of words that mean about the same thing; each group is one dimension of the vectors.
const THESAURUS: &[&[&str]] = &[
    &["alps", "mountain", "mountains", "peak", "peaks", "summit"],
    &[
        "cold",
        "weather",
        "snow",
        "snowy",
        "freezing",
        "forecast",
        "temperature",
    ],
    &["shoes", "sneakers", "trainers", "footwear"],
    &["running", "jogging", "marathon", "run"],
    &["bought", "purchased", "ordered", "buy"],
    &["dog", "puppy", "canine", "pet"],
];

/// Words outside the thesaurus share a few dimensions, picked by a hash of the word, so unrelated
/// texts are not all orthogonal (as with real models).
const HASHED_DIMENSIONS: usize = 4;

/// A deterministic [`Embedder`] for tests: each text becomes the counts of its words' concepts
/// (see the thesaurus in this module), so "is it cold in the Alps?" and "mountain weather" are
/// close. It counts its calls and texts, and can be told to fail.
#[derive(Debug)]
pub struct ConceptEmbedder {
    model: String,
    calls: AtomicUsize,
    texts: AtomicUsize,
    failing: AtomicBool,
}

impl ConceptEmbedder {
    /// An embedder whose model is called `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            calls: AtomicUsize::new(0),
            texts: AtomicUsize::new(0),
            failing: AtomicBool::new(false),
        }
    }

    /// How many times [`embed`](Embedder::embed) was called.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// How many texts were embedded in all.
    pub fn texts(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }

    /// Makes every later call fail (`true`) or succeed again (`false`).
    pub fn fail(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    fn vector(text: &str) -> Vec<f32> {
        let mut vector = vec![0.0; THESAURUS.len() + HASHED_DIMENSIONS];
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            let word = word.to_lowercase();
            let at = THESAURUS
                .iter()
                .position(|group| group.contains(&word.as_str()))
                .unwrap_or_else(|| {
                    let hash = word
                        .bytes()
                        .fold(0usize, |h, b| h.wrapping_mul(31) + b as usize);
                    THESAURUS.len() + hash % HASHED_DIMENSIONS
                });
            // Concept words weigh more than the rest, as content words do in real models.
            vector[at] += if at < THESAURUS.len() { 3.0 } else { 0.5 };
        }
        vector
    }
}

#[async_trait::async_trait]
impl Embedder for ConceptEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn dimensions(&self) -> Option<usize> {
        Some(THESAURUS.len() + HASHED_DIMENSIONS)
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::Model,
                "the test embedder was told to fail",
            ));
        }
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|text| Self::vector(text)).collect())
    }
}
