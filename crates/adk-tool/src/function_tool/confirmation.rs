//! Tool confirmation: a call that needs the user's approval asks for it and waits, as ADK does.

use adk_core::ToolConfirmation;
use serde_json::{Value, json};

use crate::{ToolContext, ToolError, ToolErrorKind};

/// The function response of a call that waits for the user's confirmation. The wording is ADK's,
/// because clients (ADK's web UI among them) recognise it.
pub const CONFIRMATION_REQUIRED_MESSAGE: &str =
    "This tool call requires confirmation, please approve or reject.";

/// The function response of a call the user rejected, worded as ADK words it.
pub const CONFIRMATION_REJECTED_MESSAGE: &str = "This tool call is rejected.";

/// What a call that may need confirmation should do now.
pub(crate) enum ConfirmationGate {
    /// Run the tool.
    Proceed,
    /// Do not run it; answer the model with this response.
    Respond(Value),
}

/// Decides whether a call of `tool_name` runs: when `needed`, it runs only once the user has
/// confirmed. Without an answer yet, it records a confirmation request in the event's actions.
pub(crate) fn confirmation_gate(
    ctx: &ToolContext,
    tool_name: &str,
    needed: bool,
) -> Result<ConfirmationGate, ToolError> {
    if !needed {
        return Ok(ConfirmationGate::Proceed);
    }
    match ctx.tool_confirmation() {
        Some(ToolConfirmation {
            confirmed: true, ..
        }) => Ok(ConfirmationGate::Proceed),
        Some(_) => Ok(ConfirmationGate::Respond(
            json!({ "error": CONFIRMATION_REJECTED_MESSAGE }),
        )),
        None => {
            let hint = format!(
                "Approve or reject the call to the tool `{tool_name}` by answering with a \
                 function response that carries a ToolConfirmation."
            );
            ctx.request_confirmation(&hint, None).map_err(|error| {
                ToolError::new(ToolErrorKind::Failed, error.message().to_owned()).with_source(error)
            })?;
            Ok(ConfirmationGate::Respond(
                json!({ "error": CONFIRMATION_REQUIRED_MESSAGE }),
            ))
        }
    }
}
