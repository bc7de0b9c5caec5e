//! [`Corpus`]: documents indexed for retrieval. It cuts them into chunks, embeds the chunks in
//! batches, keeps the unit vectors in memory beside their model's name and the documents' content
//! hashes, and answers a query with the best passages by cosine similarity, fused with a BM25
//! keyword ranking unless asked not to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use adk_core::{Embedder, IntoEmbedder, SessionKey};
use parking_lot::RwLock;
use serde::Serialize;
use sha2::{Digest, Sha256};

mod artifacts;
mod search;

use crate::retrieval::chunk::{ChunkOptions, Piece, Span, chunk};
use crate::retrieval::files::{read_error, source_name, stamp_of, walk};
use crate::retrieval::rank;
use crate::retrieval::{Glob, RetrievalError};

/// The default longest chunk, in bytes: a few paragraphs, within the context of the smallest
/// embedding models (512 tokens).
const DEFAULT_CHUNK_BYTES: usize = 1_200;
/// The default overlap of consecutive chunks of one section, in bytes.
const DEFAULT_OVERLAP_BYTES: usize = 200;
/// The default number of chunks sent to the embedder in one call.
const DEFAULT_BATCH_SIZE: usize = 64;
/// The default largest document indexed: 8 MiB.
const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 8 << 20;

/// What an indexing call did to one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Indexed {
    /// The document is new: it was cut into `chunks` and embedded.
    Added {
        /// How many chunks it has.
        chunks: usize,
    },
    /// The document's content changed (or the embedder's model did): it was embedded again.
    Updated {
        /// How many chunks it has now.
        chunks: usize,
    },
    /// The document is indexed with this content and this model already: nothing was embedded.
    Unchanged,
}

/// What an indexing call over many documents did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IndexReport {
    /// Documents added, by source.
    pub added: Vec<String>,
    /// Documents embedded again because they changed, or because the embedder's model did.
    pub updated: Vec<String>,
    /// How many documents were found unchanged.
    pub unchanged: usize,
    /// Documents that are gone from their directory, or were removed, and left the index.
    pub removed: Vec<String>,
    /// Files that were found but not indexed (not text, too large), with the reason.
    pub skipped: Vec<(String, String)>,
}

/// Which searches see a document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Scope {
    /// Every search: documents the application indexed.
    Shared,
    /// Searches for one user of one app: the user's `user:` artifacts.
    User { app: String, user: String },
    /// Searches in one session: the session's own artifacts.
    Session {
        app: String,
        user: String,
        session: String,
    },
}

impl Scope {
    /// The scopes a search in `session` sees: what is shared, the user's and the session's.
    pub(crate) fn visible_from(session: &SessionKey) -> [Scope; 3] {
        [
            Scope::Shared,
            Scope::User {
                app: session.app_name.clone(),
                user: session.user_id.clone(),
            },
            Scope::for_artifact(session, ""),
        ]
    }

    /// The scope of the artifact `name` of `session`.
    pub(crate) fn for_artifact(session: &SessionKey, name: &str) -> Scope {
        if name.starts_with(USER_PREFIX) {
            Scope::User {
                app: session.app_name.clone(),
                user: session.user_id.clone(),
            }
        } else {
            Scope::Session {
                app: session.app_name.clone(),
                user: session.user_id.clone(),
                session: session.session_id.to_string(),
            }
        }
    }
}

/// The prefix of artifacts every session of a user shares.
const USER_PREFIX: &str = "user:";

/// Where a document came from, to know how to look for changes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// A file: its size and modification time when read, to skip reading it again when neither
    /// changed.
    File { stamp: Option<(u64, SystemTime)> },
    /// An artifact or a text given directly.
    Given,
}

/// A document in the index: its text, its chunks and their unit vectors.
#[derive(Debug)]
struct Document {
    text: Arc<str>,
    hash: [u8; 32],
    origin: Origin,
    /// The embedder's model that made `vectors`.
    model: String,
    dimensions: usize,
    chunks: Vec<Chunk>,
    /// The chunks' unit vectors, one after the other (`chunks.len() * dimensions` numbers).
    vectors: Vec<f32>,
}

/// One chunk of a document: where it is, its section, and its words for keyword ranking.
#[derive(Debug)]
struct Chunk {
    span: Span,
    section: Arc<str>,
    terms: Vec<(Box<str>, u32)>,
    words: u32,
}

impl Chunk {
    fn new(text: &str, piece: Piece) -> Self {
        let body = &text[piece.span.start..piece.span.end];
        let section: Arc<str> = piece.section.into();
        let embedded = embedding_text(&section, body);
        let words = rank::words(&embedded).count() as u32;
        Self {
            span: piece.span,
            terms: rank::term_counts(&embedded),
            section,
            words,
        }
    }
}

/// What is embedded for a chunk: its section's headings first, when the chunk does not start
/// with its heading, so a chunk deep in a section still says what it is about.
fn embedding_text(section: &str, body: &str) -> String {
    if section.is_empty() || body.starts_with('#') {
        body.to_owned()
    } else {
        format!("{section}\n\n{body}")
    }
}

/// A document read and cut, waiting for its vectors.
struct Pending {
    key: (Scope, String),
    text: Arc<str>,
    hash: [u8; 32],
    origin: Origin,
    chunks: Vec<Chunk>,
    /// Whether the index held a version of it.
    replaces: bool,
}

/// The documents indexed, by scope and source.
#[derive(Debug, Default)]
struct Index {
    documents: BTreeMap<(Scope, String), Document>,
}

/// The files and directories a corpus was given, which [`Corpus::refresh`] looks at again.
#[derive(Debug, Default)]
struct Watched {
    files: BTreeSet<PathBuf>,
    directories: Vec<(PathBuf, Glob)>,
}

/// A collection of documents indexed for retrieval by meaning, searched by the
/// [`RetrievalTool`](super::RetrievalTool) or directly.
///
/// Documents come from files (one, or a directory walked with a [`Glob`]), from artifacts, or as
/// text. Each is cut into chunks (at Markdown headings, then paragraphs packed up to
/// [`chunk_bytes`](Self::chunk_bytes) with an [`overlap`](Self::overlap_bytes)), every chunk
/// keeping its byte and line range in the document, and the chunks are embedded in batches of
/// [`batch_size`](Self::batch_size). Vectors are kept in memory, scaled to unit length, so a
/// search is one dot product per chunk and a heap of the best.
///
/// The index stays current cheaply: a document whose content hash did not change is not embedded
/// again, [`refresh`](Self::refresh) reads again the files and directories given (a file whose
/// size and modification time did not change is not even read) and drops the files that are
/// gone, and each document remembers the model that embedded it, so that after
/// [`set_embedder`](Self::set_embedder) with another model the next search embeds it again
/// before comparing vectors.
///
/// ```
/// # use adk_core::{Embedder, Result};
/// # struct Letters;
/// # #[async_trait::async_trait]
/// # impl Embedder for Letters {
/// #     fn model(&self) -> &str { "letters" }
/// #     fn dimensions(&self) -> Option<usize> { Some(3) }
/// #     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
/// #         Ok(texts.iter().map(|t| ["cat", "dog", "fish"].map(|w| t.matches(w).count() as f32 + 0.1).to_vec()).collect())
/// #     }
/// # }
/// use adk_tool::retrieval::{Corpus, SearchOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
/// let corpus = Corpus::new(Letters);
/// corpus.add_text("pets.md", "# Cats\n\nA cat sleeps.\n\n# Dogs\n\nA dog barks.").await?;
/// let passages = corpus.search("which dog barks?", SearchOptions::new().top_k(1)).await?;
/// assert_eq!(passages[0].source, "pets.md");
/// assert_eq!(passages[0].text, "# Dogs\n\nA dog barks.");
/// assert_eq!((passages[0].span.start_line, passages[0].span.end_line), (5, 7));
/// # Ok(())
/// # }
/// ```
pub struct Corpus {
    embedder: RwLock<Arc<dyn Embedder>>,
    chunking: ChunkOptions,
    batch_size: usize,
    max_document_bytes: u64,
    index: RwLock<Index>,
    /// Held by every change of the index, across its awaits, so that two indexing calls do not
    /// embed the same document twice or interleave their changes. Searches do not take it unless
    /// documents must be embedded again for a new model.
    watched: tokio::sync::Mutex<Watched>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let index = self.index.read();
        f.debug_struct("Corpus")
            .field("model", &self.embedder.read().model())
            .field("documents", &index.documents.len())
            .field("chunking", &self.chunking)
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// An empty corpus whose chunks `embedder` embeds: any [`Embedder`], such as
    /// `adk_model::OpenAiEmbedder` or `adk_model::GeminiEmbedder`.
    pub fn new(embedder: impl IntoEmbedder) -> Self {
        Self {
            embedder: RwLock::new(embedder.into_embedder()),
            chunking: ChunkOptions {
                max_bytes: DEFAULT_CHUNK_BYTES,
                overlap_bytes: DEFAULT_OVERLAP_BYTES,
            },
            batch_size: DEFAULT_BATCH_SIZE,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            index: RwLock::new(Index::default()),
            watched: tokio::sync::Mutex::new(Watched::default()),
        }
    }

    /// Sets the longest chunk, in bytes (default 1,200; at least 16). Applies to documents
    /// indexed after the call.
    pub fn chunk_bytes(mut self, bytes: usize) -> Self {
        self.chunking.max_bytes = bytes.max(16);
        self
    }

    /// Sets how many bytes consecutive chunks of one section may share (default 200; at most
    /// half a chunk), so that a passage cut at one chunk's end is whole in the next.
    pub fn overlap_bytes(mut self, bytes: usize) -> Self {
        self.chunking.overlap_bytes = bytes;
        self
    }

    /// Sets how many chunks go to the embedder in one call (default 64, at least 1).
    pub fn batch_size(mut self, size: usize) -> Self {
        self.batch_size = size.max(1);
        self
    }

    /// Sets the largest document indexed, in bytes (default 8 MiB). A larger file found in a
    /// directory is skipped and reported; one given by name is an error.
    pub fn max_document_bytes(mut self, bytes: u64) -> Self {
        self.max_document_bytes = bytes;
        self
    }

    /// Replaces the embedder. When its model differs from the one that embedded the documents,
    /// each is embedded again by the next search that sees it (or by [`refresh`](Self::refresh)),
    /// since vectors of different models are never compared.
    pub fn set_embedder(&self, embedder: impl IntoEmbedder) {
        *self.embedder.write() = embedder.into_embedder();
    }

    /// The model of the current embedder.
    pub fn model(&self) -> String {
        self.embedder.read().model().to_owned()
    }

    /// How many documents are indexed, in every scope.
    pub fn documents(&self) -> usize {
        self.index.read().documents.len()
    }

    /// How many chunks are indexed, in every scope.
    pub fn chunks(&self) -> usize {
        let index = self.index.read();
        index.documents.values().map(|doc| doc.chunks.len()).sum()
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.index.read().documents.is_empty()
    }

    /// The sources of the documents every search sees, sorted.
    pub fn sources(&self) -> Vec<String> {
        let index = self.index.read();
        index
            .documents
            .keys()
            .filter(|(scope, _)| *scope == Scope::Shared)
            .map(|(_, source)| source.clone())
            .collect()
    }

    /// Indexes `text` under the name `source` (replacing a document of that name whose content
    /// differs).
    ///
    /// # Errors
    ///
    /// [`RetrievalError::Embedding`] when the embedder fails; the index is unchanged.
    pub async fn add_text(
        &self,
        source: impl Into<String>,
        text: impl Into<String>,
    ) -> Result<Indexed, RetrievalError> {
        let _writer = self.watched.lock().await;
        let key = (Scope::Shared, source.into());
        self.index_one(key, text.into(), Origin::Given).await
    }

    /// Indexes the UTF-8 text file at `path`, whose source is the path as given, and keeps
    /// watching it: [`refresh`](Self::refresh) reads it again.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::Read`], [`RetrievalError::NotText`] or [`RetrievalError::TooLarge`] for
    /// a file that cannot be indexed, [`RetrievalError::Embedding`] when the embedder fails; the
    /// index is unchanged.
    pub async fn add_file(&self, path: impl AsRef<Path>) -> Result<Indexed, RetrievalError> {
        let path = path.as_ref().to_path_buf();
        let mut watched = self.watched.lock().await;
        let stamp = stamp_of(&path).await?;
        let source = source_name(&path);
        let text = self.read_text(&path, &source).await?;
        let key = (Scope::Shared, source);
        let indexed = self
            .index_one(key, text, Origin::File { stamp: Some(stamp) })
            .await?;
        watched.files.insert(path);
        Ok(indexed)
    }

    /// Indexes every file under `directory` whose path relative to it matches `pattern` (see
    /// [`Glob`]; `**/*.md` for every Markdown file), and keeps watching the directory:
    /// [`refresh`](Self::refresh) finds new, changed and deleted files. Hidden files and
    /// directories (names starting with `.`) are left out, and symbolic links to directories are
    /// not followed. A file that is not UTF-8 text or is too large is skipped and reported.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::InvalidGlob`], [`RetrievalError::Read`] for a directory that cannot be
    /// walked, [`RetrievalError::Embedding`] when the embedder fails; the index is unchanged.
    pub async fn add_dir(
        &self,
        directory: impl AsRef<Path>,
        pattern: &str,
    ) -> Result<IndexReport, RetrievalError> {
        let glob = Glob::new(pattern)?;
        let directory = directory.as_ref().to_path_buf();
        let mut watched = self.watched.lock().await;
        let files = walk(&directory, &glob).await?;
        let report = self.index_files(files, false).await?;
        if !watched
            .directories
            .iter()
            .any(|(dir, known)| *dir == directory && *known == glob)
        {
            watched.directories.push((directory, glob));
        }
        Ok(report)
    }

    /// Removes the document `source` that every search sees; whether there was one. A removed
    /// file is no longer watched (a directory it is in still is).
    pub async fn remove(&self, source: &str) -> bool {
        let mut watched = self.watched.lock().await;
        watched.files.retain(|path| source_name(path) != source);
        let key = (Scope::Shared, source.to_owned());
        self.index.write().documents.remove(&key).is_some()
    }

    /// Reads again every file and directory given to [`add_file`](Self::add_file) and
    /// [`add_dir`](Self::add_dir): new files are added, changed ones embedded again, deleted
    /// ones removed; and embeds again every document another model embedded.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::Read`] for a directory that cannot be walked,
    /// [`RetrievalError::Embedding`] when the embedder fails; the index is unchanged.
    pub async fn refresh(&self) -> Result<IndexReport, RetrievalError> {
        let watched = self.watched.lock().await;
        let mut files = BTreeSet::new();
        for path in &watched.files {
            files.insert(path.clone());
        }
        for (directory, glob) in &watched.directories {
            files.extend(walk(directory, glob).await?);
        }
        let mut report = self.index_files(files.into_iter().collect(), true).await?;
        let updated = self.reembed(&|scope| *scope == Scope::Shared).await?;
        report.updated.extend(updated);
        Ok(report)
    }

    /// Indexes one document, unless it is there with this content and model.
    async fn index_one(
        &self,
        key: (Scope, String),
        text: String,
        origin: Origin,
    ) -> Result<Indexed, RetrievalError> {
        let Some(pending) = self.pending(key.clone(), text, origin.clone()) else {
            // Unchanged content: keep the vectors, note the file's new stamp.
            if let Some(doc) = self.index.write().documents.get_mut(&key) {
                doc.origin = origin;
            }
            return Ok(Indexed::Unchanged);
        };
        let replaces = pending.replaces;
        let chunks = pending.chunks.len();
        self.embed_and_store(vec![pending]).await?;
        Ok(if replaces {
            Indexed::Updated { chunks }
        } else {
            Indexed::Added { chunks }
        })
    }

    /// Indexes `files` (sources are their paths), skipping those that are not text or are too
    /// large. With `drop_missing`, removes the indexed files that are not among them.
    async fn index_files(
        &self,
        files: Vec<PathBuf>,
        drop_missing: bool,
    ) -> Result<IndexReport, RetrievalError> {
        let mut report = IndexReport::default();
        let mut pending = Vec::new();
        let mut present = BTreeSet::new();
        for path in files {
            let source = source_name(&path);
            let key = (Scope::Shared, source.clone());
            present.insert(key.clone());
            let stamp = match stamp_of(&path).await {
                Ok(stamp) => stamp,
                Err(error) => {
                    report.skipped.push((source, error.to_string()));
                    continue;
                }
            };
            let known_stamp = {
                let index = self.index.read();
                index.documents.get(&key).and_then(|doc| match doc.origin {
                    Origin::File { stamp } => stamp,
                    Origin::Given => None,
                })
            };
            if known_stamp == Some(stamp) {
                report.unchanged += 1;
                continue;
            }
            let text = match self.read_text(&path, &source).await {
                Ok(text) => text,
                Err(error) => {
                    report.skipped.push((source, error.to_string()));
                    continue;
                }
            };
            let origin = Origin::File { stamp: Some(stamp) };
            match self.pending(key.clone(), text, origin.clone()) {
                Some(doc) => {
                    if doc.replaces {
                        report.updated.push(source);
                    } else {
                        report.added.push(source);
                    }
                    pending.push(doc);
                }
                None => {
                    report.unchanged += 1;
                    if let Some(doc) = self.index.write().documents.get_mut(&key) {
                        doc.origin = origin;
                    }
                }
            }
        }
        self.embed_and_store(pending).await?;
        if drop_missing {
            let mut index = self.index.write();
            index.documents.retain(|key, doc| {
                let gone = key.0 == Scope::Shared
                    && matches!(doc.origin, Origin::File { .. })
                    && !present.contains(key);
                if gone {
                    report.removed.push(key.1.clone());
                }
                !gone
            });
        }
        Ok(report)
    }

    /// `text` hashed and cut, unless the index holds it with this hash and the current model.
    fn pending(&self, key: (Scope, String), text: String, origin: Origin) -> Option<Pending> {
        let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        let model = self.model();
        let replaces = {
            let index = self.index.read();
            match index.documents.get(&key) {
                Some(doc) if doc.hash == hash && doc.model == model => return None,
                Some(_) => true,
                None => false,
            }
        };
        let text: Arc<str> = text.into();
        let chunks = chunk(&text, self.chunking)
            .into_iter()
            .map(|piece| Chunk::new(&text, piece))
            .collect();
        Some(Pending {
            key,
            text,
            hash,
            origin,
            chunks,
            replaces,
        })
    }

    /// Embeds the chunks of every pending document, in batches, then stores them all; nothing is
    /// stored when a batch fails.
    async fn embed_and_store(&self, pending: Vec<Pending>) -> Result<(), RetrievalError> {
        if pending.is_empty() {
            return Ok(());
        }
        let embedder = self.embedder.read().clone();
        let texts: Vec<String> = pending
            .iter()
            .flat_map(|doc| {
                doc.chunks.iter().map(|chunk| {
                    embedding_text(&chunk.section, &doc.text[chunk.span.start..chunk.span.end])
                })
            })
            .collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            vectors.extend(embed(&*embedder, batch).await?);
        }
        let dimensions = vectors.first().map_or(0, Vec::len);
        if vectors.iter().any(|vector| vector.len() != dimensions) {
            return Err(RetrievalError::Embedding {
                model: embedder.model().to_owned(),
                source: adk_core::Error::new(
                    adk_core::ErrorKind::Model,
                    "vectors of different lengths in different batches",
                ),
            });
        }
        let mut vectors = vectors.into_iter();
        let mut index = self.index.write();
        for doc in pending {
            let mut flat = Vec::with_capacity(doc.chunks.len() * dimensions);
            for mut vector in vectors.by_ref().take(doc.chunks.len()) {
                adk_core::ranking::normalize(&mut vector);
                flat.extend(vector);
            }
            index.documents.insert(
                doc.key,
                Document {
                    text: doc.text,
                    hash: doc.hash,
                    origin: doc.origin,
                    model: embedder.model().to_owned(),
                    dimensions,
                    chunks: doc.chunks,
                    vectors: flat,
                },
            );
        }
        Ok(())
    }

    /// Embeds again, with the current embedder, the documents of scopes `in_scope` accepts that
    /// another model embedded; their sources. The caller holds the writer lock.
    async fn reembed(
        &self,
        in_scope: &(dyn Fn(&Scope) -> bool + Sync),
    ) -> Result<Vec<String>, RetrievalError> {
        let model = self.model();
        let pending: Vec<Pending> = {
            let index = self.index.read();
            index
                .documents
                .iter()
                .filter(|((scope, _), doc)| in_scope(scope) && doc.model != model)
                .map(|(key, doc)| Pending {
                    key: key.clone(),
                    text: doc.text.clone(),
                    hash: doc.hash,
                    origin: doc.origin.clone(),
                    chunks: chunk(&doc.text, self.chunking)
                        .into_iter()
                        .map(|piece| Chunk::new(&doc.text, piece))
                        .collect(),
                    replaces: true,
                })
                .collect()
        };
        let sources = pending.iter().map(|doc| doc.key.1.clone()).collect();
        self.embed_and_store(pending).await?;
        Ok(sources)
    }

    /// The UTF-8 text of the file at `path`, within the size limit.
    async fn read_text(&self, path: &Path, source: &str) -> Result<String, RetrievalError> {
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|error| read_error(path, error))?;
        if bytes.len() as u64 > self.max_document_bytes {
            return Err(RetrievalError::TooLarge {
                document: source.to_owned(),
                bytes: bytes.len() as u64,
                limit: self.max_document_bytes,
            });
        }
        String::from_utf8(bytes).map_err(|_| RetrievalError::NotText {
            document: source.to_owned(),
        })
    }
}

/// The embedder's vectors for `texts`, checked.
async fn embed(embedder: &dyn Embedder, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError> {
    let failed = |source| RetrievalError::Embedding {
        model: embedder.model().to_owned(),
        source,
    };
    let vectors = embedder.embed(texts).await.map_err(failed)?;
    adk_core::check_embeddings(
        embedder.model(),
        embedder.dimensions(),
        texts.len(),
        &vectors,
    )
    .map_err(failed)?;
    Ok(vectors)
}
