//! Model adapters for adk-rs: each implements [`adk_core::Llm`] over a provider's real HTTP wire
//! format.
//!
//! | feature  | adapter | endpoint |
//! |----------|---------|----------|
//! | `gemini` | [`GeminiModel`] | generativelanguage `models/{m}:generateContent` and `:streamGenerateContent?alt=sse` |
//! | `openai` | [`OpenAiModel`] | Chat Completions `POST {base}/chat/completions`, also for vLLM, llama.cpp, Ollama, OpenRouter |
//!
//! Both share one transport ([`RetryPolicy`], a per-request timeout, `TCP_NODELAY`, a connection
//! pool that drops idle connections after 4 s, before common servers close them) and one error
//! type ([`Error`], converted into an [`adk_core::Error`] of kind `Model` at the `Llm` boundary with
//! this error as its source, so callers can downcast to read the HTTP status and body).
//!
//! Streaming yields partial responses (`partial: Some(true)`) holding text deltas as they arrive,
//! then one aggregated final response (`partial: Some(false)`) holding every part, the finish reason
//! and the usage. A call is retried only before its response has yielded anything, and dropping the
//! stream cancels the call. Provider wire structs stay private to their module: the rest of adk-rs
//! sees only `adk_core` types.

// With neither adapter enabled only the shared pieces remain, and their crate-internal helpers
// have no caller.
#![cfg_attr(not(any(feature = "gemini", feature = "openai")), allow(dead_code))]

mod error;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(any(feature = "gemini", feature = "openai"))]
mod http;
#[cfg(feature = "openai")]
mod openai;
mod retry;
mod secret;
mod sse;

pub use error::{Error, ErrorKind};
#[cfg(feature = "gemini")]
pub use gemini::{GeminiBuilder, GeminiModel};
#[cfg(feature = "openai")]
pub use openai::{OpenAiBuilder, OpenAiModel, RAW_ARGUMENTS_KEY};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use sse::sse_data;
