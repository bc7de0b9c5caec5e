//! [`ToolProcessor`]: a task handled by one call of a tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{Content, FunctionCall, Part, Role};
use adk_flow::{ToolCallbacks, ToolInvoker, ToolMap, assign_call_ids};
use adk_tool::{IntoTool, Tool};
use async_stream::try_stream;
use serde_json::{Map, Value};

use crate::{TaskInput, TaskProcessor, TaskStep, TaskStream};

/// Calls a tool with the task's metadata as its arguments; the tool's result is the task's output.
///
/// The call and its response are events of the task, as a model's tool calls are, and the call
/// takes the same path as an `LlmAgent`'s ([`ToolInvoker`]): the runner's plugins and the
/// processor's [`ToolCallbacks`] run around it, the result is cut to
/// `RunConfig::max_tool_result_bytes`, `app:` state is screened as the runner says, and the call
/// id is unique in the session. The output is the result as the model would read it (a result
/// that is not an object, which the response wraps as `{"result": ...}`, is unwrapped).
///
/// Metadata values are text; a value whose parameter the tool's schema declares as a number, a
/// boolean, an array or an object is read as JSON. A tool's error (no callback recovering from
/// it) fails the attempt.
pub struct ToolProcessor {
    tool: Arc<dyn Tool>,
    callbacks: ToolCallbacks,
    description: String,
}

impl ToolProcessor {
    /// A processor that calls `tool`, described to the analyzer by the tool's description and the
    /// metadata keys its arguments take.
    pub fn new(tool: impl IntoTool) -> Self {
        let tool = tool.into_tool();
        let mut description = tool.description().to_owned();
        let parameters = parameter_names(tool.as_ref());
        if !parameters.is_empty() {
            description.push_str(&format!(
                " Give its arguments as metadata items: {}.",
                parameters.join(", ")
            ));
        }
        Self {
            tool,
            callbacks: ToolCallbacks::new(),
            description,
        }
    }

    /// Runs `callbacks` around each call, after the runner's plugins.
    pub fn with_callbacks(mut self, callbacks: ToolCallbacks) -> Self {
        self.callbacks = callbacks;
        self
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
        let tools = ToolMap::from([(self.tool.name().to_owned(), self.tool.clone())]);
        let tool = self.tool.clone();
        let callbacks = self.callbacks.clone();
        Box::pin(try_stream! {
            let ctx = input.ctx;
            let args = arguments(tool.as_ref(), &input.task.metadata);
            let call = FunctionCall::new(tool.name(), Value::Object(args));
            let mut call_event = ctx
                .new_event()
                .with_content(Content::new(Role::Model, [Part::function_call(call)]));
            assign_call_ids(&ctx, &mut call_event);
            yield TaskStep::Event(Box::new(call_event.clone()));
            // The orchestrator's task timeout bounds the call; it needs no limit of its own.
            let mut responses = ToolInvoker::new(&ctx, &tools)
                .callbacks(&callbacks)
                .run(&call_event)
                .await;
            let output = responses.event.as_ref().map_or(Value::Null, output_of);
            if let Some(event) = responses.event.take() {
                yield TaskStep::Event(Box::new(event));
            }
            if let Some(error) = responses.hook_error.take() {
                Err::<(), _>(error)?;
            }
            if let Some(error) = responses.failures.pop() {
                Err::<(), _>(error)?;
            }
            yield TaskStep::Output(output);
        })
    }
}

/// The task's output from the response event: the call's result as the model reads it, a
/// non-object result unwrapped from the `{"result": ...}` its response wraps it in.
fn output_of(event: &adk_core::Event) -> Value {
    let Some(response) = event.function_responses().next() else {
        return Value::Null;
    };
    match response.response.get("result") {
        Some(result) if response.response.len() == 1 => result.clone(),
        _ => Value::Object(response.response.clone()),
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
