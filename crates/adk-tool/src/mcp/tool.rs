//! [`McpTool`]: one tool of an MCP server, and how its results become function responses.

use std::sync::{Arc, Weak};

use adk_core::{FunctionDeclaration, Result};
use async_trait::async_trait;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::connection::{Connection, Resend};
use super::untrusted::VettedTool;
use crate::function_tool::{ConfirmationGate, confirmation_gate};
use crate::schema::is_empty_object;
use crate::{Tool, ToolContext, ToolEffect, ToolError, ToolErrorKind};

/// One tool of an MCP server, as listed by [`McpToolset`](super::McpToolset).
///
/// Its declaration carries the server's input schema, simplified for providers
/// ([`simplify_schema`](crate::simplify_schema)), with its texts vetted as untrusted (see the
/// [module docs](super)). Calling it forwards the arguments to the server; the result becomes
/// `{"content": [...], "structuredContent": ...}` with MCP's content blocks (text, image, audio,
/// resource, resource link) as the server sent them, minus annotations and metadata. A result
/// with `isError: true` becomes a [`ToolErrorKind::McpToolError`] whose message is the server's
/// text, so the model reads what went wrong.
pub struct McpTool {
    name: String,
    description: String,
    parameters: Option<Arc<Value>>,
    response: Option<Arc<Value>>,
    connection: Weak<Connection>,
    require_confirmation: bool,
    effect: ToolEffect,
}

impl McpTool {
    pub(super) fn new(
        tool: VettedTool,
        connection: &Arc<Connection>,
        require_confirmation: bool,
    ) -> Self {
        Self {
            name: tool.name,
            description: tool.description,
            parameters: (!is_empty_object(&tool.parameters)).then(|| Arc::new(tool.parameters)),
            response: tool.response.map(Arc::new),
            connection: Arc::downgrade(connection),
            require_confirmation,
            effect: tool.effect,
        }
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<Value, ToolError> {
        let arguments = match args {
            Value::Null => None,
            Value::Object(arguments) => Some(arguments),
            other => {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidArguments,
                    format!(
                        "Invalid arguments for tool `{}`: expected an object of named \
                         arguments, got {other}.",
                        self.name
                    ),
                ));
            }
        };
        if let ConfirmationGate::Respond(response) =
            confirmation_gate(ctx, &self.name, self.require_confirmation)?
        {
            return Ok(response);
        }
        let connection = self.connection.upgrade().ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::McpRequest,
                format!(
                    "The MCP toolset that provided `{}` was closed; the tool is no longer \
                     available.",
                    self.name
                ),
            )
        })?;
        // A call lost with its connection is sent again only when the server says the tool is
        // idempotent (or read-only): otherwise the server may have acted already. The same rule
        // decides whether a call interrupted by a crash runs again on resume.
        let resend = if self.effect.may_run_again() {
            Resend::Safe
        } else {
            Resend::IfNeverSent
        };
        let result = connection.call_tool(&self.name, arguments, resend).await?;
        function_response(&self.name, result)
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn effect(&self) -> ToolEffect {
        self.effect
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        let mut declaration = FunctionDeclaration::new(&self.name, &self.description);
        declaration.parameters = self.parameters.clone();
        declaration.response = self.response.clone();
        Some(declaration)
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        Ok(self.call(&ctx, args).await?)
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The function response of a call of `tool_name`, or the tool's error.
fn function_response(tool_name: &str, result: CallToolResult) -> Result<Value, ToolError> {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .map(strip_metadata)
        .collect();
    if result.is_error == Some(true) {
        let texts: Vec<&str> = content
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        let reason = if texts.is_empty() {
            Value::Array(content.clone()).to_string()
        } else {
            texts.join("\n")
        };
        return Err(ToolError::new(
            ToolErrorKind::McpToolError,
            format!("The tool `{tool_name}` reported an error: {reason}"),
        ));
    }
    let mut response = Map::new();
    response.insert("content".to_owned(), Value::Array(content));
    if let Some(structured) = result.structured_content {
        response.insert("structuredContent".to_owned(), structured);
    }
    Ok(Value::Object(response))
}

/// A content block without `annotations` and `_meta`, which say nothing to a model.
fn strip_metadata(mut block: Value) -> Value {
    if let Value::Object(object) = &mut block {
        object.remove("annotations");
        object.remove("_meta");
        if let Some(Value::Object(resource)) = object.get_mut("resource") {
            resource.remove("_meta");
        }
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(json: Value) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn content_blocks_are_kept_without_metadata() {
        let response = function_response(
            "t",
            result(json!({
                "content": [
                    {"type": "text", "text": "hi", "annotations": {"priority": 1}},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "_meta": {}}}
                ],
                "structuredContent": {"n": 1}
            })),
        )
        .unwrap();
        assert_eq!(
            response,
            json!({
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}
                ],
                "structuredContent": {"n": 1}
            })
        );
    }

    #[test]
    fn is_error_becomes_a_tool_error() {
        let error = function_response(
            "t",
            result(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
        )
        .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::McpToolError);
        assert_eq!(
            error.message(),
            "The tool `t` reported an error: no such file"
        );
    }
}
