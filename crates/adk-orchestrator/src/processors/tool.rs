//! [`ToolProcessor`]: a task handled by one call of a tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{Content, FunctionCall, Part, Role};
use adk_tool::Tool;
use async_stream::try_stream;
use serde_json::{Map, Value};

use crate::tool_call::call_tool;
use crate::{TaskInput, TaskProcessor, TaskStep, TaskStream};

/// Calls a tool with the task's metadata as its arguments; the tool's result is the task's output.
///
/// The call and its response are events of the task, as a model's tool calls are. Metadata values
/// are text; a value whose parameter the tool's schema declares as a number, a boolean, an array
/// or an object is read as JSON. A tool's error fails the attempt.
pub struct ToolProcessor {
    tool: Arc<dyn Tool>,
    description: String,
}

impl ToolProcessor {
    /// A processor that calls `tool`, described to the analyzer by the tool's description and the
    /// metadata keys its arguments take.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        let mut description = tool.description().to_owned();
        let parameters = parameter_names(tool.as_ref());
        if !parameters.is_empty() {
            description.push_str(&format!(
                " Give its arguments as metadata items: {}.",
                parameters.join(", ")
            ));
        }
        Self { tool, description }
    }

    /// Describes the processor to the analyzer in other words.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
}

impl TaskProcessor for ToolProcessor {
    fn description(&self) -> &str {
        &self.description
    }

    fn process(&self, input: TaskInput) -> TaskStream {
        let tool = self.tool.clone();
        Box::pin(try_stream! {
            let ctx = input.ctx;
            let args = arguments(tool.as_ref(), &input.task.metadata);
            let call = FunctionCall::new(tool.name(), Value::Object(args))
                .with_id(ctx.ids().function_call_id());
            let call_event = ctx
                .new_event()
                .with_content(Content::new(Role::Model, [Part::function_call(call.clone())]));
            yield TaskStep::Event(Box::new(call_event));
            // The orchestrator's task timeout bounds the call; it needs no limit of its own.
            let outcome = call_tool(&ctx, &tool, &call, None).await;
            let response_event = ctx
                .new_event()
                .with_content(Content::new(Role::User, [outcome.response]))
                .with_actions(outcome.actions);
            yield TaskStep::Event(Box::new(response_event));
            yield TaskStep::Output(outcome.result?);
        })
    }
}

/// The names of the tool's parameters, from its declaration.
fn parameter_names(tool: &dyn Tool) -> Vec<String> {
    tool.declaration()
        .and_then(|declaration| declaration.parameters)
        .and_then(|schema| {
            schema
                .get("properties")?
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
        })
        .unwrap_or_default()
}

/// The tool's arguments from the task's metadata, typed by the tool's parameter schema.
fn arguments(tool: &dyn Tool, metadata: &BTreeMap<String, String>) -> Map<String, Value> {
    let schema = tool
        .declaration()
        .and_then(|declaration| declaration.parameters);
    let properties = schema
        .as_ref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    metadata
        .iter()
        .map(|(key, text)| {
            let declared = properties
                .and_then(|properties| properties.get(key))
                .and_then(|property| property.get("type"))
                .and_then(Value::as_str);
            let value = match declared {
                Some("number" | "integer" | "boolean" | "array" | "object") => {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                }
                _ => Value::String(text.clone()),
            };
            (key.clone(), value)
        })
        .collect()
}
