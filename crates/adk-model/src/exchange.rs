//! One model call over HTTP, the part every adapter whose request and answer are one JSON body or
//! one SSE stream shares: post the body, then read the whole answer or decode the stream event by
//! event, yielding partial responses as they come and the aggregated one last.

use std::sync::Arc;

use adk_core::LlmResponse;
use futures::{Stream, StreamExt as _};
use reqwest::header::HeaderMap;

use crate::error::Error;
use crate::http::Transport;

/// Where and how an adapter posts its calls.
pub(crate) trait Endpoint: Send + Sync + 'static {
    /// The transport with its retry policy and limits.
    fn transport(&self) -> &Transport;
    /// The URL of a streamed or a whole call.
    fn url(&self, stream: bool) -> &reqwest::Url;
    /// The headers of every call (the key among them).
    fn headers(&self) -> &HeaderMap;
}

/// Reads a provider's stream, one SSE payload at a time.
pub(crate) trait StreamDecoder: Default + Send + 'static {
    /// Takes one payload; returns the partial response it gives, if any.
    fn push(&mut self, data: &str) -> Result<Option<LlmResponse>, Error>;
    /// The aggregated final response once the stream ended.
    fn finish(self) -> Result<LlmResponse, Error>;
}

/// Posts `body` to `endpoint` and yields what comes back: with `stream`, partial responses as
/// `D` decodes them and then the aggregated response; else the whole answer read by `parse`.
/// Nothing follows an error.
pub(crate) fn call<E: Endpoint, D: StreamDecoder>(
    endpoint: Arc<E>,
    body: Result<bytes::Bytes, Error>,
    stream: bool,
    parse: fn(&str) -> Result<LlmResponse, Error>,
) -> impl Stream<Item = Result<LlmResponse, Error>> + Send + 'static {
    async_stream::stream! {
        let body = match body {
            Ok(body) => body,
            Err(error) => {
                yield Err(error);
                return;
            }
        };
        let url = endpoint.url(stream);
        let transport = endpoint.transport();
        let response = match transport.post(url, endpoint.headers(), body).await {
            Ok(response) => response,
            Err(error) => {
                yield Err(error);
                return;
            }
        };
        if !stream {
            yield match transport.read_body(response, url.as_str()).await {
                Ok(text) => parse(&text),
                Err(error) => Err(error),
            };
            return;
        }
        let mut state = D::default();
        let mut events = std::pin::pin!(crate::sse::sse_data(
            response.bytes_stream(),
            transport.max_event_bytes(),
        ));
        while let Some(event) = events.next().await {
            match event.and_then(|data| state.push(&data)) {
                Ok(Some(partial)) => yield Ok(partial),
                Ok(None) => {}
                Err(error) => {
                    yield Err(error);
                    return;
                }
            }
        }
        yield state.finish();
    }
}
