//! `load_memory`: lets a model search the user's memory.

use adk_core::{FunctionDeclaration, LlmRequest, Result};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{FunctionTool, Tool, ToolContext, ToolEffect};

/// What `load_memory` tells the model in the system instruction.
const INSTRUCTION: &str = "You have a memory of earlier conversations with this user. When a \
                           question needs it, call the `load_memory` function with a search query.";

/// The arguments of `load_memory`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LoadMemoryArgs {
    /// What to look for in the memory.
    pub query: String,
}

/// The `load_memory` tool, as ADK's: searches the user's memory with the model's query and
/// answers `{"memories": [...]}`. It also tells the model, in the system instruction, that it has a
/// memory.
///
/// ```
/// use adk_tool::Tool;
/// use adk_tool::builtin::LoadMemoryTool;
///
/// let tool = LoadMemoryTool::new();
/// assert_eq!(tool.name(), "load_memory");
/// ```
pub struct LoadMemoryTool {
    inner: FunctionTool,
}

impl LoadMemoryTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            inner: FunctionTool::new(
                "load_memory",
                "Searches the memory of the current user for what the query asks about.",
                load_memory,
            ),
        }
    }
}

impl Default for LoadMemoryTool {
    fn default() -> Self {
        Self::new()
    }
}

async fn load_memory(ctx: ToolContext, args: LoadMemoryArgs) -> Result<Value> {
    let response = ctx.search_memory(&args.query).await?;
    Ok(json!({ "memories": response.memories }))
}

#[async_trait]
impl Tool for LoadMemoryTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn effect(&self) -> ToolEffect {
        // It only reads.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        self.inner.declaration()
    }

    async fn process_request(&self, ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        self.inner.process_request(ctx, request).await?;
        request.append_instructions([INSTRUCTION]);
        Ok(())
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        self.inner.run(ctx, args).await
    }
}

impl std::fmt::Debug for LoadMemoryTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadMemoryTool").finish()
    }
}
