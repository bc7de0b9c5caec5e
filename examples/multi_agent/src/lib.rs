//! A help desk: a coordinator that hands each question to a billing or a support specialist, who
//! may hand it back.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run multi_agent`.

use adk::core::IntoLlm;
use adk::prelude::*;
use serde_json::{Value, json};

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "multi_agent";

/// Returns the amount and status of an invoice.
#[adk::tool]
pub async fn lookup_invoice(
    /// The invoice number, for example "INV-1001".
    invoice: String,
) -> Result<Value, String> {
    match invoice.as_str() {
        "INV-1001" => Ok(json!({"invoice": "INV-1001", "amount_eur": 49.0, "status": "paid"})),
        "INV-1002" => Ok(json!({"invoice": "INV-1002", "amount_eur": 99.0, "status": "due"})),
        other => Err(format!(
            "no invoice {other}; invoice numbers look like INV-1001"
        )),
    }
}

/// Opens a support ticket and returns its number.
#[adk::tool]
pub async fn open_ticket(
    ctx: ToolContext,
    /// What is broken, in the user's words.
    problem: String,
) -> adk::Result<Value> {
    let count = ctx
        .state("tickets_opened")
        .and_then(|value| value.as_u64())
        .unwrap_or(0)
        + 1;
    ctx.set_state("tickets_opened", count)?;
    Ok(json!({"ticket": format!("T-{count:04}"), "problem": problem}))
}

/// The coordinator with its two specialists, on `model`.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<LlmAgent> {
    let billing = LlmAgent::builder("billing")
        .description("Answers questions about invoices and payments.")
        .instruction("You handle invoices. Look invoices up with lookup_invoice before you answer.")
        .tool(lookup_invoice)
        .build()?;
    let support = LlmAgent::builder("support")
        .description("Helps when something does not work, and opens tickets.")
        .instruction("You fix problems. When you cannot, open a ticket with open_ticket.")
        .tool(open_ticket)
        .build()?;
    LlmAgent::builder("help_desk")
        .description("Greets the user and routes each question to the right specialist.")
        .model(model)
        .instruction("You route questions: invoices and payments to billing, problems to support.")
        .sub_agent(billing)
        .sub_agent(support)
        .build()
}
