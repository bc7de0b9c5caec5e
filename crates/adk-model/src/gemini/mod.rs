//! The Gemini adapter: [`Gemini`] speaks the generativelanguage REST API
//! (`models/{m}:generateContent` and `models/{m}:streamGenerateContent?alt=sse`).

mod request;
mod response;
mod stream;

use std::sync::Arc;

use adk_core::{Llm, LlmRequest, LlmResponseStream, StreamingMode};
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::error::Error;
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

/// The default base URL, up to and including the API version.
const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The environment variables read for the API key, in order.
const KEY_VARIABLES: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];

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
    base_url: String,
    /// The two endpoints of the builder's model, parsed once; a request naming another model
    /// builds its own.
    endpoints: Endpoints,
    headers: HeaderMap,
    transport: Transport,
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

    /// Builds the model.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingApiKey`](crate::ErrorKind::MissingApiKey) when no API key was given or
    /// found in the environment; [`ErrorKind::Config`](crate::ErrorKind::Config) when the key is
    /// not a valid header value.
    pub fn build(self) -> Result<Gemini, Error> {
        let variables = self.key_variables;
        let key = self
            .api_key
            .or_else(|| ApiKey::from_env(variables))
            .ok_or_else(|| Error::missing_api_key("Gemini", variables))?;
        let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
            Error::config("the Gemini API key holds characters a header cannot carry; check it for stray whitespace")
        })?;
        value.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert("x-goog-api-key", value);
        let endpoints = Endpoints::new(&self.base_url, &self.model)?;
        Ok(Gemini {
            inner: Arc::new(Inner {
                transport: Transport::new(self.http, &endpoints.unary)?,
                model: self.model,
                base_url: self.base_url,
                endpoints,
                headers,
            }),
        })
    }
}

impl Llm for Gemini {
    fn name(&self) -> &str {
        &self.inner.model
    }

    fn generate(&self, request: LlmRequest, mode: StreamingMode) -> LlmResponseStream {
        let stream = mode.is_streaming();
        // The body is written before the stream starts, so that the stream holds it and not the
        // request for as long as the call takes.
        let prepared = self.prepare(&request);
        let inner = Arc::clone(&self.inner);
        let responses = async_stream::stream! {
            let (other, body) = match prepared {
                Ok(prepared) => prepared,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let endpoints = other.as_deref().unwrap_or(&inner.endpoints);
            let url = endpoints.get(stream);
            let response = match inner.transport.post(url, &inner.headers, body).await {
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

impl Gemini {
    /// The endpoints of a request for another model than this one's (`None` for this one's), and
    /// the request's body.
    fn prepare(
        &self,
        request: &LlmRequest,
    ) -> Result<(Option<Box<Endpoints>>, bytes::Bytes), Error> {
        let inner = &self.inner;
        let other = if request.model.is_empty() || request.model == inner.model {
            None
        } else {
            Some(Box::new(Endpoints::new(&inner.base_url, &request.model)?))
        };
        Ok((other, request::build(request)?))
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
