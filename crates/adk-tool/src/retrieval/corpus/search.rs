//! Searching a corpus: the query embedded, documents of another model embedded again, then the
//! chunks in scope ranked by cosine similarity, fused with BM25 unless asked not to.

use std::collections::BTreeSet;

use super::{Corpus, Document, Scope, embed};
use crate::retrieval::rank::{self, Bm25};
use crate::retrieval::{Passage, RetrievalError, SearchOptions};

impl Corpus {
    /// The passages of the documents every search sees that best answer `query`.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::Embedding`] when the embedder fails.
    pub async fn search(
        &self,
        query: &str,
        options: SearchOptions,
    ) -> Result<Vec<Passage>, RetrievalError> {
        self.search_in(query, options, &[Scope::Shared]).await
    }

    /// [`search`](Self::search) over the documents of `scopes`.
    pub(crate) async fn search_in(
        &self,
        query: &str,
        options: SearchOptions,
        scopes: &[Scope],
    ) -> Result<Vec<Passage>, RetrievalError> {
        let in_scope = |scope: &Scope| scopes.contains(scope);
        if self.is_empty_in(&in_scope) {
            return Ok(Vec::new());
        }
        let embedder = self.embedder.read().clone();
        let stale = {
            let index = self.index.read();
            index
                .documents
                .iter()
                .any(|((scope, _), doc)| in_scope(scope) && doc.model != embedder.model())
        };
        if stale {
            let _writer = self.watched.lock().await;
            self.reembed(&in_scope).await?;
        }
        let mut query_vector = embed(&*embedder, &[query.to_owned()])
            .await?
            .pop()
            .unwrap_or_default();
        adk_core::ranking::normalize(&mut query_vector);
        Ok(self.rank(query, &query_vector, embedder.model(), options, &in_scope))
    }

    /// Whether no document of a scope `in_scope` accepts is indexed.
    pub(crate) fn is_empty_in(&self, in_scope: &(dyn Fn(&Scope) -> bool + Sync)) -> bool {
        let index = self.index.read();
        !index.documents.keys().any(|(scope, _)| in_scope(scope))
    }

    /// The best passages for a query and its unit vector, among the chunks of the documents in
    /// scope that `model` embedded.
    fn rank(
        &self,
        query: &str,
        query_vector: &[f32],
        model: &str,
        options: SearchOptions,
        in_scope: &(dyn Fn(&Scope) -> bool + Sync),
    ) -> Vec<Passage> {
        let index = self.index.read();
        let documents: Vec<(&String, &Document)> = index
            .documents
            .iter()
            .filter(|((scope, _), doc)| {
                in_scope(scope) && doc.model == model && doc.dimensions == query_vector.len()
            })
            .map(|((_, source), doc)| (source, doc))
            .collect();
        let chunks = || {
            documents.iter().enumerate().flat_map(|(d, (_, doc))| {
                doc.chunks
                    .iter()
                    .enumerate()
                    .map(move |(c, chunk)| ((d, c), chunk))
            })
        };
        let similarity = |(d, c): (usize, usize)| {
            let doc = documents[d].1;
            adk_core::ranking::dot(
                &doc.vectors[c * doc.dimensions..][..doc.dimensions],
                query_vector,
            )
        };
        let top_k = options.top_k.max(1);
        let candidates = options.ranking.candidates(top_k);
        let by_vector: Vec<(usize, usize)> =
            rank::best(chunks().map(|(at, _)| (similarity(at), at)), candidates)
                .into_iter()
                .map(|(_, at)| at)
                .collect();
        let ranked = if options.ranking.fuses() {
            {
                let terms: Vec<String> = rank::words(query)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let stats = Bm25::new(
                    &terms,
                    chunks().map(|(_, chunk)| (chunk.terms.as_slice(), chunk.words)),
                );
                let by_keyword: Vec<(usize, usize)> = rank::best(
                    chunks()
                        .map(|(at, chunk)| (stats.score(&terms, &chunk.terms, chunk.words), at))
                        .filter(|(score, _)| *score > 0.0),
                    candidates,
                )
                .into_iter()
                .map(|(_, at)| at)
                .collect();
                adk_core::ranking::fuse(&[&by_keyword, &by_vector])
            }
        } else {
            by_vector
        };
        ranked
            .into_iter()
            .map(|at| (similarity(at), at))
            .filter(|(score, _)| options.min_score.is_none_or(|least| *score >= least))
            .take(top_k)
            .map(|(score, (d, c))| {
                let (source, doc) = documents[d];
                let chunk = &doc.chunks[c];
                Passage {
                    source: source.clone(),
                    span: chunk.span,
                    section: (!chunk.section.is_empty()).then(|| chunk.section.to_string()),
                    score,
                    text: doc.text[chunk.span.start..chunk.span.end].to_owned(),
                }
            })
            .collect()
    }
}
