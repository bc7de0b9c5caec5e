//! Model adapters for adk-rs: each implements [`adk_core::Llm`] over a provider's real HTTP wire
//! format.
//!
//! This crate will own the Gemini (`generateContent`, `streamGenerateContent`) and OpenAI Chat
//! Completions adapters, each behind a feature, with streaming, retries and typed errors. Provider
//! wire structs stay private to their module: the rest of adk-rs sees only `adk_core` types.
