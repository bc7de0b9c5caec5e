//! [`OpenAiEmbedder`]: `POST {base}/embeddings` of OpenAI and every OpenAI-compatible server.

use std::sync::Arc;

use adk_core::Embedder;
use reqwest::header::HeaderMap;
use serde::Deserialize;

use super::{DEFAULT_MAX_BATCH, check_batch};
use crate::error::Error;
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

/// An embedding model behind the OpenAI embeddings API: OpenAI's `text-embedding-3-small`, or any
/// model a llama.cpp server (started with `--embeddings`), vLLM or Ollama serves.
///
/// Texts go out in batches of at most [`max_batch`](OpenAiEmbedderBuilder::max_batch) per
/// request, as `{"model", "input": [...], "encoding_format": "float"}`; the answer's vectors are put
/// back in the order of their `index`.
///
/// ```
/// let embedder = adk_model::OpenAiEmbedder::builder("nomic-embed-text")
///     .base_url("http://127.0.0.1:8080/v1")
///     .dimensions(768)
///     .build()?;
/// assert_eq!(adk_core::Embedder::model(&embedder), "nomic-embed-text");
/// # Ok::<(), adk_model::Error>(())
/// ```
#[derive(Clone)]
pub struct OpenAiEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    dimensions: Option<usize>,
    send_dimensions: bool,
    max_batch: usize,
    url: reqwest::Url,
    headers: HeaderMap,
    transport: Transport,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("OpenAiEmbedder")
            .field("model", &self.inner.model)
            .field("url", &crate::error::shown_url(self.inner.url.as_str()))
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// A builder for `model` (for example `text-embedding-3-small`). Like
    /// [`OpenAi`](crate::OpenAi), it reads `OPENAI_API_KEY` and `OPENAI_BASE_URL` when the builder
    /// sets neither.
    pub fn builder(model: impl Into<String>) -> OpenAiEmbedderBuilder {
        OpenAiEmbedderBuilder {
            model: model.into(),
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            dimensions: None,
            send_dimensions: false,
            max_batch: DEFAULT_MAX_BATCH,
            http: HttpSettings::default(),
        }
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let inner = &*self.inner;
        let mut body = serde_json::json!({
            "model": inner.model,
            "input": texts,
            "encoding_format": "float",
        });
        if inner.send_dimensions
            && let Some(dimensions) = inner.dimensions
        {
            body["dimensions"] = dimensions.into();
        }
        let url = inner.url.as_str();
        let body = serde_json::to_vec(&body)
            .map_err(|error| Error::config(format!("could not write the request: {error}")))?;
        let response = inner
            .transport
            .post(&inner.url, &inner.headers, body.into())
            .await?;
        let text = inner.transport.read_body(response, url).await?;
        let answer: Answer = serde_json::from_str(&text)
            .map_err(|error| Error::decode("the embeddings answer", error, &text))?;
        let mut data = answer.data;
        data.sort_by_key(|item| item.index);
        if data
            .iter()
            .enumerate()
            .any(|(position, item)| item.index != position)
        {
            return Err(Error::new(
                crate::ErrorKind::Decode,
                format!(
                    "{} answered vectors whose indexes are not 0 to {}; check the server",
                    crate::error::shown_url(url),
                    texts.len().saturating_sub(1)
                ),
            ));
        }
        let vectors: Vec<Vec<f32>> = data.into_iter().map(|item| item.embedding).collect();
        check_batch(url, texts.len(), inner.dimensions, &vectors)?;
        Ok(vectors)
    }
}

/// The part of the embeddings answer read: the vectors and their positions.
#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.inner.model
    }

    fn dimensions(&self) -> Option<usize> {
        self.inner.dimensions
    }

    async fn embed(&self, texts: &[String]) -> adk_core::Result<Vec<Vec<f32>>> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.inner.max_batch) {
            vectors.extend(self.embed_batch(batch).await?);
        }
        Ok(vectors)
    }
}

/// Builds an [`OpenAiEmbedder`]. Its `Debug` output names the extra headers without their values.
pub struct OpenAiEmbedderBuilder {
    model: String,
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
    dimensions: Option<usize>,
    send_dimensions: bool,
    max_batch: usize,
    http: HttpSettings,
}

http_builder_methods!(OpenAiEmbedderBuilder);

impl std::fmt::Debug for OpenAiEmbedderBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("OpenAiEmbedderBuilder")
            .field("model", &self.model)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::error::shown_url),
            )
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("dimensions", &self.dimensions)
            .field("max_batch", &self.max_batch)
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedderBuilder {
    /// Sets the API key, sent as `Authorization: Bearer`; without it `build` reads
    /// `OPENAI_API_KEY`. A server at another base URL may need none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// Sets the base URL, up to `/embeddings` (for example `http://127.0.0.1:8080/v1`); without it
    /// `build` reads `OPENAI_BASE_URL`, then uses `https://api.openai.com/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Adds a header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// States how many numbers each vector has. Every answer is checked against it; the number is
    /// not sent (servers other than OpenAI's refuse the field), unless
    /// [`shorten_to_dimensions`](Self::shorten_to_dimensions) asks for it.
    pub fn dimensions(mut self, dimensions: usize) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Sends `dimensions` in each request, so that a model that can shorten its vectors
    /// (OpenAI's `text-embedding-3-*`) answers with that many numbers. Off by default.
    pub fn shorten_to_dimensions(mut self, send: bool) -> Self {
        self.send_dimensions = send;
        self
    }

    /// Sets how many texts one request carries at most (default 100, at least 1).
    pub fn max_batch(mut self, texts: usize) -> Self {
        self.max_batch = texts.max(1);
        self
    }

    /// Builds the embedder.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::MissingApiKey`] when OpenAI's own URL is used without a key;
    /// [`crate::ErrorKind::Config`] when a header, the key or the URL is malformed.
    pub fn build(self) -> Result<OpenAiEmbedder, Error> {
        let (base_url, headers) =
            crate::openai::connection(self.base_url, self.api_key, self.headers)?;
        let url = parse_url(&format!("{base_url}/embeddings"))?;
        Ok(OpenAiEmbedder {
            inner: Arc::new(Inner {
                model: self.model,
                dimensions: self.dimensions,
                send_dimensions: self.send_dimensions,
                max_batch: self.max_batch,
                transport: Transport::new(self.http, &url)?,
                url,
                headers,
            }),
        })
    }
}
