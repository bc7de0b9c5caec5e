//! `nl_planning`: lets the agent's planner shape the request (a thinking config, or planning
//! instructions) and rewrite each final model response (marking reasoning as thought).

use adk_core::{CallbackContext, LlmRequest, LlmResponse, ReadonlyContext};

use crate::step::Step;

pub(super) fn process_request(step: &Step, request: &mut LlmRequest) {
    let Some(planner) = &step.agent.planner else {
        return;
    };
    let readonly = ReadonlyContext::new(step.ctx.clone());
    if let Some(instruction) = planner.build_planning_instruction(&readonly, request) {
        request.append_instructions([instruction]);
    }
}

pub(super) fn process_response(step: &Step, response: &mut LlmResponse) {
    let Some(planner) = &step.agent.planner else {
        return;
    };
    if response.is_partial() {
        return;
    }
    let Some(content) = response.content.as_mut() else {
        return;
    };
    let callback_ctx = CallbackContext::new(step.ctx.clone());
    if let Some(parts) = planner.process_planning_response(&callback_ctx, &content.parts) {
        content.parts = parts;
    }
}
