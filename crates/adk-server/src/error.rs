//! The errors of the server: [`ApiError`], what a request gets back (a status, a JSON body and,
//! for a busy server, a `Retry-After` of [`DEFAULT_RETRY_AFTER`] unless set), and [`ServerError`],
//! what setting the server up or serving can fail with.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use adk_core::ErrorKind;
use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::json;

/// The default `Retry-After` of a 503 answered because the server is full: 1 second. The server's
/// setting (`ServerConfig::retry_after`) starts from it, and a session store that ran out of
/// connections answers it, since that error is converted where no setting is at hand.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// An error answered to a request: a status and a JSON body `{"error": code, "detail": message}`.
///
/// `detail` is the field FastAPI (ADK Python's server) uses, so ADK clients show the message;
/// `error` is a short code to branch on. Messages say what was wrong and never carry a backtrace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 503 with `Retry-After`: the server cannot take this now, and may in `after` (rounded up to
    /// whole seconds, at least 1).
    pub fn unavailable(
        code: &'static str,
        message: impl Into<String>,
        after: std::time::Duration,
    ) -> Self {
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        Self {
            retry_after: Some(seconds.max(1)),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 404: what the request names does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 403: the request may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// The status answered.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message answered.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The short code answered as `error`.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The seconds answered in `Retry-After`, if any.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }
}

impl From<adk_core::Error> for ApiError {
    fn from(error: adk_core::Error) -> Self {
        if adk_session::is_pool_exhausted(&error) {
            return Self::unavailable(
                "session_store_busy",
                format!(
                    "the session store is overloaded; retry later: {}",
                    error.message()
                ),
                DEFAULT_RETRY_AFTER,
            );
        }
        let (status, code) = match error.kind() {
            ErrorKind::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            ErrorKind::InvalidInput => (StatusCode::BAD_REQUEST, "invalid_input"),
            ErrorKind::AlreadyExists => (StatusCode::CONFLICT, "already_exists"),
            ErrorKind::StaleSession => (StatusCode::CONFLICT, "stale_session"),
            ErrorKind::Config => (StatusCode::BAD_REQUEST, "config"),
            ErrorKind::LlmCallsLimitExceeded => {
                (StatusCode::UNPROCESSABLE_ENTITY, "llm_calls_limit_exceeded")
            }
            ErrorKind::Cancelled => (StatusCode::SERVICE_UNAVAILABLE, "cancelled"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        if status.is_server_error() {
            tracing::error!(error = %error, "request failed");
        }
        Self::new(status, code, error.message())
    }
}

impl From<adk_gate::Forbidden> for ApiError {
    fn from(forbidden: adk_gate::Forbidden) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden_user",
            forbidden.to_string(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(json!({"error": self.code, "detail": self.message})),
        )
            .into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
        }
        response
    }
}

/// What the server's `Result`s of handlers carry.
pub(crate) type ApiResult<T> = std::result::Result<T, ApiError>;

/// An error setting the server up or serving: binding, a bad option, the dev UI's files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// Why it failed.
        source: io::Error,
    },
    /// Serving failed.
    #[error("serving failed: {0}")]
    Serve(#[source] io::Error),
    /// An option is wrong (an app name, an origin pattern).
    #[error("{0}")]
    Config(String),
    /// The dev UI could not be fetched or unpacked.
    #[error("the dev UI is not available: {message}")]
    DevUi {
        /// What went wrong and what to do.
        message: String,
    },
    /// A file of the dev UI could not be read or written.
    #[error("the dev UI directory {path} cannot be used: {source}")]
    DevUiIo {
        /// The file or directory.
        path: PathBuf,
        /// Why it failed.
        source: io::Error,
    },
}
