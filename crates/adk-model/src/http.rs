//! The HTTP transport both adapters share: a reqwest client with `TCP_NODELAY` and a pool that
//! drops idle connections before servers do, a per-request timeout, retries, provider error
//! envelopes turned into typed errors, and bounded reads: no body from the provider is read past a
//! limit, so a broken or hostile server cannot make the client buffer without end.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::error::{Error, ErrorKind, shown_url};
use crate::retry::RetryPolicy;

/// Settings of the transport, common to both adapters' builders.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub(crate) timeout: Option<Duration>,
    pub(crate) connect_timeout: Duration,
    pub(crate) pool_idle_timeout: Option<Duration>,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_response_bytes: usize,
    pub(crate) max_event_bytes: usize,
    pub(crate) max_error_body_bytes: usize,
}

/// The default of `max_response_bytes`: the largest whole (not streamed) answer read, 64 MiB,
/// room for several inline images.
const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// The default of `max_error_body_bytes`: how much of an error answer is read and kept, 64 KiB;
/// the rest is left unread.
const DEFAULT_MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// How long an idle connection stays in the pool by default: below the 5 s after which llama.cpp's
/// server and uvicorn (so vLLM) close an idle keep-alive connection, so that the client does not
/// reuse a connection the server is closing.
const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: Some(Duration::from_secs(600)),
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: Some(DEFAULT_POOL_IDLE_TIMEOUT),
            retry: RetryPolicy::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_event_bytes: crate::sse::DEFAULT_MAX_EVENT_BYTES,
            max_error_body_bytes: DEFAULT_MAX_ERROR_BODY_BYTES,
        }
    }
}

/// The transport setters of an adapter's builder (a struct with an `http: HttpSettings` field),
/// written once so that both adapters take the same settings with the same documentation.
macro_rules! http_builder_methods {
    ($builder:ty) => {
        impl $builder {
            /// Sets the deadline of one attempt, from connecting to the end of the response body
            /// (default 10 minutes); `None` waits for ever.
            pub fn timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
                self.http.timeout = timeout;
                self
            }

            /// Sets how long connecting may take (default 10 s).
            pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
                self.http.connect_timeout = timeout;
                self
            }

            /// Sets how long an idle connection is kept for the next call (default 4 s); `None`
            /// keeps it until the server closes it.
            ///
            /// Keep it below the server's keep-alive timeout (5 s for llama.cpp's server and for
            /// uvicorn, so vLLM): a connection the server closes just as a call reuses it fails
            /// that call's attempt, which is then retried.
            pub fn pool_idle_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
                self.http.pool_idle_timeout = timeout;
                self
            }

            /// Sets the retry policy (default [`RetryPolicy::default`](crate::RetryPolicy::default)).
            pub fn retry(mut self, policy: $crate::RetryPolicy) -> Self {
                self.http.retry = policy;
                self
            }

            /// Sets the largest whole (not streamed) answer read, in bytes (default 64 MiB); a
            /// larger one fails the call with
            /// [`ErrorKind::ResponseTooLarge`](crate::ErrorKind::ResponseTooLarge).
            pub fn max_response_bytes(mut self, bytes: usize) -> Self {
                self.http.max_response_bytes = bytes;
                self
            }

            /// Sets the largest one event of a streamed answer may be, in bytes (default 16 MiB);
            /// a larger one ends the stream with
            /// [`ErrorKind::ResponseTooLarge`](crate::ErrorKind::ResponseTooLarge).
            pub fn max_event_bytes(mut self, bytes: usize) -> Self {
                self.http.max_event_bytes = bytes;
                self
            }

            /// Sets how much of an error answer (a non-success status) is read and kept in the
            /// error, in bytes (default 64 KiB); the rest is left unread.
            pub fn max_error_body_bytes(mut self, bytes: usize) -> Self {
                self.http.max_error_body_bytes = bytes;
                self
            }
        }
    };
}
pub(crate) use http_builder_methods;

/// `url` parsed once, when a model is built, so that a malformed base URL fails the build with a
/// clear message and no request parses its URL again.
pub(crate) fn parse_url(url: &str) -> Result<reqwest::Url, Error> {
    reqwest::Url::parse(url).map_err(|error| {
        Error::config(format!(
            "`{}` is not a valid URL ({error}); give the base URL with its scheme, like \
             `http://127.0.0.1:8080/v1`",
            shown_url(url)
        ))
    })
}

/// A reqwest client plus the retry policy and timeout.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    settings: HttpSettings,
}

impl Transport {
    /// A transport for requests to `base_url` and below it.
    ///
    /// Redirects are not followed: a model API answers where it is asked, and a redirect would
    /// carry the API key's header to wherever it points. For an `http://` base URL no TLS root
    /// store is loaded (the client never makes a TLS connection), which spares a process that
    /// talks to a local server the system certificates' parse at start.
    pub(crate) fn new(settings: HttpSettings, base_url: &reqwest::Url) -> Result<Self, Error> {
        let mut builder = reqwest::Client::builder()
            // Without TCP_NODELAY the first small SSE write stalls ~40 ms behind Nagle's algorithm.
            .tcp_nodelay(true)
            .connect_timeout(settings.connect_timeout)
            .pool_idle_timeout(settings.pool_idle_timeout)
            .redirect(reqwest::redirect::Policy::none());
        if base_url.scheme() == "http" {
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let client = builder.build().map_err(|error| {
            Error::config(format!(
                "could not build the HTTP client: {error}; this is a TLS or system setup problem"
            ))
            .with_source(error)
        })?;
        Ok(Self { client, settings })
    }

    /// The HTTP client, for calls that are not model calls (fetching a token).
    #[cfg(feature = "vertex")]
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// POSTs `body` as JSON to `url`, retrying per the policy, and returns a response with a
    /// success status; any other status becomes an [`ErrorKind::Http`] error holding the body.
    pub(crate) async fn post(
        &self,
        url: &reqwest::Url,
        headers: &HeaderMap,
        body: bytes::Bytes,
    ) -> Result<reqwest::Response, Error> {
        let attempts = self.settings.retry.attempts();
        let mut attempt = 1;
        loop {
            match self.post_once(url, headers, body.clone()).await {
                Ok(response) => return Ok(response),
                Err(error) if error.is_retryable() && attempt < attempts => {
                    let delay = self.settings.retry.delay(attempt, error.retry_after());
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(error) if attempt > 1 => {
                    let message = format!("{error} (gave up after {attempt} attempts)");
                    return Err(error.with_message(message));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// DELETEs `url`, once, failing on a status other than success.
    #[cfg(feature = "gemini")]
    pub(crate) async fn delete(
        &self,
        url: &reqwest::Url,
        headers: &HeaderMap,
    ) -> Result<(), Error> {
        let mut request = self.client.delete(url.clone()).headers(headers.clone());
        if let Some(timeout) = self.settings.timeout {
            request = request.timeout(timeout);
        }
        let response = request
            .send()
            .await
            .map_err(|error| Error::from_reqwest(error, url.as_str(), "sending to"))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body =
            read_error_body(response, self.settings.max_error_body_bytes, url.as_str()).await?;
        Err(provider_error(
            status.as_u16(),
            redact_sensitive(&body, headers),
            url.as_str(),
        ))
    }

    async fn post_once(
        &self,
        url: &reqwest::Url,
        headers: &HeaderMap,
        body: bytes::Bytes,
    ) -> Result<reqwest::Response, Error> {
        let mut request = self
            .client
            .post(url.clone())
            .headers(headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(timeout) = self.settings.timeout {
            request = request.timeout(timeout);
        }
        let response = request
            .send()
            .await
            .map_err(|error| Error::from_reqwest(error, url.as_str(), "sending to"))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let url = url.as_str();
        let body = read_error_body(response, self.settings.max_error_body_bytes, url).await?;
        // A server (or a proxy in between) may echo the request's headers back; the key never
        // reaches a message or a log through that.
        let body = redact_sensitive(&body, headers);
        Err(provider_error(status.as_u16(), body, url).with_retry_after(retry_after))
    }

    /// Reads a whole answer as text, failing past `max_response_bytes`.
    pub(crate) async fn read_body(
        &self,
        response: reqwest::Response,
        url: &str,
    ) -> Result<String, Error> {
        let limit = self.settings.max_response_bytes;
        let too_large = || {
            Error::new(
                ErrorKind::ResponseTooLarge { limit },
                format!(
                    "the answer of {} passed {limit} bytes (the builder's \
                     `max_response_bytes`); the server may be broken or hostile, or raise the \
                     limit",
                    shown_url(url)
                ),
            )
        };
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(too_large());
        }
        let body = read_at_most(response, limit + 1, url).await?;
        if body.len() > limit {
            return Err(too_large());
        }
        // Valid UTF-8 (the rule) becomes the text without a copy.
        Ok(String::from_utf8(body)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
    }

    /// The largest one event of a streamed answer may be.
    pub(crate) fn max_event_bytes(&self) -> usize {
        self.settings.max_event_bytes
    }
}

/// `text` with the values of the sensitive headers (the API key, with or without `Bearer `)
/// replaced by `[REDACTED]`.
fn redact_sensitive(text: &str, headers: &HeaderMap) -> String {
    let mut text = text.to_owned();
    for value in headers.values().filter(|value| value.is_sensitive()) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        let secret = value.strip_prefix("Bearer ").unwrap_or(value).trim();
        if secret.len() >= 4 {
            text = text.replace(secret, "[REDACTED]");
        }
    }
    text
}

/// The first `limit` bytes of an error answer as text (with a note when there was more), leaving
/// the rest unread.
async fn read_error_body(
    response: reqwest::Response,
    limit: usize,
    url: &str,
) -> Result<String, Error> {
    let body = read_at_most(response, limit + 1, url).await?;
    if body.len() <= limit {
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    let mut text = String::from_utf8_lossy(&body[..limit]).into_owned();
    text.push_str(&format!(" [cut at {limit} bytes]"));
    Ok(text)
}

/// Reads the body until its end or until `limit` bytes were read, whichever comes first.
async fn read_at_most(
    mut response: reqwest::Response,
    limit: usize,
    url: &str,
) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while body.len() < limit {
        let chunk = response
            .chunk()
            .await
            .map_err(|error| Error::from_reqwest(error, url, "reading"))?;
        let Some(chunk) = chunk else {
            break;
        };
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(body)
}

/// The typed error of a non-success response, reading the provider's error envelope
/// (`{"error": {"message", "status" | "code" | "type"}}`, the same shape for Gemini and OpenAI).
pub(crate) fn provider_error(status: u16, body: String, url: &str) -> Error {
    let envelope: Option<serde_json::Value> = serde_json::from_str(&body).ok();
    let error = envelope.as_ref().and_then(|value| value.get("error"));
    let provider_message = error
        .and_then(|error| error.get("message"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    // A code that only repeats the HTTP status (llama.cpp and others send `"code": 400`) says
    // nothing new: the next key names the error instead, and the message states the status once.
    let http_status = status.to_string();
    let provider_status = error.and_then(|error| {
        ["status", "code", "type"]
            .iter()
            .filter_map(|key| match error.get(*key)? {
                serde_json::Value::String(text) => Some(text.clone()),
                serde_json::Value::Number(number) => Some(number.to_string()),
                _ => None,
            })
            .find(|code| *code != http_status)
    });
    let advice = match status {
        401 | 403 => "check the API key and that it may use this model",
        404 => "check the model name and the base URL",
        408 | 429 => "the provider is rate limiting or busy; retry later or send fewer requests",
        400..=499 => "fix the request the message names",
        _ => "the provider failed; retry later",
    };
    let detail = provider_message.unwrap_or_else(|| body.chars().take(300).collect());
    let code = provider_status
        .as_deref()
        .map(|code| format!(" {code}"))
        .unwrap_or_default();
    let url = shown_url(url);
    Error::new(
        ErrorKind::Http { status },
        format!("{url} answered HTTP {status}{code}: {detail}; {advice}"),
    )
    .with_body(body)
    .with_provider_status(provider_status)
}

/// The wait a server asked for: `retry-after-ms` (OpenAI) or `Retry-After` in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    if let Some(millis) = read("retry-after-ms") {
        return Duration::try_from_secs_f64(millis / 1000.0).ok();
    }
    read("retry-after").and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_and_openai_envelopes_give_status_code_and_message() {
        let gemini = provider_error(
            404,
            r#"{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}"#
                .into(),
            "http://h/v1beta/models/x:generateContent",
        );
        assert_eq!(gemini.status(), Some(404));
        assert_eq!(gemini.provider_status(), Some("NOT_FOUND"));
        assert!(
            gemini.to_string().contains("models/x is not found"),
            "{gemini}"
        );
        assert!(
            gemini.to_string().contains("check the model name"),
            "{gemini}"
        );

        let openai = provider_error(
            400,
            r#"{"error":{"message":"bad temperature","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}}"#.into(),
            "http://h/v1/chat/completions",
        );
        assert_eq!(openai.provider_status(), Some("decimal_above_max_value"));
        let plain = provider_error(502, "<html>bad gateway</html>".into(), "http://h");
        assert!(
            plain.to_string().contains("<html>bad gateway</html>"),
            "{plain}"
        );
        assert_eq!(plain.provider_status(), None);
    }

    #[test]
    fn a_code_that_repeats_the_http_status_is_not_shown_twice() {
        // llama.cpp's answer to a request longer than its context window.
        let overflow = provider_error(
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#.into(),
            "http://h/v1/chat/completions",
        );
        let text = overflow.to_string();
        assert!(
            text.contains("answered HTTP 400 exceed_context_size_error: the request exceeds"),
            "{text}"
        );
        assert_eq!(text.matches("400").count(), 1, "{text}");
        assert_eq!(
            overflow.provider_status(),
            Some("exceed_context_size_error")
        );

        // A code alone that repeats the status is left out.
        let bare = provider_error(
            503,
            r#"{"error":{"code":503,"message":"loading model"}}"#.into(),
            "http://h/v1/chat/completions",
        );
        assert!(
            bare.to_string()
                .contains("answered HTTP 503: loading model"),
            "{bare}"
        );
        assert_eq!(bare.provider_status(), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }
}
