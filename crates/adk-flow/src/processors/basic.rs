//! `basic`: the model name, the agent's generation settings, and the output schema when the agent
//! has no tools (with tools, `output_schema` handles it).

use adk_core::LlmRequest;

use crate::step::Step;

pub(super) fn process(step: &Step, request: &mut LlmRequest) {
    let agent = &step.agent;
    request.model = step.model.name().to_owned();
    request.config = agent.generate_content_config.clone();
    if let Some(schema) = &agent.output_schema
        && agent.tools.is_empty()
        && agent.toolsets.is_empty()
    {
        request.config.response_schema = Some(schema.clone());
        request.config.response_mime_type = Some("application/json".to_owned());
    }
}
