//! The Agent2Agent protocol (A2A 0.3) for adk-rs: agents that call each other across processes
//! and languages.
//!
//! - [`types`]: the protocol's types (agent card, messages and parts, tasks, streaming events,
//!   JSON-RPC), serde types whose JSON is checked against the official Python SDK's.
//! - [`A2aServer`]: exposes an app (a [`Runner`](adk_runner::Runner)) over A2A as an axum
//!   [`Router`](axum::Router): the agent card at `/.well-known/agent-card.json`, built from the
//!   agent tree, and JSON-RPC `message/send`, `message/stream` (SSE), `tasks/get` and
//!   `tasks/cancel` at `/`. [`serve`] runs one on its own, with graceful shutdown.
//! - [`RemoteA2aAgent`]: an [`Agent`](adk_core::Agent) that calls a remote A2A agent, usable as a
//!   sub-agent (the model transfers to it) and, wrapped in
//!   [`AgentTool`](adk_flow::AgentTool), as a tool.
//! - [`A2aClient`]: the JSON-RPC client both use, with timeouts, retries on connect errors only,
//!   a size limit on responses, and bearer-token or custom-header authentication.
//!
//! # How ADK events map to A2A
//!
//! As ADK Python's A2A executor does: each event with content becomes a `working` status update
//! whose message holds the event's parts — text as text parts, inline bytes and file references
//! as file parts, function calls and responses as data parts marked with `adk_type` metadata.
//! A long-running call (a tool that answers later, or the flow's request for a confirmation) is
//! marked `adk_is_long_running` and pauses the task in `input-required`; the client answers it
//! with a function response in a message that names the task. A run that ends without a pause
//! completes the task with its last message as an artifact.
//!
//! # Errors
//!
//! Bad JSON-RPC gets the spec's error codes (-32700 parse, -32600 invalid request, -32601 unknown
//! method, -32602 invalid params, -32001 task not found, -32002 not cancelable). On the client
//! side every failure is an [`A2aError`] naming what it is about.

mod client;
pub mod convert;
mod error;
mod remote_agent;
mod server;
pub mod types;

pub use client::{A2aClient, ClientConfig, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT};
pub use error::A2aError;
pub use remote_agent::{
    CONTEXT_ID_METADATA_KEY, REMOTE_TASK_FAILED, RemoteA2aAgent, RemoteA2aAgentBuilder,
    TASK_ID_METADATA_KEY, TASK_STATE_METADATA_KEY,
};
pub use server::{A2aServer, A2aServerBuilder, DEFAULT_MAX_TASKS, serve, serve_listener};

/// The path, relative to an agent's base URL, where its card is published.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
