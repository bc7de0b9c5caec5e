//! [`Invocation`]: one turn of a conversation, and what happened between the user's message and
//! the final answer ([`IntermediateData`]: a summary of tool uses, or the events themselves).

use adk_core::{Content, FunctionCall, FunctionResponse, Part};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Rubric, is_zero};

/// One turn: the user's message, and the answer and tool uses expected of the agent (or, in a
/// result, those it produced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Invocation {
    /// The invocation's id (empty in hand-written cases).
    #[serde(
        default,
        alias = "invocationId",
        skip_serializing_if = "String::is_empty"
    )]
    pub invocation_id: String,
    /// What the user said.
    #[serde(alias = "userContent")]
    pub user_content: Content,
    /// The agent's final answer.
    #[serde(
        default,
        alias = "finalResponse",
        skip_serializing_if = "Option::is_none"
    )]
    pub final_response: Option<Content>,
    /// The tool uses and intermediate answers on the way.
    #[serde(
        default,
        alias = "intermediateData",
        skip_serializing_if = "Option::is_none"
    )]
    pub intermediate_data: Option<IntermediateData>,
    /// When the invocation happened, in seconds since the Unix epoch.
    #[serde(default, alias = "creationTimestamp", skip_serializing_if = "is_zero")]
    pub creation_timestamp: f64,
    /// Wall-clock seconds the invocation took, when the eval ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Of `duration`, the seconds with a model call in flight.
    #[serde(
        default,
        alias = "modelDuration",
        skip_serializing_if = "Option::is_none"
    )]
    pub model_duration: Option<f64>,
    /// Of `duration`, the seconds inside tools.
    #[serde(
        default,
        alias = "toolDuration",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_duration: Option<f64>,
    /// Rubrics for this invocation only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubrics: Option<Vec<Rubric>>,
    /// What the app looked like (agents, instructions, tools) when the invocation ran.
    #[serde(default, alias = "appDetails", skip_serializing_if = "Option::is_none")]
    pub app_details: Option<Value>,
}

impl Invocation {
    /// An invocation where the user says `user_content`, with nothing expected yet.
    pub fn new(user_content: Content) -> Self {
        Self {
            invocation_id: String::new(),
            user_content,
            final_response: None,
            intermediate_data: None,
            creation_timestamp: 0.0,
            duration: None,
            model_duration: None,
            tool_duration: None,
            rubrics: None,
            app_details: None,
        }
    }

    /// Expects (or records) `response` as the final answer.
    pub fn with_final_response(mut self, response: Content) -> Self {
        self.final_response = Some(response);
        self
    }

    /// Expects these tool calls, in order.
    pub fn with_tool_uses(mut self, calls: Vec<FunctionCall>) -> Self {
        self.intermediate_data = Some(IntermediateData::ToolUses(ToolUses {
            tool_uses: calls,
            ..ToolUses::default()
        }));
        self
    }

    /// The tool calls of the invocation, in order.
    pub fn tool_calls(&self) -> Vec<&FunctionCall> {
        match &self.intermediate_data {
            None => Vec::new(),
            Some(IntermediateData::ToolUses(uses)) => uses.tool_uses.iter().collect(),
            Some(IntermediateData::Events(events)) => events
                .invocation_events
                .iter()
                .filter_map(|event| event.content.as_ref())
                .flat_map(|content| content.function_calls())
                .collect(),
        }
    }

    /// The tool responses of the invocation, in order.
    pub fn tool_responses(&self) -> Vec<&FunctionResponse> {
        match &self.intermediate_data {
            None => Vec::new(),
            Some(IntermediateData::ToolUses(uses)) => uses.tool_responses.iter().collect(),
            Some(IntermediateData::Events(events)) => events
                .invocation_events
                .iter()
                .filter_map(|event| event.content.as_ref())
                .flat_map(|content| content.function_responses())
                .collect(),
        }
    }

    /// The text of the final answer: its text parts joined by newlines, as ADK's metrics read it;
    /// empty when there is none.
    pub fn final_text(&self) -> String {
        self.final_response
            .as_ref()
            .map(text_of)
            .unwrap_or_default()
    }

    /// The text of the user's message, as [`final_text`](Self::final_text) reads an answer.
    pub fn user_text(&self) -> String {
        text_of(&self.user_content)
    }
}

/// The text parts of `content` joined by newlines (thoughts included, as ADK's metrics read them).
pub(crate) fn text_of(content: &Content) -> String {
    content
        .parts
        .iter()
        .filter_map(Part::as_text)
        .filter(|text| !text.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What happened between the user's message and the final answer: either the older summary of
/// tool uses, or the events themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[serde(try_from = "RawIntermediateData")]
#[non_exhaustive]
pub enum IntermediateData {
    /// Tool calls and responses, and sub-agents' intermediate answers (ADK's `IntermediateData`).
    ToolUses(ToolUses),
    /// The invocation's events (ADK's `InvocationEvents`), as an eval writes what it ran.
    Events(InvocationEvents),
}

/// Tool uses in the order they happened, and intermediate answers of sub-agents.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUses {
    /// The calls, in order.
    #[serde(default, alias = "toolUses")]
    pub tool_uses: Vec<FunctionCall>,
    /// The responses, in order.
    #[serde(
        default,
        alias = "toolResponses",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_responses: Vec<FunctionResponse>,
    /// Answers of sub-agents on the way, as `[author, parts]` pairs.
    #[serde(
        default,
        alias = "intermediateResponses",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub intermediate_responses: Vec<(String, Vec<Part>)>,
}

/// The events of an invocation, as the eval projects them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InvocationEvents {
    /// The events, in order.
    #[serde(default, alias = "invocationEvents")]
    pub invocation_events: Vec<InvocationEvent>,
}

/// One event of an invocation: who wrote it and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InvocationEvent {
    /// The agent (or `user`) that wrote it.
    pub author: String,
    /// What it holds (left out for the final answer, which the invocation holds already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// Grounding metadata of the response.
    #[serde(
        default,
        alias = "groundingMetadata",
        skip_serializing_if = "Option::is_none"
    )]
    pub grounding_metadata: Option<Value>,
    /// Token counts of the response.
    #[serde(
        default,
        alias = "usageMetadata",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage_metadata: Option<Value>,
    /// The model version that answered.
    #[serde(
        default,
        alias = "modelVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub model_version: Option<String>,
}

impl InvocationEvent {
    /// An event of `author` holding `content`.
    pub fn new(author: impl Into<String>, content: Option<Content>) -> Self {
        Self {
            author: author.into(),
            content,
            grounding_metadata: None,
            usage_metadata: None,
            model_version: None,
        }
    }
}

/// The intermediate data as written, before it is known which of the two shapes it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIntermediateData {
    #[serde(default, alias = "toolUses")]
    tool_uses: Option<Vec<FunctionCall>>,
    #[serde(default, alias = "toolResponses")]
    tool_responses: Option<Vec<FunctionResponse>>,
    #[serde(default, alias = "intermediateResponses")]
    intermediate_responses: Option<Vec<(String, Vec<Part>)>>,
    #[serde(default, alias = "invocationEvents")]
    invocation_events: Option<Vec<InvocationEvent>>,
}

impl TryFrom<RawIntermediateData> for IntermediateData {
    type Error = String;

    fn try_from(raw: RawIntermediateData) -> Result<Self, String> {
        let summary = raw.tool_uses.is_some()
            || raw.tool_responses.is_some()
            || raw.intermediate_responses.is_some();
        match raw.invocation_events {
            Some(_) if summary => Err(
                "intermediate data holds either `invocation_events` or `tool_uses`/`tool_responses`/`intermediate_responses`, not both"
                    .to_owned(),
            ),
            Some(events) => Ok(Self::Events(InvocationEvents {
                invocation_events: events,
            })),
            None => Ok(Self::ToolUses(ToolUses {
                tool_uses: raw.tool_uses.unwrap_or_default(),
                tool_responses: raw.tool_responses.unwrap_or_default(),
                intermediate_responses: raw.intermediate_responses.unwrap_or_default(),
            })),
        }
    }
}
