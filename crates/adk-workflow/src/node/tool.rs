//! [`ToolNode`]: a tool run as a workflow node, its arguments taken from the node's input.

use std::sync::Arc;

use adk_tool::{Tool, ToolContext};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput};

/// The node behind [`Node::tool`].
pub struct ToolNode {
    tool: Arc<dyn Tool>,
}

impl ToolNode {
    /// The tool's arguments from the node's input: a map as it is, a message or string holding a
    /// JSON object as that object, no input as no arguments, and any other value as the one
    /// parameter the tool declares (or the one it requires).
    fn arguments(&self, input: &NodeInput) -> Result<Map<String, Value>, NodeError> {
        let value = match input {
            NodeInput::Content(_) | NodeInput::Value(Value::String(_)) => {
                let text = match input.to_value() {
                    Value::String(text) => Value::String(text.trim().to_owned()),
                    other => other,
                };
                match text {
                    Value::String(text) if text.is_empty() => Value::Null,
                    other => other,
                }
            }
            other => other.to_value(),
        };
        match value {
            Value::Null => Ok(Map::new()),
            Value::Object(map) => Ok(map),
            other => {
                let schema = self
                    .tool
                    .declaration()
                    .and_then(|declaration| declaration.parameters.map(|schema| (*schema).clone()))
                    .unwrap_or(Value::Null);
                let properties: Vec<&String> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|properties| properties.keys().collect())
                    .unwrap_or_default();
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|required| required.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let name = match (properties.as_slice(), required.as_slice()) {
                    ([only], _) => (*only).clone(),
                    (_, [only]) => (*only).to_owned(),
                    _ => {
                        return Err(NodeError::new(
                            "TypeError",
                            format!(
                                "the input of tool node '{}' must be a map of the tool's arguments or nothing, not {other}",
                                self.tool.name()
                            ),
                        ));
                    }
                };
                Ok(Map::from_iter([(name, other)]))
            }
        }
    }
}

impl RunNode for ToolNode {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(async move {
            let mut args = self.arguments(&input)?;
            let required: Vec<String> = self
                .tool
                .declaration()
                .and_then(|declaration| declaration.parameters)
                .and_then(|schema| schema.get("required").and_then(Value::as_array).cloned())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect();
            for name in required {
                if !args.contains_key(&name)
                    && let Some(value) = ctx.state(&name)
                {
                    args.insert(name, value);
                }
            }
            // The tool sees the node run as a call of its own, with a fresh call id.
            let tool_ctx = ToolContext::new(
                ctx.invocation().clone(),
                Some(ctx.invocation().ids().function_call_id()),
            );
            let response = self
                .tool
                .run(tool_ctx.clone(), Value::Object(args))
                .await
                .map_err(NodeError::from_core)?;
            for (key, value) in tool_ctx.take_actions().state_delta {
                ctx.set_state(key, value).map_err(NodeError::from_core)?;
            }
            if response.is_null() {
                ctx.emit(ctx.new_event()).await
            } else {
                ctx.output(response).await
            }
        })
    }

    fn kind(&self) -> NodeKind {
        NodeKind::Tool
    }
}

impl Node {
    /// `tool` as a node of the tool's name: its arguments are the node's input (a map), and its
    /// result is the node's output.
    pub fn tool(tool: impl adk_tool::IntoTool) -> Self {
        let tool = tool.into_tool();
        Self::from_parts(
            tool.name().to_owned(),
            NodeOptions::default(),
            Arc::new(ToolNode { tool }),
        )
    }
}
