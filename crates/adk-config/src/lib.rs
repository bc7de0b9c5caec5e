//! Agents described in YAML, compatible with ADK Python's `root_agent.yaml`: run an agent with no
//! compiling.
//!
//! ```yaml
//! # yaml-language-server: $schema=https://raw.githubusercontent.com/adk-rs/adk-rs/main/schemas/agent-config.schema.json
//! name: assistant
//! model: gemini-2.5-flash
//! description: Answers the user's questions.
//! instruction: You answer questions briefly and say when you do not know.
//! tools: [load_memory]
//! ```
//!
//! [`AgentLoader`] loads such a file, or every app of an agents directory, into agents of
//! `adk-flow`: `LlmAgent` (the default `agent_class`), `SequentialAgent`, `ParallelAgent` and
//! `LoopAgent`, with sub-agents from other files (`sub_agents: [{config_path: helper.yaml}]`),
//! ADK's built-in tools by name, MCP toolsets by command or URL, and function tools the caller
//! registers by name. `docs/agent-config.md` lists every key.
//!
//! # Models
//!
//! `model:` picks the adapter by name ([`ModelSpec`]): `gemini-*`, `openai/<name>`, or `local`.
//! A [`ModelResolver`] makes the named models ready; the default, [`EnvModelResolver`], builds the
//! Gemini and OpenAI adapters from the environment, and the launcher replaces it to serve the
//! local model. An `LlmAgent` without `model` uses the model of the nearest `LlmAgent` above it,
//! or the resolver's default.
//!
//! # Errors
//!
//! A bad config is one [`ConfigError`] that names the file, the line and the column, says what
//! was wrong, and lists what is allowed: an unknown key (with the keys of that agent class), a
//! value of the wrong type, an unknown `agent_class`, tool or model, a missing sub-agent file or
//! a cycle of sub-agents. Keys of ADK Python that name Python code (callbacks, `model_code`,
//! `input_schema`, `output_schema`, `code:` sub-agents) are errors that say what to do instead;
//! nothing is silently ignored. Every file is checked before any model is made ready, and MCP
//! servers start only when an agent first asks for their tools, so nothing runs half-configured.
//!
//! # Schema
//!
//! [`json_schema`] is the JSON Schema of a config file, generated from the same types the
//! loader reads with; `cargo xtask codegen` writes it to `schemas/agent-config.schema.json`.
//! Without the `loader` feature (on by default) only the schema is built.

// Without the loader, the reading half of the config types has no caller.
#![cfg_attr(not(feature = "loader"), allow(dead_code))]

#[cfg(feature = "loader")]
mod build;
#[cfg(feature = "loader")]
mod error;
#[cfg(feature = "loader")]
mod loader;
#[cfg(feature = "loader")]
mod read;
#[cfg(feature = "loader")]
mod resolver;
mod schema;

#[cfg(feature = "loader")]
pub use error::{BoxError, ConfigError, ConfigErrorKind, Location};
#[cfg(feature = "loader")]
pub use loader::{AgentLoader, App, ROOT_AGENT_FILE};
#[cfg(feature = "loader")]
pub use resolver::{EnvModelResolver, ModelResolver};
pub use schema::json_schema;
pub use schema::model_name::ModelSpec;

// Loaders and their errors cross tasks: a compile-time check that they stay `Send + Sync`.
#[cfg(feature = "loader")]
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AgentLoader>();
    assert_send_sync::<ConfigError>();
    assert_send_sync::<EnvModelResolver>();
};
