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
    /// The server answered with an HTTP error status (or a redirect, which is not followed). The
    /// body is not kept: it is the peer's text, which has no place in messages and logs.
    #[error("{url} answered HTTP {status}")]
    Http {
        /// Where.
        url: String,
        /// The status.
        status: u16,
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
    /// The remote agent answered with a JSON-RPC error. Its message is the peer's text: it is
    /// kept in `error` for code that wants it, and left out of this error's own message.
    #[error("the remote agent answered JSON-RPC error {} ({})", .error.code, meaning(.error.code))]
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

/// What a JSON-RPC or A2A error code means.
fn meaning(code: i64) -> &'static str {
    use crate::types::error_codes;
    match code {
        error_codes::PARSE_ERROR => "the request was not JSON",
        error_codes::INVALID_REQUEST => "not a valid request",
        error_codes::METHOD_NOT_FOUND => "no such method",
        error_codes::INVALID_PARAMS => "invalid parameters",
        error_codes::INTERNAL_ERROR => "an internal error of the remote agent",
        error_codes::TASK_NOT_FOUND => "no such task",
        error_codes::TASK_NOT_CANCELABLE => "the task cannot be cancelled",
        error_codes::PUSH_NOTIFICATION_NOT_SUPPORTED => "push notifications are not supported",
        error_codes::UNSUPPORTED_OPERATION => "the operation is not supported",
        _ => "an error of the remote agent's own",
    }
}

/// A JSON error described by its kind and place, quoting nothing of the text it is about.
pub(crate) fn json_problem(error: &serde_json::Error) -> String {
    let kind = match error.classify() {
        serde_json::error::Category::Io => "it could not be read",
        serde_json::error::Category::Syntax => "it is not valid JSON",
        serde_json::error::Category::Data => "it does not have the expected shape",
        serde_json::error::Category::Eof => "it ends too early",
    };
    format!("{kind} (line {}, column {})", error.line(), error.column())
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
