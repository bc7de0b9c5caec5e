//! [`GateError`]: what setting up a gate or serving can fail with.

/// An error setting up a gate (a bad pattern, an unreadable key file) or serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// A setting is wrong; the message says which and how.
    #[error("{0}")]
    Config(String),
    /// A file could not be read, or the server could not listen.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
