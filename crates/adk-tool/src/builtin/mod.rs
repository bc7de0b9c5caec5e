//! ADK's built-in tools: [`exit_loop`], [`LoadArtifactsTool`], [`LoadMemoryTool`],
//! [`PreloadMemoryTool`] and [`get_user_choice`]; and Gemini's provider-side tools
//! ([`google_search`], [`url_context`], [`code_execution`]).
//!
//! Names, descriptions and behaviour follow ADK Python's built-ins, so that models prompted for
//! ADK see the same tools. Agent transfer is not here: the flow adds it.

mod exit_loop;
mod get_user_choice;
mod load_artifacts;
mod load_memory;
mod preload_memory;
mod provider;

pub use exit_loop::exit_loop;
pub use get_user_choice::{UserChoiceArgs, get_user_choice};
pub use load_artifacts::{DEFAULT_MAX_ARTIFACT_BYTES, LoadArtifactsArgs, LoadArtifactsTool};
pub use load_memory::{LoadMemoryArgs, LoadMemoryTool};
pub use preload_memory::PreloadMemoryTool;
pub use provider::{
    ProviderTool, code_execution, google_search, mixes_with_functions, url_context,
};

// Defined with the `Tool` trait, whose `provider_side` reports it, and named here too beside the
// provider-side tools that answer it.
pub use crate::tool::ProviderSide;

use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of a tool that takes none. Its declaration has no parameters.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}
