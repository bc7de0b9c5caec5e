//! The Anthropic adapter: [`Anthropic`] speaks the Messages API (`POST {base}/messages` with the
//! `anthropic-version` header), whole answers and SSE streams, with extended thinking kept and
//! sent back signed, and prompt caching by `cache_control` breakpoints.

mod request;
mod response;
mod stream;

use std::sync::Arc;

use adk_core::{Llm, LlmRequest, LlmResponseStream};
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::cache::ContextCacheConfig;
use crate::error::Error;
use crate::exchange::{self, Endpoint};
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

/// Anthropic's own base URL, up to and including the API version.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com/v1";

/// The variable holding the API key.
const KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";

/// The variable that points the adapter at another server (a proxy, a local server).
const BASE_URL_VARIABLE: &str = "ANTHROPIC_BASE_URL";

/// The API version every request names.
const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when a request sets no `max_output_tokens`: the API requires one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A Claude model behind Anthropic's Messages API.
///
/// ```no_run
/// # fn main() -> Result<(), adk_model::Error> {
/// // Reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL when set).
/// let model = adk_model::Anthropic::new("claude-sonnet-4-5")?;
/// # let _ = model; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Anthropic {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    url: reqwest::Url,
    headers: HeaderMap,
    options: request::Options,
    transport: Transport,
}

impl Endpoint for Inner {
    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn url(&self, _stream: bool) -> &reqwest::Url {
        &self.url
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("Anthropic")
            .field("model", &self.inner.model)
            .field("url", &crate::error::shown_url(self.inner.url.as_str()))
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// `model` (for example `claude-sonnet-4-5`) with the key in `ANTHROPIC_API_KEY`, at
    /// `ANTHROPIC_BASE_URL` when it is set.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming `ANTHROPIC_API_KEY` when it is not
    /// set.
    pub fn new(model: impl Into<String>) -> Result<Self, Error> {
        Self::builder(model).build()
    }

    /// A builder for `model`, for explicit configuration.
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            model: model.into(),
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            cache: None,
            http: HttpSettings::default(),
        }
    }
}

/// Builds an [`Anthropic`] model. Its `Debug` output names the extra headers without their
/// values, which may be credentials.
pub struct AnthropicBuilder {
    model: String,
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
    max_tokens: u32,
    cache: Option<ContextCacheConfig>,
    http: HttpSettings,
}

http_builder_methods!(AnthropicBuilder);

impl std::fmt::Debug for AnthropicBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("AnthropicBuilder")
            .field("model", &self.model)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::error::shown_url),
            )
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("max_tokens", &self.max_tokens)
            .field("cache", &self.cache)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl AnthropicBuilder {
    /// Sets the API key, sent as `x-api-key`; without it `build` reads `ANTHROPIC_API_KEY`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// Sets the base URL up to `/messages` (default `https://api.anthropic.com/v1`, or
    /// `ANTHROPIC_BASE_URL` when set); a server that needs no key (a local one) may be given
    /// without one.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Adds a header sent with every request (`anthropic-beta`, say).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets `max_tokens` for requests that set no `max_output_tokens` (default 4096): the API
    /// requires a limit on every call.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Caches the stable start of each request with `cache_control`: one breakpoint at the end
    /// of the system prompt, tools and history before the newest user turn
    /// ([`CacheMode::Explicit`](crate::CacheMode::Explicit)), or Anthropic's automatic caching
    /// ([`CacheMode::Automatic`](crate::CacheMode::Automatic)). Off by default.
    pub fn context_cache(mut self, config: ContextCacheConfig) -> Self {
        self.cache = Some(config);
        self
    }

    /// Builds the model.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) when Anthropic's own URL is used without a
    /// key (naming `ANTHROPIC_API_KEY`), a header or the key cannot be sent as a header, or the
    /// base URL is malformed.
    pub fn build(self) -> Result<Anthropic, Error> {
        let base_url = self
            .base_url
            .or_else(|| {
                std::env::var(BASE_URL_VARIABLE)
                    .ok()
                    .filter(|url| !url.trim().is_empty())
            })
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let base_url = base_url.trim().trim_end_matches('/').to_owned();
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        match self.api_key.or_else(|| ApiKey::from_env(&[KEY_VARIABLE])) {
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
                    Error::config("the Anthropic API key holds characters a header cannot carry; check it for stray whitespace")
                })?;
                value.set_sensitive(true);
                headers.insert("x-api-key", value);
            }
            None if base_url == DEFAULT_BASE_URL => {
                return Err(Error::config(format!(
                    "no Anthropic API key: set {KEY_VARIABLE} or call `.api_key(...)`, or point {BASE_URL_VARIABLE} at a server that needs none"
                )));
            }
            None => {}
        }
        for (name, value) in self.headers {
            let (name, mut value) = HeaderName::try_from(name.as_str())
                .ok()
                .zip(HeaderValue::try_from(value.as_str()).ok())
                .ok_or_else(|| {
                    Error::config(format!(
                        "the extra header `{name}` is not a valid HTTP header; fix its name or value"
                    ))
                })?;
            // An extra header may carry a credential (a proxy's token): kept out of Debug output
            // and scrubbed from error messages like the key.
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let url = parse_url(&format!("{base_url}/messages"))?;
        Ok(Anthropic {
            inner: Arc::new(Inner {
                model: self.model,
                transport: Transport::new(self.http, &url)?,
                url,
                headers,
                options: request::Options {
                    default_max_tokens: self.max_tokens,
                    cache: self.cache,
                },
            }),
        })
    }
}

impl Llm for Anthropic {
    fn name(&self) -> &str {
        &self.inner.model
    }

    fn generate(&self, request: LlmRequest, stream: bool) -> LlmResponseStream {
        let inner = &self.inner;
        let model = if request.model.is_empty() {
            inner.model.as_str()
        } else {
            request.model.as_str()
        };
        // The body is written before the stream starts, so that the stream holds it and not the
        // request for as long as the call takes.
        let body = request::build(&request, model, stream, &inner.options);
        exchange::call::<_, stream::StreamState>(Arc::clone(inner), body, stream, response::parse)
            .map(|response| response.map_err(adk_core::Error::from))
            .boxed()
    }
}
