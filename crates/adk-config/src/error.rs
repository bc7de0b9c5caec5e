//! [`ConfigError`], the one error type of this crate: what was wrong, in which file, and where in it.

use std::fmt;
use std::path::{Path, PathBuf};

/// A boxed error from a lower layer, kept as the source of a [`ConfigError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// A file or directory could not be read: it does not exist, or it is not readable.
    Read,
    /// The file is not well-formed YAML.
    Syntax,
    /// The YAML does not describe an agent adk-rs can build: an unknown key, a value of the wrong
    /// type, an unknown agent class, tool or model name, a missing or cyclic sub-agent file, or a
    /// key of ADK Python that adk-rs cannot honour.
    Invalid,
    /// A model the config names could not be made ready (a missing API key, say).
    Model,
}

impl ConfigErrorKind {
    /// A short lowercase name of the kind, as used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Syntax => "syntax",
            Self::Invalid => "invalid",
            Self::Model => "model",
        }
    }
}

impl fmt::Display for ConfigErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in a file: a line and a column, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

/// An agent config that could not be loaded: the [`kind`](ConfigError::kind) of problem, the
/// file it is in, the line and column when the problem is at one place in the file, and a
/// message that says what was wrong and what is allowed instead.
///
/// It displays as `file:line:column: message`, the form editors and terminals link to.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", file.display(), AtLocation(*location))]
pub struct ConfigError {
    kind: ConfigErrorKind,
    file: PathBuf,
    location: Option<Location>,
    message: String,
    #[source]
    source: Option<BoxError>,
}

/// `:line:column`, or nothing when the error is about a whole file.
struct AtLocation(Option<Location>);

impl fmt::Display for AtLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(Location { line, column }) => write!(f, ":{line}:{column}"),
            None => Ok(()),
        }
    }
}

impl ConfigError {
    /// An error of `kind` about `file` as a whole.
    pub(crate) fn new(kind: ConfigErrorKind, file: &Path, message: impl Into<String>) -> Self {
        Self {
            kind,
            file: file.to_path_buf(),
            location: None,
            message: message.into(),
            source: None,
        }
    }

    /// Places the error at `location` in its file.
    pub(crate) fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }

    /// Keeps `source` as the cause.
    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    /// The file the problem is in, as the loader was given it (a sub-agent's file is the
    /// directory of the file naming it joined with its `config_path`).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The line and column of the problem, when it is at one place in the file.
    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// What was wrong, without the file and location.
    pub fn message(&self) -> &str {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_file_line_column_message() {
        let error = ConfigError::new(
            ConfigErrorKind::Invalid,
            Path::new("agents/root_agent.yaml"),
            "unknown key `modle`",
        )
        .at(Some(Location { line: 3, column: 1 }));
        assert_eq!(
            error.to_string(),
            "agents/root_agent.yaml:3:1: unknown key `modle`"
        );
        let whole_file = ConfigError::new(
            ConfigErrorKind::Read,
            Path::new("agents/root_agent.yaml"),
            "no such file",
        );
        assert_eq!(
            whole_file.to_string(),
            "agents/root_agent.yaml: no such file"
        );
    }
}
