//! [`A2aError`]: what talking A2A to a remote agent, or setting up a server, can fail with.

use crate::types::JsonRpcError;

/// An error of the A2A client or server, one variant per thing that can go wrong, each naming
/// what it is about.
///
/// At the [`Agent`](adk_core::Agent) boundary it becomes an [`adk_core::Error`] that keeps it as
/// its source, so callers can downcast to it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The agent card names no URL to send requests to.
    #[error(
        "the agent card of '{name}' (from {from}) has no `url`; the remote agent cannot be called without one"
    )]
    CardWithoutUrl {
        /// The agent's name as the card gives it.
        name: String,
        /// Where the card came from.
        from: String,
    },
    /// The agent card states a protocol version this crate does not speak.
    #[error(
        "the agent card of '{name}' states A2A protocol version {version:?}; this client speaks 0.3"
    )]
    UnsupportedProtocolVersion {
        /// The agent's name as the card gives it.
        name: String,
        /// The version the card states.
        version: String,
    },
    /// No connection could be made (refused, unreachable, DNS); retried before this is returned.
    #[error("cannot connect to {url} after {attempts} attempt(s): {source}")]
    Connect {
        /// Where.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// The transport's error.
        #[source]
        source: reqwest::Error,
    },
    /// The request or the stream took longer than the configured timeout.
    #[error("the request to {url} timed out")]
    Timeout {
        /// Where.
        url: String,
    },
    /// The transport failed after the request was sent (the connection broke, say).
    #[error("the connection to {url} failed: {source}")]
    Transport {
        /// Where.
        url: String,
        /// The transport's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with an HTTP error status.
    #[error("{url} answered HTTP {status}: {body}")]
    Http {
        /// Where.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// A response (or one streamed event) was larger than the configured limit.
    #[error(
        "the response of {url} exceeds the limit of {limit} bytes; raise ClientConfig::max_response_bytes if it is expected"
    )]
    ResponseTooLarge {
        /// Where.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// The response could not be read as what the protocol says it is.
    #[error("the response of {url} is not valid A2A: {message}")]
    InvalidResponse {
        /// Where.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The remote agent answered with a JSON-RPC error.
    #[error("the remote agent answered JSON-RPC error {}: {}", .error.code, .error.message)]
    Remote {
        /// The error.
        error: JsonRpcError,
    },
    /// The remote agent's stream ended before its task finished or paused: it died mid-stream.
    #[error(
        "the stream of {url} ended before task {task} finished: the remote agent stopped mid-stream"
    )]
    StreamEnded {
        /// Where.
        url: String,
        /// The task, or `unknown` if none was announced.
        task: String,
    },
    /// The server could not listen or serve.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The setup is wrong (a bad header, a missing URL).
    #[error("{0}")]
    Config(String),
}

impl A2aError {
    /// The kind of [`adk_core::Error`] this becomes.
    fn core_kind(&self) -> adk_core::ErrorKind {
        use adk_core::ErrorKind;
        match self {
            Self::CardWithoutUrl { .. }
            | Self::UnsupportedProtocolVersion { .. }
            | Self::Config(_) => ErrorKind::Config,
            _ => ErrorKind::Agent,
        }
    }
}

impl From<A2aError> for adk_core::Error {
    fn from(error: A2aError) -> Self {
        adk_core::Error::from_source(error.core_kind(), error)
    }
}
