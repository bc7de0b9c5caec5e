//! Dev-only helpers shared by the tests of adk-rs crates.
//!
//! It holds what more than one crate's tests need, so that no helper is written twice: locating the
//! shared fixtures (the recorded model traffic and the wire-format captures), reading recorded HTTP
//! traffic in the formats found there ([`recording`]), and a loopback HTTP server that serves
//! recorded or scripted responses ([`MockServer`]), the conformance suite of model adapters
//! ([`model_conformance`]), a headless browser driven over WebDriver
//! ([`browser::Browser`]), the Python A2A peers installed from PyPI ([`python_peers`]), the real
//! MCP servers from npm ([`mcp_servers`]), a FastAPI pet store serving an OpenAPI document
//! ([`pet_store`]), and transcripts of runs to compare adk-rs with ADK Python ([`transcript`]). It
//! depends only on the lowest layers and is never a normal dependency of a library crate.

mod agent_run;
pub mod browser;
mod cache;
mod closure_tool;
mod concept_embedder;
mod endless_model;
mod harness;
mod jwt;
mod log_capture;
pub mod mcp_servers;
pub mod model_conformance;
pub mod oauth_server;
pub mod pet_store;
mod postgres;
pub mod python_peers;
mod ready;
pub mod recording;
mod replay;
mod run_outcome;
mod seams;
mod shared;
mod skip;
mod strategies;
pub mod transcript;

pub use adk_core::testing::ScriptedModel;
pub use agent_run::{AgentRun, render_events};
pub use cache::{cache_dir, install_once};
pub use closure_tool::{AsyncTool, ClosureTool};
pub use concept_embedder::ConceptEmbedder;
pub use endless_model::EndlessModel;
pub use harness::{TestArgs, run_single_test};
pub use jwt::TestIssuer;
pub use log_capture::LogCapture;
pub use postgres::{POSTGRES_URL_ENV, postgres_url};
pub use recording::{Exchange, RecordingError, load_recording};
pub use replay::{
    BodyEnd, ChunkGate, MockResponse, MockServer, ReceivedRequest, openai_tool_calls_answered,
};
pub use run_outcome::RunOutcome;
pub use seams::{SequentialIds, StepClock};
pub use shared::{SHARED_DIR_ENV, package_dir, shared_dir, shared_file, shared_fixtures_present};
pub use skip::{SKIPPED_MARKER, report_skipped, skipped_line};
pub use strategies::any_json;
