//! The Gemini adapter: [`Gemini`] speaks the generativelanguage REST API
//! (`models/{m}:generateContent` and `models/{m}:streamGenerateContent?alt=sse`), and the same
//! API on Vertex AI (`projects/{p}/locations/{l}/publishers/google/models/{m}:...`) with
//! Application Default Credentials.

mod context_cache;
#[cfg(feature = "vertex")]
mod credentials;
mod request;
mod response;
mod stream;
#[cfg(feature = "vertex")]
mod vertex;

use std::sync::Arc;

use adk_core::{Clock, Llm, LlmRequest, LlmResponseStream, StreamingMode, SystemClock};
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderValue};

#[cfg(feature = "vertex")]
pub use credentials::GoogleCredentials;

use crate::cache::ContextCacheConfig;
use crate::error::Error;
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

/// The default base URL, up to and including the API version.
pub(crate) const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The environment variables read for the API key, in order.
pub(crate) const KEY_VARIABLES: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];

/// A Gemini model over the generativelanguage REST API.
///
/// [`Gemini::new`] reads the key from `GOOGLE_API_KEY` or `GEMINI_API_KEY`, as Google's SDKs do;
/// [`Gemini::builder`] sets the key, the base URL, timeouts and retries explicitly. Making the
/// model sends nothing: the first request goes out when an agent calls it.
///
/// ```
/// use adk_model::{ErrorKind, Gemini};
///
/// let model = Gemini::builder("gemini-2.5-flash").api_key("my-key").build()?;
/// assert_eq!(adk_core::Llm::name(&model), "gemini-2.5-flash");
///
/// // Without a key, the error names the variables it read.
/// let error = Gemini::builder("gemini-2.5-flash").env_vars(&[]).build().unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::MissingApiKey);
/// # Ok::<(), adk_model::Error>(())
/// ```
#[derive(Clone)]
pub struct Gemini {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    /// Up to `/models`: the API version's root, or on Vertex AI the publisher's path.
    base_url: String,
    /// The two endpoints of the builder's model, parsed once; a request naming another model
    /// builds its own.
    endpoints: Endpoints,
    headers: HeaderMap,
    transport: Transport,
    /// On Vertex AI, where each call's access token comes from.
    #[cfg(feature = "vertex")]
    vertex: Option<credentials::GoogleCredentials>,
    /// The explicit context cache, when the builder asked for one.
    cache: Option<context_cache::ContextCache>,
}

/// The URLs of one model's `generateContent` and `streamGenerateContent?alt=sse`.
struct Endpoints {
    unary: reqwest::Url,
    stream: reqwest::Url,
}

impl Endpoints {
    fn new(base_url: &str, model: &str) -> Result<Self, Error> {
        let model = model.trim_start_matches("models/");
        Ok(Self {
            unary: parse_url(&format!("{base_url}/models/{model}:generateContent"))?,
            stream: parse_url(&format!(
                "{base_url}/models/{model}:streamGenerateContent?alt=sse"
            ))?,
        })
    }

    fn get(&self, stream: bool) -> &reqwest::Url {
        if stream { &self.stream } else { &self.unary }
    }
}

impl std::fmt::Debug for Gemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("Gemini")
            .field("model", &self.inner.model)
            .field("base_url", &crate::error::shown_url(&self.inner.base_url))
            .finish_non_exhaustive()
    }
}

impl Gemini {
    /// The model `model` (for example `gemini-2.5-flash`) with the key from `GOOGLE_API_KEY` or
    /// `GEMINI_API_KEY`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingApiKey`](crate::ErrorKind::MissingApiKey) naming both variables when
    /// neither is set; [`ErrorKind::Config`](crate::ErrorKind::Config) when the key cannot be
    /// sent as a header.
    pub fn new(model: impl Into<String>) -> Result<Self, Error> {
        Self::builder(model).build()
    }

    /// A builder for `model` (for example `gemini-2.5-flash`).
    pub fn builder(model: impl Into<String>) -> GeminiBuilder {
        GeminiBuilder {
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            key_variables: &KEY_VARIABLES,
            http: HttpSettings::default(),
            cache: None,
            clock: Arc::new(SystemClock),
            #[cfg(feature = "vertex")]
            vertex: vertex::VertexSettings::default(),
        }
    }
}

/// Builds a [`Gemini`].
#[derive(Debug)]
pub struct GeminiBuilder {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
    key_variables: &'static [&'static str],
    http: HttpSettings,
    cache: Option<ContextCacheConfig>,
    clock: Arc<dyn Clock>,
    #[cfg(feature = "vertex")]
    vertex: vertex::VertexSettings,
}

http_builder_methods!(GeminiBuilder);

impl GeminiBuilder {
    /// Sets the API key; without it `build` reads `GOOGLE_API_KEY`, then `GEMINI_API_KEY`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// The environment variables `build` reads the key from when none was given, in order
    /// (default `GOOGLE_API_KEY`, then `GEMINI_API_KEY`; empty reads none).
    pub fn env_vars(mut self, variables: &'static [&'static str]) -> Self {
        self.key_variables = variables;
        self
    }

    /// Sets the base URL up to and including the API version
    /// (default `https://generativelanguage.googleapis.com/v1beta`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Caches the stable start of each conversation (the system instruction, the tools and the
    /// history before the newest user turn) as an explicit `cachedContents` resource, reused while
    /// it is valid, made anew when the history no longer starts with it, its ttl runs out or it
    /// served `cache_intervals` calls, and deleted when replaced or when the model is dropped. Off
    /// by default; the API caches implicitly anyway, and explicit caches need a prefix of the
    /// model's minimum size (1,024 to 4,096 tokens).
    pub fn context_cache(mut self, config: ContextCacheConfig) -> Self {
        self.cache = Some(config);
        self
    }

    /// Reads the time from `clock` (for the context cache's expiry) instead of the system's.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The context cache the builder asked for, creating caches under `base` (the URL
    /// `cachedContents` is appended to) for models under `model_path`.
    fn context_cache_for(
        &mut self,
        transport: &Transport,
        headers: &HeaderMap,
        base: &str,
        resource_root: &str,
        model_path: String,
    ) -> Result<Option<context_cache::ContextCache>, Error> {
        let Some(config) = self.cache.take() else {
            return Ok(None);
        };
        let client = context_cache::CacheClient {
            transport: transport.clone(),
            headers: headers.clone(),
            create_url: parse_url(&format!("{base}/cachedContents"))?,
            resource_root: resource_root.to_owned(),
            model_path,
            #[cfg(feature = "vertex")]
            vertex: None,
        };
        Ok(Some(context_cache::ContextCache::new(
            config,
            client,
            Arc::clone(&self.clock),
        )))
    }

    /// Builds the model.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingApiKey`](crate::ErrorKind::MissingApiKey) when no API key was given or
    /// found in the environment; [`ErrorKind::Config`](crate::ErrorKind::Config) when the key is
    /// not a valid header value.
    pub fn build(mut self) -> Result<Gemini, Error> {
        #[cfg(feature = "vertex")]
        if self
            .vertex
            .chosen(self.api_key.is_some(), &vertex::process_env)
        {
            return self.build_vertex(&vertex::process_env);
        }
        let headers = key_headers(self.api_key.take(), self.key_variables)?;
        let endpoints = Endpoints::new(&self.base_url, &self.model)?;
        let transport = Transport::new(self.http.clone(), &endpoints.unary)?;
        let base_url = self.base_url.clone();
        let cache = self.context_cache_for(
            &transport,
            &headers,
            &base_url,
            &base_url,
            "models/".to_owned(),
        )?;
        Ok(Gemini {
            inner: Arc::new(Inner {
                transport,
                model: self.model,
                base_url,
                endpoints,
                headers,
                #[cfg(feature = "vertex")]
                vertex: None,
                cache,
            }),
        })
    }
}

/// The headers carrying the Gemini API key (`x-goog-api-key`, marked sensitive): `api_key`, else
/// the first of `variables` set in the environment.
pub(crate) fn key_headers(api_key: Option<ApiKey>, variables: &[&str]) -> Result<HeaderMap, Error> {
    let key = api_key
        .or_else(|| ApiKey::from_env(variables))
        .ok_or_else(|| Error::missing_api_key("Gemini", variables))?;
    let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
        Error::config("the Gemini API key holds characters a header cannot carry; check it for stray whitespace")
    })?;
    value.set_sensitive(true);
    let mut headers = HeaderMap::new();
    headers.insert("x-goog-api-key", value);
    Ok(headers)
}

impl Llm for Gemini {
    fn name(&self) -> &str {
        &self.inner.model
    }

    fn generate(&self, request: LlmRequest, mode: StreamingMode) -> LlmResponseStream {
        let stream = mode.is_streaming();
        // Without a context cache the body is written before the stream starts, so that the stream
        // holds it and not the request for as long as the call takes; with one, the body depends
        // on the cache, which the stream asks for first.
        let (prepared, cached_request) = if self.inner.cache.is_some() {
            (None, Some(request))
        } else {
            (Some(self.prepare(&request, None)), None)
        };
        let model = self.clone();
        let inner = Arc::clone(&self.inner);
        let responses = async_stream::stream! {
            let prepared = match (prepared, cached_request, &inner.cache) {
                (Some(prepared), _, _) => prepared,
                (None, Some(request), Some(cache)) => {
                    let name = if request.model.is_empty() { &inner.model } else { &request.model };
                    match cache.prefix_for(name, &request).await {
                        Ok(prefix) => model.prepare(&request, prefix.as_ref()),
                        Err(error) => Err(error),
                    }
                }
                _ => Err(Error::config("the request was lost before it was sent")),
            };
            let (other, body) = match prepared {
                Ok(prepared) => prepared,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let endpoints = other.as_deref().unwrap_or(&inner.endpoints);
            let url = endpoints.get(stream);
            let response = match inner.post(url, body).await {
                Ok(response) => response,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            if !stream {
                yield read_whole(&inner.transport, response, url.as_str()).await;
                return;
            }
            let mut state = stream::StreamState::default();
            let mut events = std::pin::pin!(crate::sse::sse_data(
                response.bytes_stream(),
                inner.transport.max_event_bytes(),
            ));
            while let Some(event) = events.next().await {
                let partial = event.and_then(|data| state.push(&data));
                match partial {
                    Ok(Some(partial)) => yield Ok(partial),
                    Ok(None) => {}
                    Err(error) => {
                        yield Err(error);
                        return;
                    }
                }
            }
            yield state.finish();
        };
        responses
            .map(|response| response.map_err(adk_core::Error::from))
            .boxed()
    }
}

impl Inner {
    /// Posts `body` to `url` with the API key, or on Vertex AI with an access token: a token the
    /// API refuses (401) is fetched anew once, and a refusal of the new one is an
    /// [`ErrorKind::Auth`](crate::ErrorKind::Auth) error.
    async fn post(
        &self,
        url: &reqwest::Url,
        body: bytes::Bytes,
    ) -> Result<reqwest::Response, Error> {
        #[cfg(feature = "vertex")]
        if let Some(credentials) = &self.vertex {
            return vertex::post(&self.transport, credentials, &self.headers, url, body).await;
        }
        self.transport.post(url, &self.headers, body).await
    }
}

impl Gemini {
    /// The endpoints of a request for another model than this one's (`None` for this one's), and
    /// the request's body.
    fn prepare(
        &self,
        request: &LlmRequest,
        cached: Option<&request::CachedPrefix>,
    ) -> Result<(Option<Box<Endpoints>>, bytes::Bytes), Error> {
        let inner = &self.inner;
        let other = if request.model.is_empty() || request.model == inner.model {
            None
        } else {
            Some(Box::new(Endpoints::new(&inner.base_url, &request.model)?))
        };
        Ok((other, request::build(request, cached)?))
    }
}

async fn read_whole(
    transport: &Transport,
    response: reqwest::Response,
    url: &str,
) -> Result<adk_core::LlmResponse, Error> {
    let text = transport.read_body(response, url).await?;
    Ok(response::parse(&text)?.into_llm_response())
}
