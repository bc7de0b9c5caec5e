//! Searching a retrieval corpus of 1,000, 10,000 and 100,000 chunks of 384-number vectors (the
//! size of small embedding models), by vector alone and fused with BM25, with an embedder that
//! answers at once so that only the corpus is measured.
//!
//! Run with `cargo bench -p adk-tool --features retrieval --bench retrieval`.

use std::sync::Arc;

use adk_core::{Embedder, Result};
use adk_tool::retrieval::{Corpus, Ranking, SearchOptions};
use async_trait::async_trait;

fn main() {
    divan::main();
}

const DIMENSIONS: usize = 384;

/// Words the synthetic documents are made of.
const WORDS: &[&str] = &[
    "install", "package", "server", "mountain", "weather", "account", "password", "reset",
    "invoice", "refund", "shipping", "order", "license", "backup", "restore", "network",
];

/// Vectors made from a hash of the text: deterministic, spread over every dimension, and free.
struct HashEmbedder;

#[async_trait]
impl Embedder for HashEmbedder {
    fn model(&self) -> &str {
        "hash-384"
    }

    fn dimensions(&self) -> Option<usize> {
        Some(DIMENSIONS)
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
                (0..DIMENSIONS)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % 2_000) as f32 / 1_000.0 - 1.0
                    })
                    .collect()
            })
            .collect())
    }
}

/// A corpus of `chunks` one-chunk documents of twelve words each.
fn corpus(chunks: usize) -> Arc<Corpus> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let corpus = Arc::new(Corpus::new(HashEmbedder).batch_size(1_000));
    runtime.block_on(async {
        for n in 0..chunks {
            let text: Vec<&str> = (0..12)
                .map(|i| WORDS[(n * 7 + i * 3 + n / 5) % WORDS.len()])
                .collect();
            corpus
                .add_text(format!("doc-{n}.md"), format!("{} {n}", text.join(" ")))
                .await
                .unwrap();
        }
    });
    corpus
}

fn search(bencher: divan::Bencher<'_, '_>, chunks: usize, ranking: Ranking) {
    let corpus = corpus(chunks);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let options = SearchOptions::new().top_k(5).ranking(ranking);
    bencher.bench_local(|| {
        runtime
            .block_on(corpus.search("how do I reset my account password", options))
            .unwrap()
    });
}

#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 20)]
fn vector(bencher: divan::Bencher<'_, '_>, chunks: usize) {
    search(bencher, chunks, Ranking::Vector);
}

#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 20)]
fn fused(bencher: divan::Bencher<'_, '_>, chunks: usize) {
    search(bencher, chunks, Ranking::Fused);
}
