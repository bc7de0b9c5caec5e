//! Gemini's explicit context caching: the long stable start of a conversation (the system
//! instruction, the tools and the history before the newest user turn) stored once as a
//! `cachedContents` resource, and each later call sending only what follows it.
//!
//! One cache per model: reused while it is valid (the request still starts with the cached
//! contents, the ttl has not run out, it served fewer than `cache_intervals` calls), made anew
//! over the longer prefix otherwise, and deleted when it is replaced or the model is dropped.

use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use adk_core::{Clock, Content, LlmRequest, Role};
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::request::{CachedPrefix, cached_parts};
use crate::cache::{ContextCacheConfig, estimated_tokens};
use crate::error::{Error, ErrorKind};
use crate::http::{Transport, parse_url};

/// A cache is made anew when it has less than this left, so that no call names one that expires
/// on the way.
const EXPIRY_MARGIN_SECONDS: f64 = 60.0;

/// Where the adapter creates and deletes caches, and with which credentials.
pub(super) struct CacheClient {
    pub(super) transport: Transport,
    pub(super) headers: HeaderMap,
    /// `{base}/cachedContents`.
    pub(super) create_url: reqwest::Url,
    /// What a cache's name (`cachedContents/...`, `projects/.../cachedContents/...`) is appended
    /// to for its URL.
    pub(super) resource_root: String,
    /// What a model's name is appended to for its resource name (`models/`,
    /// `projects/p/locations/l/publishers/google/models/`).
    pub(super) model_path: String,
    #[cfg(feature = "vertex")]
    pub(super) vertex: Option<super::credentials::GoogleCredentials>,
}

impl CacheClient {
    async fn headers(&self) -> Result<HeaderMap, Error> {
        #[cfg(feature = "vertex")]
        if let Some(credentials) = &self.vertex {
            let token = credentials.token(self.transport.client()).await?;
            return super::vertex::with_token(&self.headers, &token);
        }
        Ok(self.headers.clone())
    }

    async fn create(&self, body: &Value) -> Result<String, Error> {
        #[derive(Deserialize)]
        struct Created {
            name: String,
        }
        let headers = self.headers().await?;
        let body = bytes::Bytes::from(body.to_string());
        let response = self
            .transport
            .post(&self.create_url, &headers, body)
            .await?;
        let text = self
            .transport
            .read_body(response, self.create_url.as_str())
            .await?;
        let created: Created = serde_json::from_str(&text)
            .map_err(|error| Error::decode("a created cachedContents resource", error, &text))?;
        Ok(created.name)
    }

    /// Deletes cache `name`; a cache that cannot be deleted expires at its ttl anyway.
    async fn delete(&self, name: &str) {
        let Ok(url) = parse_url(&format!("{}/{name}", self.resource_root)) else {
            return;
        };
        if let Ok(headers) = self.headers().await {
            let _ = self.transport.delete(&url, &headers).await;
        }
    }
}

struct Entry {
    prefix: CachedPrefix,
    fingerprint: u64,
    expires_at: f64,
    uses: u32,
}

/// The model's one cache and the policy it follows.
pub(super) struct ContextCache {
    config: ContextCacheConfig,
    client: Arc<CacheClient>,
    clock: Arc<dyn Clock>,
    entry: tokio::sync::Mutex<Option<Entry>>,
}

impl ContextCache {
    pub(super) fn new(
        config: ContextCacheConfig,
        client: CacheClient,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            config,
            client: Arc::new(client),
            clock,
            entry: tokio::sync::Mutex::new(None),
        }
    }

    /// Makes the caches' calls with Vertex AI access tokens from `credentials`.
    #[cfg(feature = "vertex")]
    pub(super) fn set_credentials(&mut self, credentials: super::credentials::GoogleCredentials) {
        if let Some(client) = Arc::get_mut(&mut self.client) {
            client.vertex = Some(credentials);
        }
    }

    /// The cache `request` can use, made or made anew when needed; `None` when its stable
    /// prefix is too short to be worth caching.
    pub(super) async fn prefix_for(
        &self,
        model: &str,
        request: &LlmRequest,
    ) -> Result<Option<CachedPrefix>, Error> {
        let mut entry = self.entry.lock().await;
        let now = self.clock.now();
        if let Some(current) = entry.as_mut() {
            let still_valid = current.prefix.contents <= stable_contents(&request.contents)
                && current.expires_at - now > EXPIRY_MARGIN_SECONDS
                && current.uses < self.config.cache_intervals
                && fingerprint(model, request, current.prefix.contents) == current.fingerprint;
            if still_valid {
                current.uses += 1;
                return Ok(Some(current.prefix.clone()));
            }
        }
        // The old cache goes, whether or not a new one is made.
        if let Some(old) = entry.take() {
            self.client.delete(&old.prefix.name).await;
        }
        let contents = stable_contents(&request.contents);
        let body = self.create_body(model, request, contents);
        if contents == 0
            && request
                .system_instruction
                .as_deref()
                .is_none_or(str::is_empty)
        {
            return Ok(None);
        }
        let chars = body.to_string().len();
        if estimated_tokens(chars) < u64::from(self.config.min_tokens) {
            return Ok(None);
        }
        let name = self.client.create(&body).await.map_err(|error| {
            let message = format!(
                "could not create the context cache ({error}); turn context caching off or check that the model supports it"
            );
            Error::new(ErrorKind::Provider, message).with_source(error)
        })?;
        let prefix = CachedPrefix { name, contents };
        *entry = Some(Entry {
            prefix: prefix.clone(),
            fingerprint: fingerprint(model, request, contents),
            expires_at: now + self.config.ttl.as_secs_f64(),
            uses: 1,
        });
        Ok(Some(prefix))
    }

    fn create_body(&self, model: &str, request: &LlmRequest, contents: usize) -> Value {
        let mut body = json!({
            "model": format!("{}{}", self.client.model_path, model.trim_start_matches("models/")),
            "contents": &request.contents[..contents],
            "ttl": format!("{}s", self.config.ttl.as_secs().max(1)),
        });
        for (key, value) in cached_parts(request) {
            body[key] = value;
        }
        body
    }
}

impl Drop for ContextCache {
    /// Deletes the cache when the model goes, when a runtime is there to do it.
    fn drop(&mut self) {
        let Some(entry) = self.entry.get_mut().take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let client = Arc::clone(&self.client);
            runtime.spawn(async move { client.delete(&entry.prefix.name).await });
        }
    }
}

/// How many of `contents` are stable: all but the newest user turn (the last user content and
/// what follows it).
fn stable_contents(contents: &[Content]) -> usize {
    contents
        .iter()
        .rposition(|content| content.role != Some(Role::Model))
        .unwrap_or(0)
}

/// A hash of what a cache over the first `contents` contents of `request` holds.
fn fingerprint(model: &str, request: &LlmRequest, contents: usize) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    model.hash(&mut hasher);
    for (key, value) in cached_parts(request) {
        key.hash(&mut hasher);
        value.to_string().hash(&mut hasher);
    }
    for content in request.contents.iter().take(contents) {
        serde_json::to_string(content)
            .unwrap_or_default()
            .hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_user_turn_is_not_stable() {
        let history = [
            Content::user("a"),
            Content::model("b"),
            Content::user("c"),
            Content::model("d"),
        ];
        assert_eq!(stable_contents(&history), 2);
        assert_eq!(stable_contents(&history[..3]), 2);
        assert_eq!(stable_contents(&history[..1]), 0);
    }
}
