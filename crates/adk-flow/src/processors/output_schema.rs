//! `output_schema`: an agent with both an output schema and tools cannot use the provider's
//! structured output (the provider would stop it from calling tools), so it gets a
//! `set_model_response` tool instead and answers by calling it; the flow then turns that call's
//! response into the agent's final text answer.
//!
//! Either way the answer is checked against the schema. The first answer of an agent in an
//! invocation that breaks it is answered with the problems, so that the model can fix it (the
//! tool's error response, or a correction message after a text answer); a second one fails the run
//! with [`ErrorKind::InvalidInput`].

use std::collections::HashSet;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Content, Error, ErrorKind, Event, FunctionDeclaration, LlmRequest, Result, Role};
use adk_tool::{ArgumentValidator, Tool, ToolContext, ToolEffect};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;

use crate::step::Step;

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
        validator: agent.output_validator.clone(),
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

/// The agent's final answer as JSON text, when `response_event` answers `set_model_response` with
/// an answer that follows the schema. An answer that breaks it already told the model why (the
/// tool failed); if the model had been told once before, the run fails.
pub(crate) fn structured_response_event(
    step: &Step,
    response_event: &Event,
) -> Result<Option<Event>> {
    let Some(response) = response_event
        .function_responses()
        .find(|response| response.name == SET_MODEL_RESPONSE)
    else {
        return Ok(None);
    };
    let answer = Value::Object(response.response.clone());
    let problems = step
        .agent
        .output_validator
        .as_ref()
        .map(|validator| validator.problems(&answer))
        .unwrap_or_default();
    if !problems.is_empty() {
        first_correction(step, &problems)?;
        return Ok(None);
    }
    let text = answer.to_string();
    Ok(Some(
        step.ctx.new_event().with_content(Content::model(text)),
    ))
}

/// For an agent answering in text under the provider's structured output: when `model_event` is
/// its final answer and breaks the schema, the correction message that tells the model what to
/// fix (the first time in the invocation), or the run's error (the second time).
pub(crate) fn text_answer_correction(step: &Step, model_event: &Event) -> Result<Option<Event>> {
    let Some(validator) = &step.agent.output_validator else {
        return Ok(None);
    };
    if model_event.is_partial() || !model_event.is_final_response() {
        return Ok(None);
    }
    let Some(text) = model_event.text() else {
        return Ok(None);
    };
    let problems = match serde_json::from_str::<Value>(&text) {
        Ok(answer) => validator.problems(&answer),
        Err(error) => vec![format!("- the answer is not JSON: {error}")],
    };
    if problems.is_empty() {
        return Ok(None);
    }
    let message = first_correction(step, &problems)?;
    Ok(Some(step.ctx.new_event().with_content(Content::new(
        Role::User,
        [adk_core::Part::text(message)],
    ))))
}

/// Whether `event` is a correction the flow gave `agent` about its answer: the model must answer
/// again, so the agent's turn goes on.
pub(crate) fn is_correction(event: &Event, agent: &str) -> bool {
    event.author == agent
        && event
            .content()
            .is_some_and(|content| content.role == Some(Role::User))
        && event.function_responses().next().is_none()
        && event.text().is_some()
}

/// The agents of the invocation that were already told that an answer broke the schema.
#[derive(Default)]
struct Corrected(Mutex<HashSet<String>>);

/// The message telling the model what is wrong with its answer, the first time in the invocation;
/// the second time, the error that ends the run.
fn first_correction(step: &Step, problems: &[String]) -> Result<String> {
    let agent = step.agent.base.name.as_str();
    let list = problems.join("\n");
    let first = step
        .ctx
        .invocation_data::<Corrected>()
        .0
        .lock()
        .insert(agent.to_owned());
    if !first {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "agent '{agent}' answered twice in a way that breaks its output schema; the \
                 second answer:\n{list}"
            ),
        ));
    }
    Ok(format!(
        "Your answer does not follow the required output schema; fix these and answer again \
         with JSON that follows it:\n{list}"
    ))
}

/// The tool the model gives its structured answer to; it returns the answer as given when it
/// follows the schema, and the problems otherwise.
struct SetModelResponse {
    schema: Value,
    validator: Option<Arc<ArgumentValidator>>,
}

#[async_trait]
impl Tool for SetModelResponse {
    fn name(&self) -> &str {
        SET_MODEL_RESPONSE
    }

    fn effect(&self) -> ToolEffect {
        // Its only effects travel in its response event, which is stored atomically.
        ToolEffect::ReadOnly
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

    async fn run(&self, _ctx: ToolContext, args: Value) -> Result<Value> {
        if let Some(validator) = &self.validator {
            let problems = validator.problems(&args);
            if !problems.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "Your answer does not follow the required output schema; fix these and \
                         call `{SET_MODEL_RESPONSE}` again:\n{}",
                        problems.join("\n")
                    ),
                ));
            }
        }
        Ok(args)
    }
}
