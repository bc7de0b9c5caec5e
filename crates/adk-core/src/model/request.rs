//! [`LlmRequest`]: everything sent to a model for one call, with the functions it may call
//! ([`FunctionDeclaration`]) and the tools the provider runs itself ([`BuiltinTool`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::GenerateContentConfig;
use crate::Content;

/// Everything sent to a model for one call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LlmRequest {
    /// The model to call; adapters fall back to their own model when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The conversation so far. Shared, so that building a request does not copy the history:
    /// change it with `Arc::make_mut`, which copies only when another request still holds it.
    #[serde(default)]
    pub contents: Arc<Vec<Content>>,
    /// Sampling and output settings.
    #[serde(default)]
    pub config: GenerateContentConfig,
    /// The system instruction, paragraphs joined by blank lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<String>,
    /// The functions the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionDeclaration>,
    /// Tools the provider runs itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builtin_tools: Vec<BuiltinTool>,
}

impl LlmRequest {
    /// A request to `model` with `contents`.
    pub fn new(model: impl Into<String>, contents: Vec<Content>) -> Self {
        Self {
            model: model.into(),
            contents: Arc::new(contents),
            ..Self::default()
        }
    }

    /// Appends paragraphs to the system instruction, separated from what is there by a blank line.
    pub fn append_instructions<I, S>(&mut self, instructions: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for instruction in instructions {
            let instruction = instruction.as_ref();
            match &mut self.system_instruction {
                Some(existing) if !existing.is_empty() => {
                    existing.push_str("\n\n");
                    existing.push_str(instruction);
                }
                _ => self.system_instruction = Some(instruction.to_owned()),
            }
        }
    }

    /// Adds function declarations, replacing any of the same name.
    pub fn append_tools(&mut self, declarations: impl IntoIterator<Item = FunctionDeclaration>) {
        for declaration in declarations {
            self.tools
                .retain(|existing| existing.name != declaration.name);
            self.tools.push(declaration);
        }
    }
}

/// A function the model may call: its name, what it does, and JSON schemas of its arguments and result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object; `None` for a function without arguments. Shared, so
    /// that a tool declares itself to every request without copying its schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Arc<Value>>,
    /// JSON Schema of the result, when known; shared like `parameters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Arc<Value>>,
    /// Whether the provider must make the arguments follow `parameters` exactly (OpenAI's
    /// `strict` function calling); `None` leaves it to the adapter's default. Only adapters with
    /// such a mode read it: Gemini has none and sends the declaration as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl FunctionDeclaration {
    /// A declaration of `name` described by `description`, without arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: None,
            response: None,
            strict: None,
        }
    }

    /// Sets the JSON Schema of the arguments.
    pub fn with_parameters(mut self, schema: impl Into<Arc<Value>>) -> Self {
        self.parameters = Some(schema.into());
        self
    }

    /// Sets the JSON Schema of the result.
    pub fn with_response(mut self, schema: impl Into<Arc<Value>>) -> Self {
        self.response = Some(schema.into());
        self
    }

    /// Asks for strict arguments (or not) for this function alone, whatever the adapter's default.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }
}

/// A tool the provider runs on its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum BuiltinTool {
    /// The provider runs code the model writes (Gemini's code execution).
    CodeExecution,
    /// The provider searches the web (Gemini's Google Search grounding).
    GoogleSearch,
    /// The provider reads the web pages whose URLs the prompt names (Gemini's URL context).
    UrlContext,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_joined_by_blank_lines() {
        let mut request = LlmRequest::default();
        request.append_instructions(["You are helpful."]);
        request.append_instructions(["Answer briefly.", "Use metric units."]);
        assert_eq!(
            request.system_instruction.as_deref(),
            Some("You are helpful.\n\nAnswer briefly.\n\nUse metric units.")
        );
    }

    #[test]
    fn appended_tools_replace_same_name() {
        let mut request = LlmRequest::default();
        request.append_tools([FunctionDeclaration::new("f", "old")]);
        request.append_tools([
            FunctionDeclaration::new("f", "new"),
            FunctionDeclaration::new("g", ""),
        ]);
        let names: Vec<_> = request
            .tools
            .iter()
            .map(|tool| tool.description.as_str())
            .collect();
        assert_eq!(names, ["new", ""]);
    }
}
