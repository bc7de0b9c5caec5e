//! Tools for adk-rs agents.
//!
//! A [`Tool`] is something the model can call: it declares itself to the model (a name, a
//! description and a JSON schema of its arguments) and runs with a [`ToolContext`] that gives it the
//! session state, artifacts, memory and the actions of the event its response will travel in.
//! A [`Toolset`] yields tools per invocation (an MCP server's tools, say).
//!
//! The flow in `adk-flow` implements [`ToolContext`] and calls tools; this crate knows nothing of
//! the flow.

mod context;
mod tool;

pub use context::ToolContext;
pub use tool::{Tool, Toolset};
