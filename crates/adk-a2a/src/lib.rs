#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

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
pub use server::{
    A2aServer, A2aServerBuilder, DEFAULT_BODY_BUDGET, DEFAULT_BODY_LIMIT,
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_RUNS, DEFAULT_MAX_TASK_BYTES,
    DEFAULT_MAX_TASK_STORE_BYTES, DEFAULT_MAX_TASKS, serve, serve_listener,
};

/// The path, relative to an agent's base URL, where its card is published.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
