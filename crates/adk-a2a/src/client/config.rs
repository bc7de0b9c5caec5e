//! [`ClientConfig`]: timeouts, retries, the response size limit and authentication of a client.

use std::fmt;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret as _, SecretString};

use crate::error::A2aError;

/// How an [`A2aClient`](crate::A2aClient) talks to its remote agent.
///
/// ```
/// use std::time::Duration;
/// use adk_a2a::ClientConfig;
///
/// let config = ClientConfig::default()
///     .timeout(Duration::from_secs(120))
///     .connect_retries(3)
///     .max_response_bytes(4 * 1024 * 1024)
///     .bearer_token("s3cret")
///     .header("x-tenant", "acme");
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct ClientConfig {
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) connect_retries: u32,
    pub(crate) retry_backoff: Duration,
    pub(crate) max_response_bytes: usize,
    pub(crate) bearer_token: Option<SecretString>,
    pub(crate) headers: Vec<(String, String)>,
}

/// The default timeout of a request, and of the wait for each event of a stream: 600 s, as ADK
/// Python's remote agent waits.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The default largest response (or streamed event): 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: Duration::from_secs(10),
            connect_retries: 2,
            retry_backoff: Duration::from_millis(200),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            bearer_token: None,
            headers: Vec::new(),
        }
    }
}

impl ClientConfig {
    /// How long a request may take, and how long a stream may go without an event.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long establishing a connection may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many times a request is sent again when no connection could be made. Nothing is
    /// retried once a connection was made, so a message the remote agent accepted is never sent
    /// twice.
    pub fn connect_retries(mut self, retries: u32) -> Self {
        self.connect_retries = retries;
        self
    }

    /// The wait before the first retry; it doubles with each further retry.
    pub fn retry_backoff(mut self, backoff: Duration) -> Self {
        self.retry_backoff = backoff;
        self
    }

    /// The largest response body, or streamed event, accepted.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(SecretString::from(token.into()));
        self
    }

    /// Sends header `name: value` with every request (an API key, a tenant).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The headers every request carries; fails naming a header that is not valid HTTP.
    pub(crate) fn header_map(&self) -> Result<HeaderMap, A2aError> {
        let mut map = HeaderMap::new();
        for (name, value) in &self.headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                A2aError::Config(format!("{name:?} is not a valid HTTP header name"))
            })?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                A2aError::Config(format!("the value of header {name:?} is not valid HTTP"))
            })?;
            map.append(header, value);
        }
        if let Some(token) = &self.bearer_token {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose_secret()))
                .map_err(|_| {
                    A2aError::Config("the bearer token is not valid in an HTTP header".to_owned())
                })?;
            value.set_sensitive(true);
            map.insert(http::header::AUTHORIZATION, value);
        }
        Ok(map)
    }
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("connect_retries", &self.connect_retries)
            .field("max_response_bytes", &self.max_response_bytes)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
