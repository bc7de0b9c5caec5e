//! Human confirmation: a banking agent whose `transfer_money` tool waits for the user to confirm a
//! transfer above 100 euros before it runs.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run confirmation`.

use adk::core::IntoLlm;
use adk::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "confirmation";

/// The arguments of `transfer_money`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Transfer {
    /// Who receives the money.
    pub recipient: String,
    /// How much, in euros.
    pub amount_eur: f64,
}

/// Sends the money: a fixed record of what was sent, in the session's state.
async fn transfer_money(ctx: ToolContext, transfer: Transfer) -> adk::Result<Value> {
    let sent = ctx
        .state("sent_eur")
        .and_then(|value| value.as_f64())
        .unwrap_or(0.0);
    ctx.set_state("sent_eur", sent + transfer.amount_eur)?;
    Ok(
        json!({"status": "sent", "recipient": transfer.recipient, "amount_eur": transfer.amount_eur}),
    )
}

/// The banking agent on `model`. The tool is built with `FunctionTool::builder`, which sets
/// when a call needs the user's confirmation.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<LlmAgent> {
    let tool = FunctionTool::builder(
        "transfer_money",
        "Sends money to a recipient. Transfers above 100 euros need the user's confirmation.",
        transfer_money,
    )
    .require_confirmation_if(|transfer: &Transfer| transfer.amount_eur > 100.0)
    .build();
    LlmAgent::builder("banker")
        .description("Sends money for the user.")
        .model(model)
        .instruction("You send money with transfer_money. Tell the user what happened.")
        .tool(tool)
        .build()
}
