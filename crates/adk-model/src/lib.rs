#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
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
pub use gemini::{Gemini, GeminiBuilder};
#[cfg(feature = "openai")]
pub use openai::{OpenAi, OpenAiBuilder, RAW_ARGUMENTS_KEY};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
// For the crate's benchmarks only: not part of the API.
#[doc(hidden)]
pub use sse::sse_data;
