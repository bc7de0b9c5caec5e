//! [`RetrievalError`]: what can go wrong while indexing documents or searching them.

use std::path::PathBuf;

use adk_core::ErrorKind;

/// An error of a [`Corpus`](super::Corpus) or of the [`RetrievalTool`](super::RetrievalTool).
///
/// A failed indexing call stores nothing: a corpus embeds every changed document before it
/// changes its index. New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetrievalError {
    /// The embedder failed, or answered something unusable (see [`adk_core::check_embeddings`]).
    #[error("the embedding model `{model}` failed: {}", source.message())]
    Embedding {
        /// The embedder's model.
        model: String,
        /// The embedder's error.
        #[source]
        source: adk_core::Error,
    },
    /// A file could not be read, or a directory not walked.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A document is not UTF-8 text (a binary file, or an artifact of a binary type).
    #[error("{document} is not UTF-8 text, so it cannot be indexed")]
    NotText {
        /// The document: its path or artifact name.
        document: String,
    },
    /// A document is larger than the corpus indexes.
    #[error("{document} holds {bytes} bytes, more than the {limit} a corpus indexes per document")]
    TooLarge {
        /// The document: its path or artifact name.
        document: String,
        /// Its size.
        bytes: u64,
        /// The corpus's limit (see [`Corpus::max_document_bytes`](super::Corpus::max_document_bytes)).
        limit: u64,
    },
    /// An artifact could not be listed or loaded.
    #[error("cannot load the artifact {name}: {}", source.message())]
    Artifact {
        /// The artifact's file name.
        name: String,
        /// The artifact service's error.
        #[source]
        source: adk_core::Error,
    },
    /// No artifact has the name asked for.
    #[error("there is no artifact named {name}")]
    NoSuchArtifact {
        /// The artifact's file name.
        name: String,
    },
    /// A glob pattern is not valid.
    #[error("the glob `{pattern}` is not valid: {reason}")]
    InvalidGlob {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RetrievalError {
    /// The kind of [`adk_core::Error`] this error becomes.
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Embedding { .. } => ErrorKind::Model,
            Self::Read { .. } => ErrorKind::Tool,
            Self::Artifact { .. } => ErrorKind::Artifact,
            Self::NoSuchArtifact { .. } => ErrorKind::NotFound,
            Self::NotText { .. } | Self::TooLarge { .. } | Self::InvalidGlob { .. } => {
                ErrorKind::InvalidInput
            }
        }
    }
}

/// Keeps the retrieval error as the source, so callers can downcast it back.
impl From<RetrievalError> for adk_core::Error {
    fn from(error: RetrievalError) -> Self {
        adk_core::Error::new(error.kind(), error.to_string()).with_source(error)
    }
}
