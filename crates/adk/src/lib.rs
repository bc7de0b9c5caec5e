//! adk-rs, an agent development kit for Rust.
//!
//! This is the facade crate: it re-exports the layered crates of adk-rs so that an application
//! depends on one crate and turns on what it uses. The vocabulary of [`adk_core`] is at the root;
//! each layer is also reachable as a module.
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | root, [`core`] | `adk-core` | content, events, state, sessions, agents, contexts, service traits |
//! | [`model`] | `adk-model` | model adapters |
//! | [`tool`] | `adk-tool` | tools, toolsets, built-in tools |
//! | [`session`] | `adk-session` | session, artifact and memory services |
//! | [`flow`] | `adk-flow` | the LLM flow, `LlmAgent`, workflow agents |
//! | [`runner`] | `adk-runner` | the runner |
//! | [`telemetry`] | `adk-telemetry` | tracing spans and OpenTelemetry export |
//! | `server` | `adk-server` | the REST + SSE server and the dev UI (feature `server`) |
//! | `eval` | `adk-eval` | eval sets, metrics and results, for tests and `adk eval` (feature `eval`) |
//! | `launcher`, [`Launcher`] | `adk-launcher` | `run`, `web`, `api_server`, `create` for your binary (feature `launcher`) |
//! | `orchestrator` | `adk-orchestrator` | the planning orchestrator and the run loop (feature `orchestrator`) |
//! | `a2a` | `adk-a2a` | the A2A protocol: serve agents, call remote agents (feature `a2a`) |
//!
//! ## Features
//!
//! | feature | what it turns on | default |
//! |---|---|---|
//! | `gemini` | the Gemini adapter, [`model::GeminiModel`] | yes |
//! | `openai` | the OpenAI-compatible adapter, [`model::OpenAiModel`] | yes |
//! | `sqlite` | SQLite sessions and memory, the embedded default | yes |
//! | `postgres` | PostgreSQL sessions | no |
//! | `object-store` | artifacts in any `object_store` store | no |
//! | `mcp` | the MCP toolset | no |
//! | `otel` | OTLP export of traces and metrics | no |
//! | `server` | the HTTP server: ADK's REST + SSE API and the adk-web dev UI | no |
//! | `eval` | evaluation with ADK's eval sets, metrics and result files | no |
//! | `launcher` | the command line for your own binary, [`Launcher`] (turns on `server` and `eval`) | no |
//! | `orchestrator` | the planning orchestrator and the configurable run loop | no |
//! | `a2a` | A2A: `A2aServer`, `RemoteA2aAgent`; with `server`, apps at `/a2a/{app}` | no |
//! | `full` | all of the above | no |
//!
//! Features are additive; each builds on its own.
//!
//! ```
//! use adk::{Content, Role};
//!
//! let message = Content::user("Hello");
//! assert_eq!(message.role, Some(Role::User));
//! ```

#[doc(inline)]
pub use adk_core::*;

/// The vocabulary and contracts (`adk-core`).
pub mod core {
    #[doc(inline)]
    pub use adk_core::*;
}

/// Model adapters (`adk-model`).
pub mod model {
    #[doc(inline)]
    pub use adk_model::*;
}

/// Tools and toolsets (`adk-tool`).
pub mod tool {
    #[doc(inline)]
    pub use adk_tool::*;
}

/// Session, artifact and memory services (`adk-session`).
pub mod session {
    #[doc(inline)]
    pub use adk_session::*;
}

/// The LLM flow and agents (`adk-flow`).
pub mod flow {
    #[doc(inline)]
    pub use adk_flow::*;
}

/// The runner (`adk-runner`).
pub mod runner {
    #[doc(inline)]
    pub use adk_runner::*;
}

/// Tracing and OpenTelemetry (`adk-telemetry`).
pub mod telemetry {
    #[doc(inline)]
    pub use adk_telemetry::*;
}

/// The HTTP server: ADK's REST + SSE API and the dev UI (`adk-server`, feature `server`).
#[cfg(feature = "server")]
pub mod server {
    #[doc(inline)]
    pub use adk_server::*;
}

/// Evaluation with ADK's eval sets, metrics and result files (`adk-eval`, feature `eval`).
#[cfg(feature = "eval")]
pub mod eval {
    #[doc(inline)]
    pub use adk_eval::*;
}

/// The command line for your own binary: `run`, `web`, `api_server`, `create` (`adk-launcher`,
/// feature `launcher`).
#[cfg(feature = "launcher")]
pub mod launcher {
    #[doc(inline)]
    pub use adk_launcher::*;
}

#[cfg(feature = "launcher")]
#[doc(inline)]
pub use adk_launcher::Launcher;

/// The planning orchestrator and the configurable agent run loop (`adk-orchestrator`, feature
/// `orchestrator`).
#[cfg(feature = "orchestrator")]
pub mod orchestrator {
    #[doc(inline)]
    pub use adk_orchestrator::*;
}

/// The Agent2Agent protocol: expose an app over A2A, call remote agents (`adk-a2a`, feature
/// `a2a`).
#[cfg(feature = "a2a")]
pub mod a2a {
    #[doc(inline)]
    pub use adk_a2a::*;
}
