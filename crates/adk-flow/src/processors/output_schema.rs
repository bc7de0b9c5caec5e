//! `output_schema`: an agent with both an output schema and tools cannot use the provider's
//! structured output (the provider would stop it from calling tools), so it gets a
//! `set_model_response` tool instead and answers by calling it; the flow then turns that call's
//! response into the agent's final text answer.

use std::sync::Arc;

use adk_core::{Content, Event, FunctionDeclaration, LlmRequest, Result};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use serde_json::Value;

use crate::flow::Step;

/// The name of the tool an agent with tools and an output schema answers through.
pub(crate) const SET_MODEL_RESPONSE: &str = "set_model_response";

pub(super) fn process_request(step: &mut Step, request: &mut LlmRequest) {
    let agent = &step.agent;
    let Some(schema) = &agent.output_schema else {
        return;
    };
    if agent.tools.is_empty() && agent.toolsets.is_empty() {
        return;
    }
    let tool = SetModelResponse {
        schema: schema.clone(),
    };
    if let Some(declaration) = tool.declaration() {
        request.append_tools([declaration]);
    }
    request.append_instructions([format!(
        "When you have the final answer, call the `{SET_MODEL_RESPONSE}` tool with it, in the \
         structure its parameters describe. Use the other tools before that as needed."
    )]);
    step.tools
        .insert(SET_MODEL_RESPONSE.to_owned(), Arc::new(tool));
}

/// The agent's final answer as JSON text, when `response_event` answers `set_model_response`.
pub(crate) fn structured_response_event(step: &Step, response_event: &Event) -> Option<Event> {
    let response = response_event
        .function_responses()
        .find(|response| response.name == SET_MODEL_RESPONSE)?;
    let text = Value::Object(response.response.clone()).to_string();
    Some(step.ctx.new_event().with_content(Content::model(text)))
}

/// The tool the model gives its structured answer to; it returns the answer as given.
struct SetModelResponse {
    schema: Value,
}

#[async_trait]
impl Tool for SetModelResponse {
    fn name(&self) -> &str {
        SET_MODEL_RESPONSE
    }

    fn description(&self) -> &str {
        "Gives your final answer in the required structure. Call it once, when you are done."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(
            FunctionDeclaration::new(self.name(), self.description())
                .with_parameters(self.schema.clone()),
        )
    }

    async fn run(&self, _ctx: Arc<dyn ToolContext>, args: Value) -> Result<Value> {
        Ok(args)
    }
}
