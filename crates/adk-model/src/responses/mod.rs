//! The OpenAI Responses adapter: [`OpenAiResponses`] speaks `POST {base}/responses`, OpenAI's API
//! for its reasoning models: reasoning items kept and sent back (encrypted when nothing is stored
//! server-side), structured output through `text.format`, SSE streams of typed events.

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

/// OpenAI's own base URL, used when neither the builder nor `OPENAI_BASE_URL` gives one.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind the OpenAI Responses API.
///
/// ```no_run
/// # fn main() -> Result<(), adk_model::Error> {
/// // Reads OPENAI_API_KEY (and OPENAI_BASE_URL when set).
/// let model = adk_model::OpenAiResponses::new("gpt-5-mini")?;
/// # let _ = model; Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiResponses {
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

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("OpenAiResponses")
            .field("model", &self.inner.model)
            .field("url", &crate::error::shown_url(self.inner.url.as_str()))
            .finish_non_exhaustive()
    }
}

impl OpenAiResponses {
    /// `model` (for example `gpt-5-mini`) with the key in `OPENAI_API_KEY`, at `OPENAI_BASE_URL`
    /// when it is set.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming `OPENAI_API_KEY` when OpenAI's own
    /// URL is used and it is not set.
    pub fn new(model: impl Into<String>) -> Result<Self, Error> {
        Self::builder(model).build()
    }

    /// A builder for `model`, for explicit configuration.
    pub fn builder(model: impl Into<String>) -> OpenAiResponsesBuilder {
        OpenAiResponsesBuilder {
            model: model.into(),
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            options: request::Options::default(),
            http: HttpSettings::default(),
        }
    }
}

/// Builds an [`OpenAiResponses`] model. Its `Debug` output names the extra headers without their
/// values, which may be credentials.
pub struct OpenAiResponsesBuilder {
    model: String,
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
    options: request::Options,
    http: HttpSettings,
}

http_builder_methods!(OpenAiResponsesBuilder);

impl std::fmt::Debug for OpenAiResponsesBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("OpenAiResponsesBuilder")
            .field("model", &self.model)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::error::shown_url),
            )
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("options", &self.options)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl OpenAiResponsesBuilder {
    /// Sets the API key, sent as `Authorization: Bearer`; without it `build` reads
    /// `OPENAI_API_KEY`. A server at another base URL may need none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// Sets the base URL, up to `/responses` (for example `http://127.0.0.1:8080/v1`); without it
    /// `build` reads `OPENAI_BASE_URL`, then uses `https://api.openai.com/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Adds a header sent with every request (`OpenAI-Organization`, say).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Marks every function `"strict": true` unless its declaration says otherwise. Off by
    /// default.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.options.strict_tools = strict;
        self
    }

    /// Sends a response schema with `"strict": true` (default `false`).
    pub fn strict_response_schema(mut self, strict: bool) -> Self {
        self.options.strict_response_schema = strict;
        self
    }

    /// Sets `store`: with `false` OpenAI keeps nothing, and the reasoning of each answer comes
    /// back encrypted (`include: ["reasoning.encrypted_content"]`) to be sent with the next
    /// request. Unset by default (the API stores).
    pub fn store(mut self, store: bool) -> Self {
        self.options.store = Some(store);
        self
    }

    /// Asks for reasoning items' `encrypted_content` even when the API stores responses, so that
    /// a history holds the whole reasoning. Off by default; on whenever `store(false)`.
    pub fn encrypted_reasoning(mut self, encrypted: bool) -> Self {
        self.options.encrypted_reasoning = encrypted;
        self
    }

    /// Sets the reasoning summary asked for when a request's thinking config includes thoughts:
    /// `auto` (the default), `concise` or `detailed`.
    pub fn reasoning_summary(mut self, summary: impl Into<String>) -> Self {
        self.options.reasoning_summary = Some(summary.into());
        self
    }

    /// Sets the service tier (`auto`, `default`, `flex`, `priority`).
    pub fn service_tier(mut self, tier: impl Into<String>) -> Self {
        self.options.service_tier = Some(tier.into());
        self
    }

    /// Sets `prompt_cache_key`, which routes requests sharing a prefix to the same cache.
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.options.prompt_cache_key = Some(key.into());
        self
    }

    /// Caches the stable start of each request: with
    /// [`CacheMode::Explicit`](crate::CacheMode::Explicit) a `prompt_cache_breakpoint` marks the
    /// end of the instructions, tools and history before the newest user text, with the config's
    /// ttl; with [`CacheMode::Automatic`](crate::CacheMode::Automatic) the API caches implicitly.
    /// Off by default.
    pub fn context_cache(mut self, config: ContextCacheConfig) -> Self {
        self.options.cache = Some(config);
        self
    }

    /// Builds the model.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) when OpenAI's own URL is used without a
    /// key (naming `OPENAI_API_KEY`), a header or the key cannot be sent as a header, or the base
    /// URL is malformed.
    pub fn build(self) -> Result<OpenAiResponses, Error> {
        let base_url = self
            .base_url
            .or_else(|| {
                std::env::var("OPENAI_BASE_URL")
                    .ok()
                    .filter(|url| !url.trim().is_empty())
            })
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let base_url = base_url.trim().trim_end_matches('/').to_owned();
        let mut headers = HeaderMap::new();
        match self
            .api_key
            .or_else(|| ApiKey::from_env(&["OPENAI_API_KEY"]))
        {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    Error::config("the OpenAI API key holds characters a header cannot carry; check it for stray whitespace")
                })?;
                value.set_sensitive(true);
                headers.insert(reqwest::header::AUTHORIZATION, value);
            }
            None if base_url == DEFAULT_BASE_URL => {
                return Err(Error::config(
                    "no OpenAI API key: set OPENAI_API_KEY or call `.api_key(...)`, or point OPENAI_BASE_URL at a server that needs none",
                ));
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
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let url = parse_url(&format!("{base_url}/responses"))?;
        Ok(OpenAiResponses {
            inner: Arc::new(Inner {
                model: self.model,
                transport: Transport::new(self.http, &url)?,
                url,
                headers,
                options: self.options,
            }),
        })
    }
}

impl Llm for OpenAiResponses {
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
