//! Sending one HTTP request: the configured credentials and headers only to the origin the user
//! configured, no redirects, retries while no connection could be made, timeouts, reading the body
//! under the size limit, and errors that name a URL without its user information and query and
//! quote nothing the peer sent.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use http::HeaderMap;
use reqwest::Url;

use super::ClientConfig;
use crate::error::A2aError;
use crate::types::JsonRpcRequest;

/// The HTTP side of a client: one reqwest client with the config's timeouts, and the credentials
/// it sends to its trusted origin alone.
#[derive(Clone, Debug)]
pub(super) struct Transport {
    http: reqwest::Client,
    config: ClientConfig,
    /// The configured headers (the bearer token among them).
    credentials: HeaderMap,
    /// The origin the credentials may go to: the one the user configured.
    trusted: Option<String>,
}

impl Transport {
    /// A transport whose credentials go to `trusted_url`'s origin only.
    pub(super) fn new(config: ClientConfig, trusted_url: &str) -> Result<Self, A2aError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            // A redirect could send the request (and, were it followed, its credentials) to a
            // place the user never configured; it is an error instead.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| A2aError::Config(format!("cannot build the HTTP client: {error}")))?;
        Ok(Self {
            http,
            credentials: config.header_map()?,
            config,
            trusted: origin_of(trusted_url),
        })
    }

    pub(super) fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The credentials and headers a request to `url` carries: the configured ones when `url` is
    /// on the trusted origin, none elsewhere (a card may name any URL).
    fn credentials_for(&self, url: &str) -> HeaderMap {
        if self.credentials.is_empty() {
            return HeaderMap::new();
        }
        if self.trusted.is_some() && origin_of(url) == self.trusted {
            self.credentials.clone()
        } else {
            tracing::warn!(
                url = %shown(url),
                "not sending the configured credentials and headers to an origin other than the configured one"
            );
            HeaderMap::new()
        }
    }

    /// GETs `url` and reads its body.
    pub(super) async fn get(&self, url: &str) -> Result<Bytes, A2aError> {
        let response = self
            .send(url, || {
                self.http
                    .get(url)
                    .headers(self.credentials_for(url))
                    .timeout(self.config.timeout)
            })
            .await?;
        read_limited(response, url, self.config.max_response_bytes).await
    }

    /// POSTs `request` to `url` and reads the JSON-RPC response body.
    pub(super) async fn post(
        &self,
        url: &str,
        request: &JsonRpcRequest,
    ) -> Result<Bytes, A2aError> {
        let body =
            serde_json::to_vec(request).map_err(|error| A2aError::Config(error.to_string()))?;
        let response = self
            .send(url, || {
                self.http
                    .post(url)
                    .headers(self.credentials_for(url))
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .timeout(self.config.timeout)
                    .body(body.clone())
            })
            .await?;
        read_limited(response, url, self.config.max_response_bytes).await
    }

    /// POSTs `request` to `url` asking for an event stream, and returns the response once its
    /// head arrived (within the timeout); the body is read by the caller.
    pub(super) async fn post_stream(
        &self,
        url: &str,
        request: &JsonRpcRequest,
    ) -> Result<reqwest::Response, A2aError> {
        let body =
            serde_json::to_vec(request).map_err(|error| A2aError::Config(error.to_string()))?;
        let send = self.send(url, || {
            self.http
                .post(url)
                .headers(self.credentials_for(url))
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "text/event-stream")
                .body(body.clone())
        });
        tokio::time::timeout(self.config.timeout, send)
            .await
            .map_err(|_| A2aError::Timeout { url: shown(url) })?
    }

    /// Sends the request `build` makes, again after a backoff while no connection could be
    /// made; a failure after the connection was made is never retried, so the remote agent never
    /// sees a message twice. An HTTP error status (a redirect included) is an error naming the
    /// status; the body is not read into it, as it is the peer's text.
    async fn send(
        &self,
        url: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, A2aError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match build().send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    return Err(A2aError::Http {
                        url: shown(url),
                        status: response.status().as_u16(),
                    });
                }
                Err(error) if error.is_connect() && attempt <= self.config.connect_retries => {
                    let backoff = self.config.retry_backoff * 2u32.saturating_pow(attempt - 1);
                    let error = error.without_url();
                    tracing::debug!(url = %shown(url), attempt, ?backoff, error = %error, "cannot connect; retrying");
                    tokio::time::sleep(backoff.min(Duration::from_secs(30))).await;
                }
                Err(error) if error.is_connect() => {
                    return Err(A2aError::Connect {
                        url: shown(url),
                        attempts: attempt,
                        source: error.without_url(),
                    });
                }
                Err(error) if error.is_timeout() => {
                    return Err(A2aError::Timeout { url: shown(url) });
                }
                Err(error) => {
                    return Err(A2aError::Transport {
                        url: shown(url),
                        source: error.without_url(),
                    });
                }
            }
        }
    }
}

/// Reads a response body, failing as soon as it grows past `limit` bytes.
async fn read_limited(
    response: reqwest::Response,
    url: &str,
    limit: usize,
) -> Result<Bytes, A2aError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(A2aError::ResponseTooLarge {
            url: shown(url),
            limit,
        });
    }
    let mut body = BytesMut::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| {
            if error.is_timeout() {
                A2aError::Timeout { url: shown(url) }
            } else {
                A2aError::Transport {
                    url: shown(url),
                    source: error.without_url(),
                }
            }
        })?;
        if body.len() + chunk.len() > limit {
            return Err(A2aError::ResponseTooLarge {
                url: shown(url),
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// `scheme://host:port` of `url`, the port spelled out; `None` when `url` is not a URL.
fn origin_of(url: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    Some(format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str()?.to_ascii_lowercase(),
        url.port_or_known_default()?
    ))
}

/// `url` as errors and logs show it: without user information, query and fragment, which may
/// hold secrets.
pub(crate) fn shown(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "<a URL that does not parse>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_secrets_and_origins_spell_out_their_port() {
        assert_eq!(
            shown("https://user:pw@agent.example:8443/a2a?key=secret#frag"),
            "https://agent.example:8443/a2a"
        );
        assert_eq!(
            origin_of("https://Agent.example/a2a"),
            Some("https://agent.example:443".to_owned())
        );
        assert_eq!(
            origin_of("http://agent.example:80/"),
            origin_of("http://agent.example/card.json")
        );
        assert_ne!(
            origin_of("http://agent.example/"),
            origin_of("https://agent.example/")
        );
        assert_eq!(origin_of("not a url"), None);
    }
}
