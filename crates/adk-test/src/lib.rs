//! Dev-only helpers shared by the tests of adk-rs crates.
//!
//! It holds what more than one crate's tests need, so that no helper is written twice: locating the
//! shared fixtures (the recorded model traffic and the wire-format captures), reading recorded HTTP
//! traffic in the formats found there ([`recording`]), and a loopback HTTP server that serves
//! recorded or scripted responses ([`MockServer`]), and a headless browser driven over WebDriver
//! ([`browser::Browser`]). It depends only on the lowest layers and is
//! never a normal dependency of a library crate.

mod agent_run;
pub mod browser;
mod closure_tool;
mod log_capture;
pub mod recording;
mod replay;
mod scripted_model;
mod seams;
mod shared;

pub use agent_run::{AgentRun, render_events};
pub use closure_tool::{AsyncTool, ClosureTool};
pub use log_capture::LogCapture;
pub use recording::{Exchange, RecordingError, load_recording};
pub use replay::{MockResponse, MockServer, ReceivedRequest, openai_tool_calls_answered};
pub use scripted_model::ScriptedModel;
pub use seams::{SequentialIds, StepClock};
pub use shared::{SHARED_DIR_ENV, shared_dir, shared_file};
