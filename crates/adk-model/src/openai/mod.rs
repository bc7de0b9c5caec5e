//! The OpenAI Chat Completions adapter: [`OpenAi`] speaks `POST {base}/chat/completions`, the
//! API that OpenAI and every OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter) share.
//! For servers and models without native tool calls, [`OpenAiBuilder::prompted_tools`] describes
//! the tools in the prompt and constrains the answer with a JSON schema (`prompted.rs`).

mod prompted;
mod request;
mod response;
mod stream;

use std::sync::Arc;

use adk_core::{Llm, LlmRequest, LlmResponse, LlmResponseStream, StreamingMode};
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::Error;
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

pub use response::RAW_ARGUMENTS_KEY;

/// OpenAI's own base URL, used when neither the builder nor `OPENAI_BASE_URL` gives one.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind the OpenAI Chat Completions API.
///
/// [`OpenAi::new`] reads the key from `OPENAI_API_KEY` and the server from `OPENAI_BASE_URL`
/// (OpenAI's own API when unset), as OpenAI's SDKs do; [`OpenAi::builder`] sets them explicitly.
/// Making the model sends nothing: the first request goes out when an agent calls it.
///
/// ```
/// // A local vLLM or llama.cpp server needs no key.
/// let model = adk_model::OpenAi::builder("qwen2.5-0.5b-instruct")
///     .base_url("http://127.0.0.1:8000/v1")
///     .build()?;
/// assert_eq!(adk_core::Llm::name(&model), "qwen2.5-0.5b-instruct");
/// # Ok::<(), adk_model::Error>(())
/// ```
#[derive(Clone)]
pub struct OpenAi {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    url: reqwest::Url,
    headers: HeaderMap,
    options: request::Options,
    transport: Transport,
}

impl std::fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("OpenAi")
            .field("model", &self.inner.model)
            .field("url", &crate::error::shown_url(self.inner.url.as_str()))
            .finish_non_exhaustive()
    }
}

impl OpenAi {
    /// The model `model` (for example `gpt-4o-mini`) on the server `OPENAI_BASE_URL` names
    /// (OpenAI's own API when unset), with the key from `OPENAI_API_KEY`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingApiKey`](crate::ErrorKind::MissingApiKey) naming `OPENAI_API_KEY`
    /// when OpenAI's own API is used without a key; [`ErrorKind::Config`](crate::ErrorKind::Config)
    /// when the key or the URL is malformed.
    pub fn new(model: impl Into<String>) -> Result<Self, Error> {
        Self::builder(model).build()
    }

    /// A builder for `model` (for example `gpt-4o-mini`).
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            model: model.into(),
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            options: request::Options::default(),
            http: HttpSettings::default(),
        }
    }
}

/// Builds an [`OpenAi`]. Its `Debug` output names the extra headers without their values,
/// which may be credentials.
pub struct OpenAiBuilder {
    model: String,
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
    options: request::Options,
    http: HttpSettings,
}

http_builder_methods!(OpenAiBuilder);

impl std::fmt::Debug for OpenAiBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("OpenAiBuilder")
            .field("model", &self.model)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::error::shown_url),
            )
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl OpenAiBuilder {
    /// Sets the API key, sent as `Authorization: Bearer`; without it `build` reads
    /// `OPENAI_API_KEY`. A server at another base URL may need none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// Sets the base URL, up to `/chat/completions` (for example `http://127.0.0.1:8000/v1`);
    /// without it `build` reads `OPENAI_BASE_URL`, then uses `https://api.openai.com/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Adds a header sent with every request (`OpenAI-Organization`, `HTTP-Referer`, ...).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Marks every function declaration `"strict": true`, so the model's arguments follow the
    /// schema exactly (the schema must then meet OpenAI's strict-mode rules). Off by default.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.options.strict_tools = strict;
        self
    }

    /// Turns on prompted tool calling, for servers and models without native tool calls (a
    /// llama.cpp server with a small model, say). Off by default.
    ///
    /// Instead of `tools`, the request describes the tools in the system instruction and
    /// constrains the answer with a `response_format` JSON schema: a `oneOf` of one
    /// `{"tool": <name>, "args": <parameters>}` shape per tool and a final `{"answer": <text>}`
    /// shape. The JSON that comes back is turned into ordinary function calls and text, streamed
    /// answers stream their text, and function responses go back as user messages, so the rest of
    /// adk-rs cannot tell the difference. The server must enforce `response_format` schemas
    /// (llama.cpp and vLLM do, with a grammar).
    pub fn prompted_tools(mut self, prompted: bool) -> Self {
        self.options.prompted_tools = prompted;
        self
    }

    /// Sends a response schema with `"strict": true` (default `false`).
    pub fn strict_response_schema(mut self, strict: bool) -> Self {
        self.options.strict_response_schema = strict;
        self
    }

    /// Builds the model.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::MissingApiKey`] when OpenAI's own URL is used without a key;
    /// [`crate::ErrorKind::Config`] when a header or the key cannot be sent as a header.
    pub fn build(self) -> Result<OpenAi, Error> {
        let (base_url, headers) = connection(self.base_url, self.api_key, self.headers)?;
        let url = parse_url(&format!("{base_url}/chat/completions"))?;
        Ok(OpenAi {
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

/// The base URL (the builder's, else `OPENAI_BASE_URL`, else OpenAI's own, without a trailing
/// slash) and the headers of every request (the key as `Authorization: Bearer`, else
/// `OPENAI_API_KEY`'s, and the extra headers, all marked sensitive), shared by every adapter of an
/// OpenAI-compatible API.
pub(crate) fn connection(
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    extra_headers: Vec<(String, String)>,
) -> Result<(String, HeaderMap), Error> {
    let base_url = base_url
        .or_else(|| {
            std::env::var("OPENAI_BASE_URL")
                .ok()
                .filter(|url| !url.trim().is_empty())
        })
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
    let base_url = base_url.trim().trim_end_matches('/').to_owned();
    let key = api_key.or_else(|| ApiKey::from_env(&["OPENAI_API_KEY"]));
    let mut headers = HeaderMap::new();
    match key {
        Some(key) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                Error::config("the OpenAI API key holds characters a header cannot carry; check it for stray whitespace")
            })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        None if base_url == DEFAULT_BASE_URL => {
            return Err(Error::missing_api_key("OpenAI", &["OPENAI_API_KEY"]));
        }
        None => {}
    }
    for (name, value) in extra_headers {
        let (name, mut value) = HeaderName::try_from(name.as_str())
            .ok()
            .zip(HeaderValue::try_from(value.as_str()).ok())
            .ok_or_else(|| {
                Error::config(format!(
                    "the extra header `{name}` is not a valid HTTP header; fix its name or value"
                ))
            })?;
        // An extra header may carry a credential (an Azure `api-key`, a proxy's token): it is
        // kept out of Debug output and scrubbed from error messages like the API key.
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok((base_url, headers))
}

impl Llm for OpenAi {
    fn name(&self) -> &str {
        &self.inner.model
    }

    fn generate(&self, request: LlmRequest, mode: StreamingMode) -> LlmResponseStream {
        let stream = mode.is_streaming();
        let inner = Arc::clone(&self.inner);
        let responses = if inner.options.prompted_tools {
            prompted::generate(inner, request, stream).boxed()
        } else {
            inner.send(request, stream).boxed()
        };
        responses
            .map(|response| response.map_err(adk_core::Error::from))
            .boxed()
    }
}

impl Inner {
    /// Sends `request` and yields what comes back: when streaming, partial responses with text
    /// deltas, then the whole response.
    fn send(
        self: &Arc<Self>,
        request: LlmRequest,
        stream: bool,
    ) -> impl futures::Stream<Item = Result<LlmResponse, Error>> + Send + 'static {
        let inner = Arc::clone(self);
        // The body is written before the stream starts, so that the stream holds it and not the
        // request for as long as the call takes.
        let model = if request.model.is_empty() {
            inner.model.as_str()
        } else {
            request.model.as_str()
        };
        let body = request::build(&request, model, stream, &inner.options);
        async_stream::stream! {
            let body = match body {
                Ok(body) => body,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let response = match inner.transport.post(&inner.url, &inner.headers, body).await {
                Ok(response) => response,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            if !stream {
                yield match inner.transport.read_body(response, inner.url.as_str()).await {
                    Ok(text) => response::parse(&text),
                    Err(error) => Err(error),
                };
                return;
            }
            let mut state = stream::StreamState::default();
            let mut events = std::pin::pin!(crate::sse::sse_data(
                response.bytes_stream(),
                inner.transport.max_event_bytes(),
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

    /// Sends `request` without streaming and returns the response.
    async fn complete(self: &Arc<Self>, request: LlmRequest) -> Result<LlmResponse, Error> {
        let mut responses = std::pin::pin!(self.send(request, false));
        let mut last = None;
        while let Some(response) = responses.next().await {
            last = Some(response?);
        }
        last.ok_or_else(|| {
            Error::new(
                crate::error::ErrorKind::Provider,
                "the server sent no answer",
            )
        })
    }
}
