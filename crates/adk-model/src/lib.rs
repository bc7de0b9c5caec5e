#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
// With no adapter enabled only the shared pieces remain, and their crate-internal helpers have no
// caller.
#![cfg_attr(
    not(any(feature = "gemini", feature = "openai", feature = "anthropic")),
    allow(dead_code)
)]

#[cfg(feature = "anthropic")]
mod anthropic;
mod cache;
#[cfg(any(feature = "gemini", feature = "openai"))]
mod embed;
mod error;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod exchange;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(any(feature = "gemini", feature = "openai", feature = "anthropic"))]
mod http;
#[cfg(feature = "openai")]
mod openai;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod parts;
#[cfg(any(feature = "gemini", feature = "openai", feature = "anthropic"))]
mod provider_data;
#[cfg(feature = "openai")]
mod responses;
mod retry;
mod secret;
mod sse;

#[cfg(feature = "anthropic")]
pub use anthropic::{Anthropic, AnthropicBuilder};
pub use cache::{CacheMode, ContextCacheConfig};
#[cfg(feature = "gemini")]
pub use embed::{GeminiEmbedder, GeminiEmbedderBuilder};
#[cfg(feature = "openai")]
pub use embed::{OpenAiEmbedder, OpenAiEmbedderBuilder};
pub use error::{Error, ErrorKind};
#[cfg(feature = "vertex")]
pub use gemini::GoogleCredentials;
#[cfg(feature = "gemini")]
pub use gemini::{Gemini, GeminiBuilder};
#[cfg(feature = "openai")]
pub use openai::{OpenAi, OpenAiBuilder, RAW_ARGUMENTS_KEY};
#[cfg(feature = "openai")]
pub use responses::{OpenAiResponses, OpenAiResponsesBuilder};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
// For the crate's benchmarks only: not part of the API.
#[doc(hidden)]
pub use sse::sse_data;
