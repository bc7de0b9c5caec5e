//! The request and response processors, in ADK's order. They only shape the request and the
//! model's responses; running tools is the flow's.
//!
//! Request processors build the `LlmRequest` of a step: `basic`, `tools`, `instructions`,
//! `identity`, `contents`, `nl_planning`, `code_execution`, `output_schema`, `agent_transfer`,
//! `file_uploads` (applied by `contents` as it converts each event, see its module). Response
//! processors post-process each model response: `nl_planning`, then `code_execution`.
//!
//! The first two run in [`prepare`]; then the flow resumes the calls the user's credentials or
//! confirmations answered (ADK's `auth` and `request_confirmation` processors), whose events must
//! reach the session before `contents` reads it; the rest run in [`preprocess`]. `tools` collects
//! the tools first and runs their request hooks after `contents` (see its module).

mod agent_transfer;
mod basic;
pub(crate) mod code_execution;
pub(crate) mod contents;
pub(crate) mod file_uploads;
mod identity;
mod instructions;
pub(crate) mod nl_planning;
pub(crate) mod output_schema;
mod tools;

use adk_core::{Event, LlmRequest, LlmResponse, Result};

pub(crate) use agent_transfer::may_transfer_to;

use crate::step::Step;

/// The processors that run before the flow resumes answered calls: the request's settings, and
/// the agent's tools collected (their request hooks run later, in [`preprocess`]).
pub(crate) async fn prepare(step: &mut Step, request: &mut LlmRequest) -> Result<()> {
    basic::process(step, request);
    tools::collect(step).await
}

/// The processors from `instructions` on.
pub(crate) async fn preprocess(step: &mut Step, request: &mut LlmRequest) -> Result<()> {
    instructions::process(step, request).await?;
    identity::process(step, request);
    contents::process(step, request);
    tools::process_request(step, request).await?;
    nl_planning::process_request(step, request);
    code_execution::process_request(step, request);
    output_schema::process_request(step, request);
    agent_transfer::process(step, request);
    Ok(())
}

/// A request built afresh for a step whose tools are collected already: the `basic` processor,
/// then those from `instructions` on (after the history changed, say).
pub(crate) async fn rebuild_request(step: &mut Step) -> Result<Box<LlmRequest>> {
    let mut request = Box::<LlmRequest>::default();
    basic::process(step, &mut request);
    preprocess(step, &mut request).await?;
    Ok(request)
}

/// The response processors; they may emit events of their own (code execution results).
pub(crate) async fn postprocess(step: &Step, response: &mut LlmResponse) -> Result<Vec<Event>> {
    nl_planning::process_response(step, response);
    code_execution::process_response(step, response).await
}
