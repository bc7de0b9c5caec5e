//! `preload_memory`: puts what the memory knows about the user's message into the system
//! instruction before each model call.

use adk_core::{FunctionDeclaration, LlmRequest, MemoryEntry, PartData, Result};
use async_trait::async_trait;
use serde_json::Value;

use crate::{Tool, ToolContext, ToolEffect, ToolError, ToolErrorKind};

/// The `preload_memory` tool, as ADK's: a request-processing tool. Before each model call it
/// searches the user's memory with the text of the user's message and appends what it finds to
/// the system instruction. It declares no function, so the model never calls it.
///
/// ```
/// use adk_tool::Tool;
/// use adk_tool::builtin::PreloadMemoryTool;
///
/// let tool = PreloadMemoryTool::new();
/// assert_eq!(tool.name(), "preload_memory");
/// assert!(tool.declaration().is_none());
/// ```
#[derive(Debug, Default)]
pub struct PreloadMemoryTool {
    _private: (),
}

impl PreloadMemoryTool {
    /// The tool.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl Tool for PreloadMemoryTool {
    fn name(&self) -> &str {
        "preload_memory"
    }

    fn effect(&self) -> ToolEffect {
        // It only reads.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        "Adds memories relevant to the user's message to the system instruction."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        None
    }

    async fn process_request(&self, ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        let query = ctx
            .callback_context()
            .user_content()
            .and_then(|content| content.parts.first())
            .and_then(|part| part.as_text())
            .map(str::to_owned);
        let Some(query) = query.filter(|query| !query.trim().is_empty()) else {
            return Ok(());
        };
        let response = ctx.search_memory(&query).await?;
        if response.memories.is_empty() {
            return Ok(());
        }
        let memories: String = response.memories.iter().map(render_memory).collect();
        request.append_instructions([format!(
            "Here are parts of earlier conversations with the user. They may help with the \
             user's current request.\n<PAST_CONVERSATIONS>\n{memories}</PAST_CONVERSATIONS>"
        )]);
        Ok(())
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        Err(ToolError::new(
            ToolErrorKind::Failed,
            "`preload_memory` is not a function you can call; memories are already in your \
             instructions.",
        )
        .into())
    }
}

/// One memory as lines of the instruction: its time, then who said what.
fn render_memory(memory: &MemoryEntry) -> String {
    let mut text = String::new();
    if let Some(time) = memory
        .timestamp
        .and_then(|seconds| chrono::DateTime::from_timestamp_millis((seconds * 1000.0) as i64))
    {
        text.push_str(&format!(
            "Time: {}\n",
            time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
    }
    let said: Vec<String> = memory
        .content
        .parts
        .iter()
        .filter_map(|part| match &part.data {
            PartData::Text(text) => Some(text.clone()),
            PartData::FunctionCall(call) => Some(format!(
                "[Function call: {}({})]",
                call.name,
                Value::Object(call.args.clone())
            )),
            PartData::FunctionResponse(response) => Some(format!(
                "[Function response: {} -> {}]",
                response.name,
                Value::Object(response.response.clone())
            )),
            PartData::InlineData(blob) => Some(format!("[Data: {}]", blob.mime_type)),
            _ => None,
        })
        .collect();
    if !said.is_empty() {
        let author = memory.author.as_deref().unwrap_or("unknown");
        text.push_str(&format!("{author}: {}\n", said.join(" ")));
    }
    text
}
