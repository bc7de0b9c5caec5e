//! The error type every adk-core contract returns.

use std::fmt;

/// A boxed error from a lower layer, kept as the source of an [`Error`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The result type of adk-core and of every trait it defines.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A model call failed: transport, provider error, or a response that could not be read.
    Model,
    /// A tool failed in a way the flow could not turn into a function response.
    Tool,
    /// A session service failed (storage, connection, corrupt data).
    Session,
    /// The session changed in storage since this copy was loaded; reload it and try again.
    StaleSession,
    /// The thing to create exists already (a session id, an agent name).
    AlreadyExists,
    /// The thing asked for does not exist.
    NotFound,
    /// An artifact service failed, or an artifact name was rejected.
    Artifact,
    /// A memory service failed.
    Memory,
    /// A credential service failed, or a credential could not be decrypted or obtained (an
    /// OAuth2 token endpoint that refused, say).
    Credential,
    /// An agent failed while running.
    Agent,
    /// Input from a user, a client or a model was malformed.
    InvalidInput,
    /// The setup is wrong: a missing service, model or option.
    Config,
    /// The invocation called the model more often than `RunConfig::max_llm_calls` allows.
    LlmCallsLimitExceeded,
    /// The request did not fit the model's context window: the provider rejected it as too many
    /// tokens. Sending it again unchanged fails again; send less history.
    ContextOverflow,
    /// The work was cancelled.
    Cancelled,
    /// A value could not be serialized or deserialized.
    Serialization,
}

impl ErrorKind {
    /// A short lowercase name of the kind, as used in messages and telemetry (`error.type`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Tool => "tool",
            Self::Session => "session",
            Self::StaleSession => "stale_session",
            Self::AlreadyExists => "already_exists",
            Self::NotFound => "not_found",
            Self::Artifact => "artifact",
            Self::Memory => "memory",
            Self::Credential => "credential",
            Self::Agent => "agent",
            Self::InvalidInput => "invalid_input",
            Self::Config => "config",
            Self::LlmCallsLimitExceeded => "llm_calls_limit_exceeded",
            Self::ContextOverflow => "context_overflow",
            Self::Cancelled => "cancelled",
            Self::Serialization => "serialization",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of adk-core's contracts: a [`kind`](Error::kind) to branch on, a message that says what
/// was wrong, and the lower-layer error that caused it, if any.
///
/// Crates above adk-core keep their own error types and convert into this one at the trait
/// boundary, keeping their error as the cause so callers can downcast to it
/// ([`downcast_source`](Error::downcast_source)).
///
/// A chain of errors prints each cause once: when the message already states its cause (as
/// [`from_source`](Error::from_source) does), [`source`](std::error::Error::source) goes on with
/// what caused that cause, so `{:#}` (anyhow) and `Caused by:` lists do not repeat it.
///
/// ```
/// use adk_core::{Error, ErrorKind};
///
/// let err = Error::new(ErrorKind::NotFound, "session 's1' does not exist");
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// assert_eq!(err.to_string(), "not_found: session 's1' does not exist");
///
/// let io = std::io::Error::other("disk full");
/// let err = Error::from_source(ErrorKind::Session, io);
/// assert_eq!(err.to_string(), "session: disk full");
/// assert!(std::error::Error::source(&err).is_none(), "the message already says it");
/// assert!(err.downcast_source::<std::io::Error>().is_some());
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<BoxError>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        cause_after(&self.message, self.source.as_deref()?)
    }
}

/// The cause an error whose message is `message` shows after itself: `source`, or, when the
/// message already states `source` (and maybe its own causes), the first cause down the chain it
/// does not state. Error types with a message and a cause return this from `source`, so that a
/// chain printed with `{:#}` says each cause once.
///
/// ```
/// use adk_core::cause_after;
///
/// let io = std::io::Error::other("disk full");
/// assert!(cause_after("cannot write the session: disk full", &io).is_none());
/// assert!(cause_after("cannot write the session", &io).is_some());
/// ```
pub fn cause_after<'a>(
    message: &str,
    source: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    let mut current = Some(source);
    while let Some(cause) = current {
        let text = cause.to_string();
        if text.is_empty() || !message.contains(&text) {
            return Some(cause);
        }
        current = cause.source();
    }
    None
}

impl Error {
    /// An error of `kind` with a message that says what was wrong.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An error of `kind` caused by `source`; the message is the source's own.
    pub fn from_source(kind: ErrorKind, source: impl Into<BoxError>) -> Self {
        let source = source.into();
        Self {
            kind,
            message: source.to_string(),
            source: Some(source),
        }
    }

    /// Attaches the lower-layer error that caused this one.
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind prefix that `Display` adds.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether this error is, or wraps, a [context overflow](ErrorKind::ContextOverflow): the
    /// model's context window was exceeded, so the call may succeed with a shorter history.
    ///
    /// An error wraps one when an [`Error`] of that kind is anywhere in its chain of sources (an
    /// agent's error caused by its model's, say).
    ///
    /// ```
    /// use adk_core::{Error, ErrorKind};
    ///
    /// let overflow = Error::new(ErrorKind::ContextOverflow, "prompt is 9000 tokens, limit 8192");
    /// assert!(overflow.is_context_overflow());
    /// let wrapped = Error::new(ErrorKind::Agent, "the planner failed").with_source(overflow);
    /// assert!(wrapped.is_context_overflow());
    /// assert!(!Error::new(ErrorKind::Model, "rate limited").is_context_overflow());
    /// ```
    pub fn is_context_overflow(&self) -> bool {
        if self.kind == ErrorKind::ContextOverflow {
            return true;
        }
        // The whole chain, causes the messages state included.
        let mut current: Option<&(dyn std::error::Error + 'static)> = match &self.source {
            Some(source) => Some(source.as_ref()),
            None => None,
        };
        while let Some(error) = current {
            match error.downcast_ref::<Error>() {
                Some(error) if error.kind == ErrorKind::ContextOverflow => return true,
                Some(error) => {
                    current = match &error.source {
                        Some(source) => Some(source.as_ref()),
                        None => None,
                    }
                }
                None => current = error.source(),
            }
        }
        false
    }

    /// The error that caused this one, downcast to `E`, when it is one (whether or not the
    /// message states it).
    pub fn downcast_source<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.source.as_deref()?.downcast_ref::<E>()
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Self::from_source(ErrorKind::Serialization, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_is_kept_and_downcastable() {
        let json_error = serde_json::from_str::<u8>("x").unwrap_err();
        let error = Error::from(json_error);
        assert_eq!(error.kind(), ErrorKind::Serialization);
        assert!(error.downcast_source::<serde_json::Error>().is_some());
        // The message is the source's own, so the chain does not show it again.
        assert!(std::error::Error::source(&error).is_none());
    }

    #[test]
    fn a_chain_prints_each_cause_once() {
        let io = std::io::Error::other("disk full");
        let wrapped =
            Error::new(ErrorKind::Session, format!("cannot store the event: {io}")).with_source(io);
        let outer = Error::new(ErrorKind::Agent, "the run failed").with_source(wrapped);
        let mut chain = vec![outer.to_string()];
        let mut current = std::error::Error::source(&outer);
        while let Some(cause) = current {
            chain.push(cause.to_string());
            current = cause.source();
        }
        assert_eq!(
            chain,
            [
                "agent: the run failed",
                "session: cannot store the event: disk full"
            ]
        );
    }
}
