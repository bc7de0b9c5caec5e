//! The one error type of adk-model: what went wrong, with the HTTP status and body of a provider
//! error kept, and its conversion into [`adk_core::Error`] at the [`adk_core::Llm`] boundary.

use std::time::Duration;

/// A boxed lower-layer error kept as the source.
type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What kind of failure an [`Error`] is, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The provider answered with a non-success HTTP status; [`Error::body`] holds its answer.
    Http {
        /// The HTTP status code.
        status: u16,
    },
    /// The provider reported an error inside a successful response (an error event in a stream).
    Provider,
    /// A response could not be read as the provider's format.
    Decode,
    /// The call took longer than the configured timeout.
    Timeout,
    /// The server could not be reached.
    Connect,
    /// The connection closed or was reset after the request was sent and before a response
    /// arrived: typically a pooled keep-alive connection that the server closed, idle, just as the
    /// client reused it. The server answered nothing, so the call is retried.
    ConnectionClosed,
    /// The response stream ended or broke before the model finished.
    StreamCut,
    /// The adapter is set up wrong, or the request asks for something the provider cannot do.
    Config,
    /// No API key was given to the builder or found in the environment; the message names the
    /// environment variables it was looked for in.
    MissingApiKey,
    /// Credentials could not be found or used: no key file, a token endpoint that refused them,
    /// or a model API that refused a freshly fetched token (Vertex AI).
    Auth,
    /// A response body, or one event of a stream, passed the size limit the builder sets
    /// (`max_response_bytes`, `max_event_bytes`); reading stopped there.
    ResponseTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Another transport failure.
    Transport,
}

/// A failed model call: a [`kind`](Error::kind), a message that says what went wrong and what to
/// do, and for provider errors the HTTP status and body as received.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    body: Option<String>,
    provider_status: Option<String>,
    retry_after: Option<Duration>,
    source: Option<BoxError>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The cause a message already states is skipped, so a chain prints each cause once.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        adk_core::cause_after(&self.message, self.source.as_deref()?)
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            body: None,
            provider_status: None,
            retry_after: None,
            source: None,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }

    /// No key for `provider` in the builder nor in `variables`; the message names them and how
    /// to give one.
    #[cfg(any(feature = "gemini", feature = "openai"))]
    pub(crate) fn missing_api_key(provider: &str, variables: &[&str]) -> Self {
        let message = if variables.is_empty() {
            format!("no {provider} API key: give one with the builder's `.api_key(...)`")
        } else {
            format!(
                "no {provider} API key: set {} in the environment, or give one with the \
                 builder's `.api_key(...)`",
                variables.join(" or ")
            )
        };
        Self::new(ErrorKind::MissingApiKey, message)
    }

    pub(crate) fn decode(what: &str, error: serde_json::Error, text: &str) -> Self {
        let mut shown: String = text.chars().take(300).collect();
        if shown.len() < text.len() {
            shown.push_str("...");
        }
        Self::new(
            ErrorKind::Decode,
            format!(
                "could not read {what} ({error}); the server may not speak this API, check the base URL: {shown}"
            ),
        )
        .with_source(error)
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    pub(crate) fn with_message(mut self, message: String) -> Self {
        self.message = message;
        self
    }

    pub(crate) fn with_body(mut self, body: String) -> Self {
        self.body = Some(body);
        self
    }

    pub(crate) fn with_provider_status(mut self, status: Option<String>) -> Self {
        self.provider_status = status;
        self
    }

    pub(crate) fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The HTTP status, for [`ErrorKind::Http`].
    pub fn status(&self) -> Option<u16> {
        match self.kind {
            ErrorKind::Http { status } => Some(status),
            _ => None,
        }
    }

    /// The response body as received, for provider errors.
    pub fn body(&self) -> Option<&str> {
        self.body.as_deref()
    }

    /// The provider's own error status or code (`NOT_FOUND`, `model_not_found`), when it sent one.
    pub fn provider_status(&self) -> Option<&str> {
        self.provider_status.as_deref()
    }

    /// How long the server asked to wait before retrying (`Retry-After`), when it did.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// Whether the call may succeed when sent again: connect errors, a connection closed before
    /// any response arrived, 408, 429 and 5xx.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            ErrorKind::Connect | ErrorKind::ConnectionClosed => true,
            ErrorKind::Http { status } => status == 408 || status == 429 || status >= 500,
            _ => false,
        }
    }

    /// Whether the provider rejected the call because the request does not fit the model's
    /// context window, read from its answer:
    ///
    /// - OpenAI (and servers that copy its errors): the code `context_length_exceeded`;
    /// - Gemini: HTTP 400 saying the input token count exceeds the maximum number of tokens;
    /// - llama.cpp's server: the type `exceed_context_size_error` ("request (N tokens) exceeds the
    ///   available context size"), or an older server's message about the context size.
    ///
    /// At the [`adk_core::Llm`] boundary such an error becomes an [`adk_core::Error`] of kind
    /// [`ContextOverflow`](adk_core::ErrorKind::ContextOverflow), so that an agent can retry with
    /// less history.
    pub fn is_context_overflow(&self) -> bool {
        if !matches!(
            self.kind,
            ErrorKind::Http {
                status: 400 | 413 | 422
            } | ErrorKind::Provider
        ) {
            return false;
        }
        if self.provider_status.as_deref().is_some_and(|status| {
            status == "context_length_exceeded" || status == "exceed_context_size_error"
        }) {
            return true;
        }
        let text = self.body.as_deref().unwrap_or(&self.message);
        CONTEXT_OVERFLOW_MARKERS
            .iter()
            .any(|marker| text.contains(marker))
    }

    /// Classifies a reqwest failure; `during` says what was happening (`sending`, `reading`).
    pub(crate) fn from_reqwest(error: reqwest::Error, url: &str, during: &str) -> Self {
        let (kind, advice) = if error.is_timeout() {
            (
                ErrorKind::Timeout,
                "raise the timeout with the builder's `timeout`, or check the server".to_owned(),
            )
        } else if error.is_connect() {
            (
                ErrorKind::Connect,
                "check the base URL and that the server is running and reachable".to_owned(),
            )
        } else if during == "reading" {
            (
                ErrorKind::StreamCut,
                "the connection broke mid-response; retry the call".to_owned(),
            )
        } else if let Some(cause) = lost_before_response(&error) {
            (
                ErrorKind::ConnectionClosed,
                format!(
                    "{cause}: the server closed the connection before answering; check that it \
                     is running and read its log"
                ),
            )
        } else {
            (
                ErrorKind::Transport,
                "check the base URL and the network".to_owned(),
            )
        };
        // reqwest's own message repeats the URL, which may carry credentials; it is named once,
        // without them.
        let error = error.without_url();
        let url = shown_url(url);
        Self::new(kind, format!("{during} {url} failed: {error}; {advice}")).with_source(error)
    }
}

/// The cause, when a send failed because its connection went away before a response head
/// arrived, read from the typed errors of reqwest's source chain: hyper's incomplete message (the
/// server closed the connection after the request was written, as it does with an idle keep-alive
/// connection the client reuses at that moment), a request hyper dropped or could not hand to a
/// closed connection, or the connection reset, aborted or ended while the request was written or
/// the answer awaited.
///
/// hyper reports a response head cut half-way as the same incomplete message; a head that did not
/// arrive whole is no response, so that case counts too.
fn lost_before_response(error: &reqwest::Error) -> Option<&(dyn std::error::Error + 'static)> {
    use std::error::Error as _;
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_canceled() || hyper.is_closed())
        {
            return Some(cause);
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            )
        {
            return Some(cause);
        }
        source = cause.source();
    }
    None
}

/// What providers say when a request exceeds the context window, in the bodies of errors whose
/// code does not say it: llama.cpp's error type (also read as the provider status, since its
/// `code` only repeats the HTTP status), the messages of llama.cpp servers before that type
/// existed, and Gemini's message for an input over the model's token limit.
const CONTEXT_OVERFLOW_MARKERS: [&str; 5] = [
    "context_length_exceeded",
    "exceed_context_size_error",
    "exceeds the available context size",
    "the request exceeds the available context",
    "exceeds the maximum number of tokens allowed",
];
/// `url` as messages show it: without user information and query, which may carry credentials.
pub(crate) fn shown_url(url: &str) -> String {
    adk_core::url_without_credentials(url)
}

impl From<Error> for adk_core::Error {
    fn from(error: Error) -> Self {
        let kind = if error.is_context_overflow() {
            adk_core::ErrorKind::ContextOverflow
        } else {
            adk_core::ErrorKind::Model
        };
        let kind = if error.kind == ErrorKind::MissingApiKey {
            adk_core::ErrorKind::Config
        } else {
            kind
        };
        adk_core::Error::from_source(kind, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_into_a_core_model_error_that_downcasts_back() {
        let error = Error::new(
            ErrorKind::Http { status: 429 },
            "rate limited; wait and retry",
        )
        .with_body("{\"error\":{}}".to_owned());
        let core: adk_core::Error = error.into();
        assert_eq!(core.kind(), adk_core::ErrorKind::Model);
        assert_eq!(core.message(), "rate limited; wait and retry");
        let back = core.downcast_source::<Error>().unwrap();
        assert_eq!(back.status(), Some(429));
        assert_eq!(back.body(), Some("{\"error\":{}}"));
        assert!(back.is_retryable());
    }

    #[test]
    fn only_connect_closed_connection_408_429_and_5xx_are_retryable() {
        for (kind, retryable) in [
            (ErrorKind::Connect, true),
            (ErrorKind::ConnectionClosed, true),
            (ErrorKind::Transport, false),
            (ErrorKind::Http { status: 408 }, true),
            (ErrorKind::Http { status: 503 }, true),
            (ErrorKind::Http { status: 400 }, false),
            (ErrorKind::Timeout, false),
            (ErrorKind::StreamCut, false),
        ] {
            assert_eq!(Error::new(kind, "x").is_retryable(), retryable, "{kind:?}");
        }
    }
}
