//! Tracing for adk-rs: span names, OpenTelemetry GenAI attribute keys and helpers, and OTLP export
//! behind the `otel` feature.
//!
//! This crate will own the span tree of a run (`invoke_agent`, `call_llm`, `generate_content`,
//! `execute_tool`) and the `gen_ai.*` attributes ADK records on it. It never installs a global
//! subscriber by itself.
