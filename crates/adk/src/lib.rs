//! adk-rs, an agent development kit for Rust.
//!
//! This is the facade crate: it re-exports the layered crates of adk-rs (`adk-core`, `adk-model`,
//! `adk-tool`, `adk-session`, `adk-flow`, `adk-runner`, `adk-telemetry`) behind feature flags, so an
//! application depends on one crate and turns on what it uses.
