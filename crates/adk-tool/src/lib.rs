//! Tools for adk-rs agents.
//!
//! A [`Tool`] is something the model can call: it declares itself to the model (a name, a
//! description and a JSON schema of its arguments) and runs with a [`ToolContext`] that gives it the
//! session state, artifacts, memory and the actions of the event its response will travel in.
//! A [`Toolset`] yields tools per invocation (an MCP server's tools, say).
//!
//! The flow in `adk-flow` implements [`ToolContext`] and calls tools; this crate knows nothing of
//! the flow.
//!
//! # Writing a tool
//!
//! Most tools are a [`FunctionTool`]: a plain `async fn` taking the context and an argument struct
//! that derives `Deserialize` and [`JsonSchema`](schemars::JsonSchema). The schema the model sees
//! is generated from the struct (doc comments become descriptions) and simplified for providers
//! that reject `$ref` ([`parameters_schema`]). Arguments are validated against it before the
//! function runs: an invalid call, a panic or a timeout becomes a [`ToolError`] whose message the
//! model reads, and the run goes on.
//!
//! ```
//! use std::sync::Arc;
//! use adk_tool::{FunctionTool, ToolContext};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Args {
//!     /// The city to report on.
//!     city: String,
//! }
//!
//! async fn get_weather(_ctx: Arc<dyn ToolContext>, args: Args) -> Result<String, String> {
//!     Ok(format!("It is sunny in {}.", args.city))
//! }
//!
//! let tool = FunctionTool::new("get_weather", "Returns the weather in a city.", get_weather);
//! ```
//!
//! # Built-in tools
//!
//! [`builtin`] holds ADK's built-ins: `exit_loop`, `load_artifacts`, `load_memory`,
//! `preload_memory` and `get_user_choice`. Agent transfer is added by the flow.
//!
//! # MCP
//!
//! With the `mcp` feature, `mcp::McpToolset` connects to a Model Context Protocol server over
//! stdio (a child process) or streamable HTTP and offers its tools.
//!
//! # Errors
//!
//! The crate has one error type, [`ToolError`], with a [`ToolErrorKind`] to branch on. At the
//! [`Tool`] boundary it becomes an [`adk_core::Error`] that keeps it as its source.

pub mod builtin;
mod context;
mod error;
mod function_tool;
#[cfg(feature = "mcp")]
pub mod mcp;
mod schema;
mod tool;
mod toolset;
mod validate;

pub use context::ToolContext;
pub use error::{ToolError, ToolErrorKind};
pub use function_tool::{
    CONFIRMATION_REJECTED_MESSAGE, CONFIRMATION_REQUIRED_MESSAGE, FunctionTool,
    FunctionToolBuilder, ToolFunction,
};
pub use schema::{parameters_schema, simplify_schema};
pub use tool::{Tool, Toolset};
pub use toolset::{FilteredToolset, ToolFilter, ToolPredicate, ToolsetExt};
pub use validate::ArgumentValidator;

// Tools and toolsets are shared between tasks: a compile-time check that ours stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<FunctionTool>();
    assert_send_sync::<ToolError>();
};
