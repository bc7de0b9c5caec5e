//! `identity`: tells the model which agent it is.

use adk_core::LlmRequest;

use crate::step::Step;

pub(super) fn process(step: &Step, request: &mut LlmRequest) {
    let base = &step.agent.base;
    let mut identity = format!("You are an agent named \"{}\".", base.name);
    if !base.description.is_empty() {
        identity.push_str(&format!(" Your description: {}", base.description));
    }
    request.append_instructions([identity]);
}
