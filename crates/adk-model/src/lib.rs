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
pub use error::{Error, ErrorKind};
#[cfg(feature = "vertex")]
pub use gemini::GoogleCredentials;
#[cfg(feature = "gemini")]
pub use gemini::{GeminiBuilder, GeminiModel};
#[cfg(feature = "openai")]
pub use openai::{OpenAiBuilder, OpenAiModel, RAW_ARGUMENTS_KEY};
#[cfg(feature = "openai")]
pub use responses::{OpenAiResponses, OpenAiResponsesBuilder};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use sse::sse_data;
