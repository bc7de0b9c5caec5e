//! Artifacts in a corpus: one indexed for every search, or a session's own indexed for that
//! session (and its user's `user:` artifacts for that user) by the retrieval tool.

use std::collections::BTreeSet;

use adk_core::{ArtifactService, Part, PartData, SessionKey};

use super::{Corpus, Indexed, Origin, Scope};
use crate::retrieval::{Glob, RetrievalError};

impl Corpus {
    /// Indexes the latest version of the artifact `name` of `session`, from `artifacts`, under its
    /// name. Every search sees it, as it sees files; the [`RetrievalTool`](crate::retrieval::RetrievalTool)
    /// indexes a session's own artifacts for that session alone.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::NoSuchArtifact`], [`RetrievalError::Artifact`] when the service fails,
    /// [`RetrievalError::NotText`] for an artifact that is not text,
    /// [`RetrievalError::Embedding`] when the embedder fails; the index is unchanged.
    pub async fn add_artifact(
        &self,
        artifacts: &dyn ArtifactService,
        session: &SessionKey,
        name: &str,
    ) -> Result<Indexed, RetrievalError> {
        let _writer = self.watched.lock().await;
        let part = artifacts
            .load_artifact(session, name, None)
            .await
            .map_err(|source| RetrievalError::Artifact {
                name: name.to_owned(),
                source,
            })?
            .ok_or_else(|| RetrievalError::NoSuchArtifact {
                name: name.to_owned(),
            })?;
        let text = self.artifact_text(name, part)?;
        self.index_one((Scope::Shared, name.to_owned()), text, Origin::Given)
            .await
    }

    /// Indexes the artifacts of `session` whose names `glob` matches, each for the searches of
    /// the session (or of its user, for `user:` artifacts), and drops those of these scopes that
    /// are gone. Artifacts that are not text are left out.
    pub(crate) async fn sync_artifacts(
        &self,
        ctx: &crate::ToolContext,
        glob: &Glob,
    ) -> Result<(), RetrievalError> {
        let _writer = self.watched.lock().await;
        let listed = ctx
            .list_artifacts()
            .await
            .map_err(|source| RetrievalError::Artifact {
                name: "(list)".to_owned(),
                source,
            })?;
        let session = ctx.session_key();
        let mut present = BTreeSet::new();
        let mut pending = Vec::new();
        for name in listed.into_iter().filter(|name| glob.matches(name)) {
            let key = (Scope::for_artifact(session, &name), name);
            let part = ctx.load_artifact(&key.1, None).await.map_err(|source| {
                RetrievalError::Artifact {
                    name: key.1.clone(),
                    source,
                }
            })?;
            let Some(Ok(text)) = part.map(|part| self.artifact_text(&key.1, part)) else {
                continue;
            };
            present.insert(key.clone());
            pending.extend(self.pending(key, text, Origin::Given));
        }
        self.embed_and_store(pending).await?;
        let scopes = Scope::visible_from(session);
        self.index.write().documents.retain(|key, _| {
            key.0 == Scope::Shared || !scopes.contains(&key.0) || present.contains(key)
        });
        Ok(())
    }

    /// The text of an artifact: a text part, or inline data of a text type in UTF-8.
    fn artifact_text(&self, name: &str, part: Part) -> Result<String, RetrievalError> {
        let not_text = || RetrievalError::NotText {
            document: name.to_owned(),
        };
        let text = match part.data {
            PartData::Text(text) => text,
            PartData::InlineData(blob) if is_text_type(&blob.mime_type) => {
                String::from_utf8(blob.data.to_vec()).map_err(|_| not_text())?
            }
            _ => return Err(not_text()),
        };
        if text.len() as u64 > self.max_document_bytes {
            return Err(RetrievalError::TooLarge {
                document: name.to_owned(),
                bytes: text.len() as u64,
                limit: self.max_document_bytes,
            });
        }
        Ok(text)
    }
}

/// Whether a MIME type names text: `text/*` and the structured text types.
fn is_text_type(mime_type: &str) -> bool {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || [
            "application/json",
            "application/xml",
            "application/yaml",
            "application/x-yaml",
        ]
        .contains(&essence.as_str())
}
