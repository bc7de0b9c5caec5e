//! [`ToolError`], the one error type of this crate, and its conversion into [`adk_core::Error`].

use std::fmt;

use adk_core::{BoxError, ErrorKind};

/// What went wrong in a tool, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The model's arguments do not match the tool's schema; the message names each bad field.
    InvalidArguments,
    /// The tool did not finish within its timeout.
    Timeout,
    /// The tool panicked; the run goes on and the model is told.
    Panicked,
    /// The tool's own function returned an error.
    Failed,
    /// The tool's result could not be turned into JSON, or its schema could not be built.
    Serialization,
    /// An MCP server could not be started or reached, or it broke off the handshake.
    McpConnect,
    /// An MCP server answered something that is not MCP.
    McpProtocol,
    /// An MCP request failed after the connection was up (transport, server error, timeout).
    McpRequest,
    /// An MCP tool answered with `isError: true`.
    McpToolError,
    /// An HTTP call (an OpenAPI operation) could not be sent, or its answer could not be read.
    HttpRequest,
    /// An HTTP call was answered with a status other than success; the message holds it and
    /// the start of the body.
    HttpStatus,
}

impl ToolErrorKind {
    /// A short lowercase name of the kind, as used in messages and telemetry.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::Timeout => "timeout",
            Self::Panicked => "panicked",
            Self::Failed => "failed",
            Self::Serialization => "serialization",
            Self::McpConnect => "mcp_connect",
            Self::McpProtocol => "mcp_protocol",
            Self::McpRequest => "mcp_request",
            Self::McpToolError => "mcp_tool_error",
            Self::HttpRequest => "http_request",
            Self::HttpStatus => "http_status",
        }
    }

    /// The kind of [`adk_core::Error`] this kind becomes at the [`Tool`](crate::Tool) boundary.
    fn core_kind(self) -> ErrorKind {
        match self {
            Self::InvalidArguments => ErrorKind::InvalidInput,
            Self::Serialization => ErrorKind::Serialization,
            _ => ErrorKind::Tool,
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of a tool: a [`kind`](ToolError::kind) to branch on and a message written for the
/// model, which reads it in the function response and can correct its call.
///
/// At the [`Tool`](crate::Tool) boundary it becomes an [`adk_core::Error`] that keeps it as the
/// source, so callers can get it back:
///
/// ```
/// use adk_tool::{ToolError, ToolErrorKind};
///
/// let error = adk_core::Error::from(ToolError::new(ToolErrorKind::Timeout, "took too long"));
/// assert_eq!(error.kind(), adk_core::ErrorKind::Tool);
/// assert_eq!(error.message(), "took too long");
/// let source = error.downcast_source::<ToolError>().unwrap();
/// assert_eq!(source.kind(), ToolErrorKind::Timeout);
/// ```
#[derive(Debug)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
    source: Option<BoxError>,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The cause a message already states is skipped, so a chain prints each cause once.
impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        adk_core::cause_after(&self.message, self.source.as_deref()?)
    }
}

impl ToolError {
    /// An error of `kind` with a message for the model.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The error that caused this one, downcast to `E`, when it is one.
    pub fn downcast_source<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.source.as_deref()?.downcast_ref::<E>()
    }

    /// Attaches the lower-layer error that caused this one.
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message, as the model reads it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<ToolError> for adk_core::Error {
    fn from(error: ToolError) -> Self {
        adk_core::Error::from_source(error.kind.core_kind(), error)
    }
}
