//! The tools of the Task API: `finish_task`, which a task agent calls to hand back its result, and
//! the tools a chat agent reaches its task and single-turn sub-agents through (named after them).

use std::sync::Arc;

use adk_core::{Error, ErrorKind, FunctionDeclaration, LlmRequest, Result};
use adk_tool::{ArgumentValidator, Tool, ToolContext, ToolEffect};
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::{AgentMode, LlmAgent};

/// The name of the tool a task agent ends its task with.
pub const FINISH_TASK: &str = "finish_task";

/// What `finish_task` answers once the result was accepted; the flow knows the task ended by it.
pub const TASK_COMPLETED: &str = "Task completed.";

/// What `finish_task` answers for a task that ended in failure.
pub(crate) const TASK_FAILED: &str = "Task failed.";

/// The key a result that is not an object is wrapped in.
pub(crate) const RESULT_KEY: &str = "result";

/// The result schema of a task agent without an output schema: a summary of what it did.
fn default_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"result": {"type": "string", "description": "What the task came to."}},
        "required": ["result"],
    })
}

/// The input schema of a task or single-turn agent without an input schema.
fn default_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "request": {
                "type": "string",
                "description": "What the agent is to do, with everything it needs to know.",
            }
        },
        "required": ["request"],
    })
}

/// The parameters of `finish_task` for an agent whose result follows `schema`: the schema itself
/// when it describes an object, else an object holding it under `result`; and that key, if any.
pub(crate) fn finish_parameters(schema: Option<&Value>) -> (Value, Option<&'static str>) {
    let schema = schema.cloned().unwrap_or_else(default_output_schema);
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return (schema, None);
    }
    (
        json!({"type": "object", "properties": {RESULT_KEY: schema}, "required": [RESULT_KEY]}),
        Some(RESULT_KEY),
    )
}

/// `finish_task`: checks the result against the task agent's output schema and answers
/// [`TASK_COMPLETED`]; the flow then takes the call's arguments as the task's output.
pub(crate) struct FinishTask {
    parameters: Value,
    validator: Option<ArgumentValidator>,
}

impl FinishTask {
    pub(crate) fn new(agent: &LlmAgent) -> Self {
        let (parameters, _) = finish_parameters(agent.output_schema());
        let validator = ArgumentValidator::new(&parameters).ok();
        Self {
            parameters,
            validator,
        }
    }
}

#[async_trait]
impl Tool for FinishTask {
    fn name(&self) -> &str {
        FINISH_TASK
    }

    fn effect(&self) -> ToolEffect {
        // Its only effects travel in its response event, which is stored atomically.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        "Hands the result of your task back to the agent that gave it to you, ending the task. Call it alone, once the whole task is done."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(
            FunctionDeclaration::new(self.name(), self.description())
                .with_parameters(self.parameters.clone()),
        )
    }

    async fn process_request(&self, _ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        request.append_tools(self.declaration());
        request.append_instructions([
            "You work on a task another agent gave you. Finish all of it with the tools you have \
             before you report back, and ask the user when something about it is unclear. When it \
             is done, call `finish_task` with the result, and write nothing else in that turn.",
        ]);
        Ok(())
    }

    async fn run(&self, _ctx: ToolContext, args: Value) -> Result<Value> {
        if let Some(validator) = &self.validator {
            let problems = validator.problems(&args);
            if !problems.is_empty() {
                return Ok(json!({
                    "error": format!(
                        "`finish_task` was not accepted: {}. Call it again with every required parameter, of the right type.",
                        problems.join("; ")
                    )
                }));
            }
        }
        Ok(Value::String(TASK_COMPLETED.to_owned()))
    }
}

/// The tool named after a task or single-turn sub-agent, through which its parent reaches it. The
/// flow runs the agent itself when the model calls it (see `task::delegate`); the tool only
/// declares it.
pub(crate) struct DelegationTool {
    agent: Arc<LlmAgent>,
    description: String,
}

impl DelegationTool {
    pub(crate) fn new(agent: Arc<LlmAgent>, mode: AgentMode) -> Self {
        let what = match mode {
            AgentMode::Task => {
                "It works on the task with the user until it is done, then returns its result. Call it alone, not beside other tools."
            }
            _ => "It answers once and returns its answer.",
        };
        let own = adk_core::Agent::description(agent.as_ref());
        let description = if own.is_empty() {
            format!("Hands the request to agent `{}`. {what}", agent.base.name)
        } else {
            format!("{own}\n{what}")
        };
        Self { agent, description }
    }
}

#[async_trait]
impl Tool for DelegationTool {
    fn name(&self) -> &str {
        &self.agent.base.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        let parameters = self
            .agent
            .input_schema()
            .cloned()
            .unwrap_or_else(default_input_schema);
        Some(FunctionDeclaration::new(self.name(), self.description()).with_parameters(parameters))
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        // The flow runs delegations itself, between the call and its response; a call reaching
        // the tool means it was routed wrongly.
        Err(Error::new(
            ErrorKind::Agent,
            format!(
                "agent '{}' is reached through the flow's delegation, not by running its tool",
                self.agent.base.name
            ),
        ))
    }
}
