//! Human confirmation: a banking agent whose `transfer_money` tool waits for the user to confirm a
//! transfer above 100 euros before it runs.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run confirmation`.

use std::sync::Arc;

use adk::flow::LlmAgent;
use adk::tool::{FunctionTool, ToolContext};
use adk::{Agent, Llm, Result};
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

async fn transfer_money(
    ctx: Arc<dyn ToolContext>,
    transfer: Transfer,
) -> std::result::Result<Value, String> {
    let sent = ctx
        .state("sent_eur")
        .and_then(|value| value.as_f64())
        .unwrap_or(0.0);
    ctx.set_state("sent_eur", json!(sent + transfer.amount_eur));
    Ok(
        json!({"status": "sent", "recipient": transfer.recipient, "amount_eur": transfer.amount_eur}),
    )
}

/// The banking agent on `model`.
pub fn root_agent(model: Arc<dyn Llm>) -> Result<Arc<dyn Agent>> {
    let tool = FunctionTool::builder(
        "transfer_money",
        "Sends money to a recipient. Transfers above 100 euros need the user's confirmation.",
        transfer_money,
    )
    .require_confirmation_if(|transfer: &Transfer| transfer.amount_eur > 100.0)
    .build();
    let agent = LlmAgent::builder("banker")
        .description("Sends money for the user.")
        .model(model)
        .instruction("You send money with transfer_money. Tell the user what happened.")
        .tool(Arc::new(tool))
        .build()?;
    Ok(Arc::new(agent))
}
