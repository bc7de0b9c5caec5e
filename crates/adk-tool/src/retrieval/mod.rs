//! Retrieval-augmented generation: a [`Corpus`] of documents (files, directories walked with a
//! [`Glob`], artifacts, texts) cut into chunks with their places, embedded by any
//! [`adk_core::Embedder`] and searched by meaning fused with keywords, and the [`RetrievalTool`]
//! that lets a model search it and cite what it found.

mod chunk;
mod corpus;
mod error;
mod files;
mod glob;
mod rank;
mod search;
mod tool;

pub use adk_core::Ranking;
pub use chunk::Span;
pub use corpus::{Corpus, IndexReport, Indexed};
pub use error::RetrievalError;
pub use glob::Glob;
pub use search::{Passage, SearchOptions};
pub use tool::{RetrievalArgs, RetrievalTool, RetrievalToolBuilder};
