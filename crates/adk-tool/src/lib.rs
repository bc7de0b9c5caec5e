//! Tools for adk-rs agents.
//!
//! This crate will own the `Tool` and `Toolset` traits, `FunctionTool` (an `async fn` with a typed
//! argument struct, its JSON schema generated and its arguments validated), the built-in tools, and the
//! MCP toolset behind the `mcp` feature.
