//! The crate's one error type, [`Error`], and how it becomes an [`adk_core::Error`].

use adk_core::{BoxError, SessionKey};

/// What went wrong in a session, artifact or memory service, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The session changed in storage since this copy was loaded; reload it and try again.
    StaleSession,
    /// A session with this id exists already.
    AlreadyExists,
    /// The session to write to does not exist.
    NotFound,
    /// An app name, user id, session id or artifact file name was rejected (path traversal,
    /// separators, empty, ...).
    InvalidName,
    /// The storage failed or could not be reached (database, filesystem, object store).
    Storage,
    /// Stored data could not be read back (corrupt JSON, an unknown layout).
    Corrupt,
    /// A value the storage cannot hold (the character U+0000 in PostgreSQL's `jsonb`).
    Unstorable,
    /// The key that encrypts credentials is missing or malformed.
    InvalidKey,
    /// The embedder of a memory service failed or answered something unusable; the source is its
    /// error. Nothing was stored.
    Embedding,
}

/// An error of `adk-session`: a [`kind`](Error::kind), a message that says what was wrong and what
/// to do, and the lower-layer error, if any.
///
/// At the trait boundary it becomes an [`adk_core::Error`] whose source is this error, so callers
/// can downcast to it with [`adk_core::Error::downcast_source`].
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<BoxError>,
}

impl Error {
    /// An error of `kind` with a message.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// This error, caused by `source`.
    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// A storage failure while doing `what`, caused by `source`.
    pub(crate) fn storage(what: impl std::fmt::Display, source: impl Into<BoxError>) -> Self {
        let source = source.into();
        Self {
            kind: ErrorKind::Storage,
            message: format!("{what} failed: {source}"),
            source: Some(source),
        }
    }

    /// Stored data that could not be read back while doing `what`.
    pub(crate) fn corrupt(what: impl std::fmt::Display, source: impl Into<BoxError>) -> Self {
        let source = source.into();
        Self {
            kind: ErrorKind::Corrupt,
            message: format!("{what}: stored data could not be read: {source}"),
            source: Some(source),
        }
    }

    /// Appending to a session that does not exist.
    pub(crate) fn not_found(key: &SessionKey) -> Self {
        Self::new(
            ErrorKind::NotFound,
            format!(
                "session {} of user {} in app {} does not exist",
                key.session_id, key.user_id, key.app_name
            ),
        )
    }

    /// Appending to a copy of a session loaded at revision `seen` when storage is at `stored`.
    pub(crate) fn stale(key: &SessionKey, seen: u64, stored: u64) -> Self {
        Self::new(
            ErrorKind::StaleSession,
            format!(
                "session {} changed in storage (revision {stored}) since this copy was loaded \
                 (revision {seen}); reload the session and try again",
                key.session_id
            ),
        )
    }

    /// Creating a session whose id is taken.
    pub(crate) fn already_exists(key: &SessionKey) -> Self {
        Self::new(
            ErrorKind::AlreadyExists,
            format!(
                "session {} of user {} in app {} exists already; pick another id or load it",
                key.session_id, key.user_id, key.app_name
            ),
        )
    }

    /// A value the storage cannot hold, met while doing `what`.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn unstorable(what: impl std::fmt::Display, why: &str) -> Self {
        Self::new(
            ErrorKind::Unstorable,
            format!("{what}: {why}; nothing was written"),
        )
    }

    /// Appending an event whose id the session holds already.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn duplicate_event(key: &SessionKey, event_id: &str) -> Self {
        Self::new(
            ErrorKind::AlreadyExists,
            format!(
                "session {} of user {} in app {} holds an event with id {event_id} already; \
                 give each event its own id",
                key.session_id, key.user_id, key.app_name
            ),
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether an append refused with this error wrote nothing: a stale revision, a missing
    /// session, an event stored already, or a state that cannot be read back.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[cfg_attr(
        not(feature = "sqlite"),
        allow(dead_code, reason = "only SQLite groups appends")
    )]
    pub(crate) fn refused_before_writing(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::StaleSession
                | ErrorKind::NotFound
                | ErrorKind::AlreadyExists
                | ErrorKind::Corrupt
        )
    }

    /// Converts into the core error of a session service, keeping `self` as the source.
    pub(crate) fn into_session(self) -> adk_core::Error {
        self.into_core(adk_core::ErrorKind::Session)
    }

    /// Converts into the core error of an artifact service, keeping `self` as the source.
    pub(crate) fn into_artifact(self) -> adk_core::Error {
        self.into_core(adk_core::ErrorKind::Artifact)
    }

    /// Converts into the core error of a memory service, keeping `self` as the source.
    pub(crate) fn into_memory(self) -> adk_core::Error {
        self.into_core(adk_core::ErrorKind::Memory)
    }

    /// Converts into the core error of a credential service, keeping `self` as the source.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn into_credential(self) -> adk_core::Error {
        self.into_core(adk_core::ErrorKind::Credential)
    }

    /// The core kind for this error; `service` is the kind of plain failures of the service.
    fn into_core(self, service: adk_core::ErrorKind) -> adk_core::Error {
        let kind = match self.kind {
            ErrorKind::StaleSession => adk_core::ErrorKind::StaleSession,
            ErrorKind::AlreadyExists => adk_core::ErrorKind::AlreadyExists,
            ErrorKind::NotFound => adk_core::ErrorKind::NotFound,
            // adk-core documents rejected artifact names as `Artifact` errors; other services
            // have no names to reject but an id, which is the caller's input.
            ErrorKind::InvalidName if service == adk_core::ErrorKind::Artifact => service,
            ErrorKind::InvalidName | ErrorKind::Unstorable => adk_core::ErrorKind::InvalidInput,
            ErrorKind::InvalidKey => adk_core::ErrorKind::Config,
            // The model behind the embedder failed, as a model call fails.
            ErrorKind::Embedding => adk_core::ErrorKind::Model,
            ErrorKind::Storage | ErrorKind::Corrupt => service,
        };
        adk_core::Error::from_source(kind, self)
    }
}

/// The result type of this crate's internals.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_error_keeps_kind_and_source() {
        let error = Error::new(ErrorKind::StaleSession, "session s1 changed").into_session();
        assert_eq!(error.kind(), adk_core::ErrorKind::StaleSession);
        assert_eq!(
            error.downcast_source::<Error>().map(Error::kind),
            Some(ErrorKind::StaleSession)
        );
        let rejected = Error::new(ErrorKind::InvalidName, "bad name").into_artifact();
        assert_eq!(rejected.kind(), adk_core::ErrorKind::Artifact);
        let storage = Error::storage("loading", std::io::Error::other("gone")).into_session();
        assert_eq!(storage.kind(), adk_core::ErrorKind::Session);
        assert_eq!(storage.message(), "loading failed: gone");
    }
}
