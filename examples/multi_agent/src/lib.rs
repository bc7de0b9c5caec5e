//! A help desk: a coordinator that hands each question to a billing or a support specialist, who
//! may hand it back.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run multi_agent`.

use std::sync::Arc;

use adk::flow::LlmAgent;
use adk::tool::{FunctionTool, ToolContext};
use adk::{Agent, Llm, Result};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "multi_agent";

/// The arguments of `lookup_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct InvoiceRequest {
    /// The invoice number, for example "INV-1001".
    pub invoice: String,
}

/// The arguments of `open_ticket`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TicketRequest {
    /// What is broken, in the user's words.
    pub problem: String,
}

async fn lookup_invoice(
    _ctx: Arc<dyn ToolContext>,
    request: InvoiceRequest,
) -> std::result::Result<Value, String> {
    match request.invoice.as_str() {
        "INV-1001" => Ok(json!({"invoice": "INV-1001", "amount_eur": 49.0, "status": "paid"})),
        "INV-1002" => Ok(json!({"invoice": "INV-1002", "amount_eur": 99.0, "status": "due"})),
        other => Err(format!(
            "no invoice {other}; invoice numbers look like INV-1001"
        )),
    }
}

async fn open_ticket(
    ctx: Arc<dyn ToolContext>,
    request: TicketRequest,
) -> std::result::Result<Value, String> {
    let count = ctx
        .state("tickets_opened")
        .and_then(|value| value.as_u64())
        .unwrap_or(0)
        + 1;
    ctx.set_state("tickets_opened", json!(count));
    Ok(json!({"ticket": format!("T-{count:04}"), "problem": request.problem}))
}

/// The coordinator with its two specialists, on `model`.
pub fn root_agent(model: Arc<dyn Llm>) -> Result<Arc<dyn Agent>> {
    let billing = LlmAgent::builder("billing")
        .description("Answers questions about invoices and payments.")
        .instruction("You handle invoices. Look invoices up with lookup_invoice before you answer.")
        .tool(Arc::new(FunctionTool::new(
            "lookup_invoice",
            "Returns the amount and status of an invoice.",
            lookup_invoice,
        )))
        .build()?;
    let support = LlmAgent::builder("support")
        .description("Helps when something does not work, and opens tickets.")
        .instruction("You fix problems. When you cannot, open a ticket with open_ticket.")
        .tool(Arc::new(FunctionTool::new(
            "open_ticket",
            "Opens a support ticket and returns its number.",
            open_ticket,
        )))
        .build()?;
    let coordinator = LlmAgent::builder("help_desk")
        .description("Greets the user and routes each question to the right specialist.")
        .model(model)
        .instruction("You route questions: invoices and payments to billing, problems to support.")
        .sub_agents([Arc::new(billing) as Arc<dyn Agent>, Arc::new(support)])
        .build()?;
    Ok(Arc::new(coordinator))
}
