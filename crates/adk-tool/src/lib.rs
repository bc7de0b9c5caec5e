#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod builtin;
mod context;
mod effect;
mod error;
mod function_tool;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "oauth2")]
pub mod oauth2;
#[cfg(feature = "openapi")]
pub mod openapi;
#[cfg(feature = "retrieval")]
pub mod retrieval;
mod schema;
#[cfg(feature = "skills")]
pub mod skills;
mod tool;
mod toolset;
mod validate;

pub use context::ToolContext;
pub use effect::{ToolEffect, UnknownEffect, arguments_hash, idempotency_key};
pub use error::{ToolError, ToolErrorKind};
pub use function_tool::{
    CONFIRMATION_REJECTED_MESSAGE, CONFIRMATION_REQUIRED_MESSAGE, FunctionTool,
    FunctionToolBuilder, ToolFunction,
};
pub use schema::{parameters_schema, simplify_schema};
pub use tool::{IntoTool, IntoToolset, Tool, Toolset};
pub use toolset::{FilteredToolset, ToolFilter, ToolPredicate, ToolsetExt};
pub use validate::ArgumentValidator;

// Tools and toolsets are shared between tasks: a compile-time check that ours stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<FunctionTool>();
    assert_send_sync::<ToolError>();
};
