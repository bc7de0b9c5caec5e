//! [`GeminiEmbedder`]: Gemini's `models/{m}:embedContent` for one text and
//! `models/{m}:batchEmbedContents` for several.

use std::sync::Arc;

use adk_core::Embedder;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{DEFAULT_MAX_BATCH, check_batch};
use crate::error::Error;
use crate::gemini::{DEFAULT_BASE_URL, KEY_VARIABLES, key_headers};
use crate::http::{HttpSettings, Transport, http_builder_methods, parse_url};
use crate::secret::ApiKey;

/// An embedding model of the Gemini API (generativelanguage), such as `gemini-embedding-001` or
/// `text-embedding-004`.
///
/// One text goes to `embedContent`; several go to `batchEmbedContents`, at most
/// [`max_batch`](GeminiEmbedderBuilder::max_batch) (default 100, the API's limit) per request.
///
/// ```
/// use adk_model::GeminiEmbedder;
///
/// let embedder = GeminiEmbedder::builder("gemini-embedding-001")
///     .api_key("my-key")
///     .task_type("RETRIEVAL_DOCUMENT")
///     .output_dimensionality(768)
///     .build()?;
/// assert_eq!(adk_core::Embedder::dimensions(&embedder), Some(768));
/// # Ok::<(), adk_model::Error>(())
/// ```
#[derive(Clone)]
pub struct GeminiEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    task_type: Option<String>,
    dimensions: Option<usize>,
    max_batch: usize,
    single: reqwest::Url,
    batch: reqwest::Url,
    headers: HeaderMap,
    transport: Transport,
}

impl std::fmt::Debug for GeminiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the API key, so they are not shown.
        f.debug_struct("GeminiEmbedder")
            .field("model", &self.inner.model)
            .field("url", &crate::error::shown_url(self.inner.batch.as_str()))
            .finish_non_exhaustive()
    }
}

impl GeminiEmbedder {
    /// A builder for `model` (for example `gemini-embedding-001`). Like
    /// [`Gemini`](crate::Gemini), it reads `GOOGLE_API_KEY`, then `GEMINI_API_KEY`, when the
    /// builder gives no key.
    pub fn builder(model: impl Into<String>) -> GeminiEmbedderBuilder {
        GeminiEmbedderBuilder {
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            key_variables: &KEY_VARIABLES,
            task_type: None,
            dimensions: None,
            max_batch: DEFAULT_MAX_BATCH,
            http: HttpSettings::default(),
        }
    }

    /// One `EmbedContentRequest` for `text`.
    fn request(&self, text: &str) -> Value {
        let inner = &*self.inner;
        let mut request = json!({
            "model": format!("models/{}", inner.model),
            "content": {"parts": [{"text": text}]},
        });
        if let Some(task_type) = &inner.task_type {
            request["taskType"] = task_type.as_str().into();
        }
        if let Some(dimensions) = inner.dimensions {
            request["outputDimensionality"] = dimensions.into();
        }
        request
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let inner = &*self.inner;
        let (url, body) = match texts {
            [text] => (&inner.single, self.request(text)),
            _ => (
                &inner.batch,
                json!({"requests": texts.iter().map(|text| self.request(text)).collect::<Vec<_>>()}),
            ),
        };
        let body = serde_json::to_vec(&body)
            .map_err(|error| Error::config(format!("could not write the request: {error}")))?;
        let response = inner
            .transport
            .post(url, &inner.headers, body.into())
            .await?;
        let text = inner.transport.read_body(response, url.as_str()).await?;
        let vectors: Vec<Vec<f32>> = if texts.len() == 1 {
            let answer: Single = serde_json::from_str(&text)
                .map_err(|error| Error::decode("the embedContent answer", error, &text))?;
            vec![answer.embedding.values]
        } else {
            let answer: Batch = serde_json::from_str(&text)
                .map_err(|error| Error::decode("the batchEmbedContents answer", error, &text))?;
            answer
                .embeddings
                .into_iter()
                .map(|embedding| embedding.values)
                .collect()
        };
        check_batch(url.as_str(), texts.len(), inner.dimensions, &vectors)?;
        Ok(vectors)
    }
}

/// `embedContent`'s answer.
#[derive(Deserialize)]
struct Single {
    embedding: Values,
}

/// `batchEmbedContents`' answer: the vectors in the order of the requests.
#[derive(Deserialize)]
struct Batch {
    embeddings: Vec<Values>,
}

/// A `ContentEmbedding`.
#[derive(Deserialize)]
struct Values {
    values: Vec<f32>,
}

#[async_trait::async_trait]
impl Embedder for GeminiEmbedder {
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

/// Builds a [`GeminiEmbedder`].
#[derive(Debug)]
pub struct GeminiEmbedderBuilder {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
    key_variables: &'static [&'static str],
    task_type: Option<String>,
    dimensions: Option<usize>,
    max_batch: usize,
    http: HttpSettings,
}

http_builder_methods!(GeminiEmbedderBuilder);

impl GeminiEmbedderBuilder {
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

    /// Sets the `taskType` sent with every text (`RETRIEVAL_DOCUMENT`, `RETRIEVAL_QUERY`,
    /// `SEMANTIC_SIMILARITY`, ...); none by default.
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.task_type = Some(task_type.into());
        self
    }

    /// Asks for vectors of `dimensions` numbers (`outputDimensionality`) and checks each answer
    /// against it.
    pub fn output_dimensionality(mut self, dimensions: usize) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Sets how many texts one request carries at most (default 100, the API's limit; at least 1).
    pub fn max_batch(mut self, texts: usize) -> Self {
        self.max_batch = texts.max(1);
        self
    }

    /// Builds the embedder.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::MissingApiKey`] when no key was given or found in the environment;
    /// [`crate::ErrorKind::Config`] when the key or the URL is malformed.
    pub fn build(self) -> Result<GeminiEmbedder, Error> {
        let headers = key_headers(self.api_key, self.key_variables)?;
        let base = format!("{}/models/{}", self.base_url, self.model);
        let single = parse_url(&format!("{base}:embedContent"))?;
        let batch = parse_url(&format!("{base}:batchEmbedContents"))?;
        Ok(GeminiEmbedder {
            inner: Arc::new(Inner {
                model: self.model,
                task_type: self.task_type,
                dimensions: self.dimensions,
                max_batch: self.max_batch,
                transport: Transport::new(self.http, &batch)?,
                single,
                batch,
                headers,
            }),
        })
    }
}
