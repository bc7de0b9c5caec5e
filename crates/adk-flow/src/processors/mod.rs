//! The request and response processors of seed 003, in the seed's order.
//!
//! Request processors build the `LlmRequest` of a step: `basic`, `tools`, `interrupted` (the
//! calls a crash cut off, an addition of adk-rs), `auth`, `request_confirmation`,
//! `instructions`, `identity`, `contents`, `nl_planning`, `code_execution`, `output_schema`,
//! `agent_transfer`, `file_uploads` (applied by `contents` as it converts each event, see its
//! module). Response processors post-process each model response: `nl_planning`, then
//! `code_execution`.
//!
//! The first five run in [`resolve_and_resume`], because `interrupted`, `auth` and
//! `request_confirmation` may resume tool calls: their events must reach the session before
//! `contents` reads it. The rest run in [`preprocess`]. `tools` collects the tools first and runs
//! their request hooks after `contents` (see its module).

mod agent_transfer;
mod auth;
mod basic;
pub(crate) mod code_execution;
pub(crate) mod contents;
pub(crate) mod file_uploads;
mod identity;
mod instructions;
mod interrupted;
pub(crate) mod live_events;
pub(crate) mod nl_planning;
pub(crate) mod output_schema;
mod request_confirmation;
mod resume;
mod tools;

use adk_core::{Event, LlmRequest, LlmResponse, Result};

pub(crate) use agent_transfer::may_transfer_to;

use crate::flow::Step;

/// The processors up to `request_confirmation`: settings, tools, and the tool calls resumed by the
/// user's credentials or confirmations. Returns the events of resumed calls.
pub(crate) async fn resolve_and_resume(
    step: &mut Step,
    request: &mut LlmRequest,
) -> Result<Vec<Event>> {
    basic::process(step, request);
    tools::collect(step).await?;
    let mut events = interrupted::process(step).await?;
    events.extend(auth::process(step).await?);
    events.extend(request_confirmation::process(step).await?);
    Ok(events)
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
