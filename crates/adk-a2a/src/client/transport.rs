//! Sending one HTTP request: retries while no connection could be made, timeouts, and reading the
//! body under the size limit.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;

use super::ClientConfig;
use crate::error::A2aError;
use crate::types::JsonRpcRequest;

/// The HTTP side of a client: one reqwest client with the config's headers and timeouts.
#[derive(Clone, Debug)]
pub(super) struct Transport {
    http: reqwest::Client,
    config: ClientConfig,
}

impl Transport {
    pub(super) fn new(config: ClientConfig) -> Result<Self, A2aError> {
        let http = reqwest::Client::builder()
            .default_headers(config.header_map()?)
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(|error| A2aError::Config(format!("cannot build the HTTP client: {error}")))?;
        Ok(Self { http, config })
    }

    pub(super) fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// GETs `url` and reads its body.
    pub(super) async fn get(&self, url: &str) -> Result<Bytes, A2aError> {
        let response = self
            .send(url, || self.http.get(url).timeout(self.config.timeout))
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
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "text/event-stream")
                .body(body.clone())
        });
        tokio::time::timeout(self.config.timeout, send)
            .await
            .map_err(|_| A2aError::Timeout {
                url: url.to_owned(),
            })?
    }

    /// Sends the request `build` makes, again after a backoff while no connection could be
    /// made; a failure after the connection was made is never retried, so the remote agent never
    /// sees a message twice. An HTTP error status is an error holding the start of the body.
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
                    let status = response.status().as_u16();
                    let body = read_limited(response, url, 1024).await.unwrap_or_default();
                    return Err(A2aError::Http {
                        url: url.to_owned(),
                        status,
                        body: String::from_utf8_lossy(&body).into_owned(),
                    });
                }
                Err(error) if error.is_connect() && attempt <= self.config.connect_retries => {
                    let backoff = self.config.retry_backoff * 2u32.saturating_pow(attempt - 1);
                    tracing::debug!(%url, attempt, ?backoff, error = %error, "cannot connect; retrying");
                    tokio::time::sleep(backoff.min(Duration::from_secs(30))).await;
                }
                Err(error) if error.is_connect() => {
                    return Err(A2aError::Connect {
                        url: url.to_owned(),
                        attempts: attempt,
                        source: error,
                    });
                }
                Err(error) if error.is_timeout() => {
                    return Err(A2aError::Timeout {
                        url: url.to_owned(),
                    });
                }
                Err(error) => {
                    return Err(A2aError::Transport {
                        url: url.to_owned(),
                        source: error,
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
            url: url.to_owned(),
            limit,
        });
    }
    let mut body = BytesMut::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| {
            if error.is_timeout() {
                A2aError::Timeout {
                    url: url.to_owned(),
                }
            } else {
                A2aError::Transport {
                    url: url.to_owned(),
                    source: error,
                }
            }
        })?;
        if body.len() + chunk.len() > limit {
            return Err(A2aError::ResponseTooLarge {
                url: url.to_owned(),
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
