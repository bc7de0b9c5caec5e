//! `CodeExecutorError`: why a local code executor could not be made or could not run code.

use std::path::PathBuf;

use adk_core::{Error, ErrorKind};

/// What went wrong, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodeExecutorErrorKind {
    /// No working sandbox on this machine (bubblewrap missing, or the kernel refuses its
    /// namespaces). The sandboxed executor never falls back to running code unsandboxed.
    SandboxUnavailable,
    /// A program the executor needs (the interpreter, `prlimit`) is missing.
    ProgramMissing,
    /// A limit was set to a value the executor cannot apply.
    InvalidLimit,
    /// The run's process could not be started.
    Spawn,
    /// The scratch directory could not be made or read.
    Scratch,
}

/// Why a local code executor could not be made or could not run code.
///
/// ```
/// use adk_flow::{CodeExecutorErrorKind, SandboxedCodeExecutor};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let error = SandboxedCodeExecutor::builder()
///     .bwrap("/nonexistent/bwrap")
///     .build()
///     .await
///     .unwrap_err();
/// assert_eq!(error.kind(), CodeExecutorErrorKind::SandboxUnavailable);
/// # });
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeExecutorError {
    /// No working sandbox.
    #[error(
        "no sandbox to run code in: {reason}. Install bubblewrap (Debian: `apt-get install \
         bubblewrap`) on a kernel that allows unprivileged user namespaces; code is never run \
         unsandboxed unless you choose `UnsafeLocalCodeExecutor` by name"
    )]
    SandboxUnavailable {
        /// What the detection found.
        reason: String,
    },
    /// A program the executor needs is missing.
    #[error("the code executor needs `{program}`, which was not found{hint}")]
    ProgramMissing {
        /// The program's name or path.
        program: String,
        /// More about where it was looked for.
        hint: String,
    },
    /// A limit cannot be applied.
    #[error("invalid code executor limit: {0}")]
    InvalidLimit(String),
    /// The run's process could not be started.
    #[error("cannot start `{program}` to run the code: {source}")]
    Spawn {
        /// The program started.
        program: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The scratch directory could not be made or read.
    #[error("the code's scratch directory failed: {0}")]
    Scratch(#[source] std::io::Error),
}

impl CodeExecutorError {
    /// What went wrong, as a kind.
    pub fn kind(&self) -> CodeExecutorErrorKind {
        match self {
            Self::SandboxUnavailable { .. } => CodeExecutorErrorKind::SandboxUnavailable,
            Self::ProgramMissing { .. } => CodeExecutorErrorKind::ProgramMissing,
            Self::InvalidLimit(_) => CodeExecutorErrorKind::InvalidLimit,
            Self::Spawn { .. } => CodeExecutorErrorKind::Spawn,
            Self::Scratch(_) => CodeExecutorErrorKind::Scratch,
        }
    }
}

impl From<CodeExecutorError> for Error {
    fn from(error: CodeExecutorError) -> Self {
        let kind = match error.kind() {
            CodeExecutorErrorKind::SandboxUnavailable
            | CodeExecutorErrorKind::ProgramMissing
            | CodeExecutorErrorKind::InvalidLimit => ErrorKind::Config,
            _ => ErrorKind::Tool,
        };
        Error::new(kind, error.to_string()).with_source(error)
    }
}
