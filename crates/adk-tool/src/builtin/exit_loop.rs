//! `exit_loop`: lets a model end the loop agent it runs in.

use serde_json::Value;

use super::NoArgs;
use crate::{FunctionTool, ToolContext, ToolEffect};

/// The `exit_loop` tool: asks the enclosing loop agent to stop (escalate) and skips summarising
/// its response, as ADK's `exit_loop` does. It answers `null`.
///
/// ```
/// use adk_tool::Tool;
///
/// let tool = adk_tool::builtin::exit_loop();
/// assert_eq!(tool.name(), "exit_loop");
/// assert!(tool.declaration().unwrap().parameters.is_none());
/// ```
pub fn exit_loop() -> FunctionTool {
    FunctionTool::builder(
        "exit_loop",
        "Ends the loop you are running in.\n\nCall this only when your instructions tell you to.",
        run,
    )
    // Its only effect travels in its response event.
    .effect(ToolEffect::ReadOnly)
    .build()
}

async fn run(ctx: ToolContext, _args: NoArgs) -> Result<Value, std::convert::Infallible> {
    ctx.escalate();
    ctx.skip_summarization();
    Ok(Value::Null)
}
