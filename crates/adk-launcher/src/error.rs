//! [`LaunchError`]: why a launcher command could not do its work, with the error that caused it.

use std::fmt;

/// A boxed error that caused a [`LaunchError`].
type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What kind of failure a [`LaunchError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaunchErrorKind {
    /// The command line asked for something that does not exist or does not fit: an unknown agent,
    /// an unsupported service URL, a flag's bad value.
    Usage,
    /// No model could be set up.
    Model,
    /// A session, artifact or memory store could not be opened.
    Storage,
    /// An agent could not be built or loaded.
    Agent,
    /// The server could not start or stopped with an error.
    Server,
    /// A run of an agent failed.
    Run,
    /// Reading the terminal or writing files failed.
    Io,
}

/// Why a [`Launcher`](crate::Launcher) command failed: a kind, a message saying what could not be
/// done, and the error underneath.
///
/// ```
/// use adk_launcher::{LaunchError, LaunchErrorKind};
///
/// let error = LaunchError::new(LaunchErrorKind::Usage, "no agent named 'x'");
/// assert_eq!(error.kind(), LaunchErrorKind::Usage);
/// assert_eq!(error.to_string(), "no agent named 'x'");
/// ```
#[derive(Debug)]
pub struct LaunchError {
    kind: LaunchErrorKind,
    message: String,
    source: Option<Source>,
}

impl LaunchError {
    /// An error of `kind` saying `message`, with no cause underneath.
    pub fn new(kind: LaunchErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An error of `kind` saying `message`, caused by `source`.
    pub fn with_source(
        kind: LaunchErrorKind,
        message: impl Into<String>,
        source: impl Into<Source>,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> LaunchErrorKind {
        self.kind
    }

    /// The message and every cause on one line, leaving out a cause whose text an earlier link
    /// already holds (lower layers often repeat their source's message in their own).
    pub fn one_line(&self) -> String {
        let mut line = self.message.clone();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            let text = error.to_string();
            if !line.contains(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            cause = error.source();
        }
        line
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// Attaches what could not be done to an error, as a [`LaunchError`] of a kind.
pub(crate) trait Context<T> {
    /// The error, if any, as a [`LaunchError`] of `kind` saying `message()`.
    fn context(
        self,
        kind: LaunchErrorKind,
        message: impl FnOnce() -> String,
    ) -> Result<T, LaunchError>;
}

impl<T, E> Context<T> for Result<T, E>
where
    E: Into<Source>,
{
    fn context(
        self,
        kind: LaunchErrorKind,
        message: impl FnOnce() -> String,
    ) -> Result<T, LaunchError> {
        self.map_err(|source| LaunchError::with_source(kind, message(), source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_causes_it_does_not_already_say() {
        let io = std::io::Error::other("disk full");
        let error = LaunchError::with_source(LaunchErrorKind::Io, "cannot write notes.txt", io);
        assert_eq!(error.one_line(), "cannot write notes.txt: disk full");

        let repeated = LaunchError::with_source(
            LaunchErrorKind::Io,
            "cannot write notes.txt: disk full",
            std::io::Error::other("disk full"),
        );
        assert_eq!(repeated.one_line(), "cannot write notes.txt: disk full");
    }
}
