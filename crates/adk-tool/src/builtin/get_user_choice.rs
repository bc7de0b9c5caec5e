//! `get_user_choice`: shows the user options and waits for their pick.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::{FunctionTool, ToolContext};

/// The arguments of `get_user_choice`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UserChoiceArgs {
    /// The options the user chooses from.
    pub options: Vec<String>,
}

/// The `get_user_choice` tool, as ADK's: a long-running tool that presents `options` to the
/// user. Its call gets no response in this turn (it answers `null` and skips summarising); the
/// client sends the user's choice back as the function response.
///
/// ```
/// use adk_tool::Tool;
///
/// let tool = adk_tool::builtin::get_user_choice();
/// assert!(tool.is_long_running());
/// assert_eq!(tool.declaration().unwrap().parameters.unwrap()["required"], serde_json::json!(["options"]));
/// ```
pub fn get_user_choice() -> FunctionTool {
    FunctionTool::builder(
        "get_user_choice",
        "Shows the options to the user and asks them to pick one.",
        run,
    )
    .long_running(true)
    .build()
}

async fn run(ctx: ToolContext, _args: UserChoiceArgs) -> Result<Value, std::convert::Infallible> {
    ctx.skip_summarization();
    Ok(Value::Null)
}
