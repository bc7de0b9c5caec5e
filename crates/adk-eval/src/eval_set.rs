//! ADK's eval set model: an [`EvalSet`] of [`EvalCase`]s, each a conversation of [`Invocation`]s
//! with what the agent is expected to do, and the [`SessionInput`] it starts from.
//!
//! The JSON is ADK Python's `*.evalset.json`: keys in snake_case as ADK writes them (camelCase is
//! read too, as pydantic reads it), absent and empty values left out when written. Contents are
//! [`adk_core::Content`], which reads both spellings of Gemini's keys.

use std::path::Path;

use adk_core::{Content, FunctionCall, FunctionResponse, Part};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{EvalError, JsonPath, parse_json};
use crate::legacy;

/// A named set of eval cases, as in an ADK `*.evalset.json` file.
///
/// ```
/// use adk_eval::EvalSet;
///
/// let set = EvalSet::from_json(
///     r#"{
///       "eval_set_id": "weather",
///       "eval_cases": [{
///         "eval_id": "paris",
///         "conversation": [{
///           "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
///           "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}
///         }]
///       }]
///     }"#,
///     "weather.evalset.json",
/// )
/// .unwrap();
/// let case = &set.eval_cases[0];
/// assert_eq!(case.eval_id, "paris");
/// let calls = case.conversation.as_ref().unwrap()[0].tool_calls();
/// assert_eq!(calls[0].name, "get_weather");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalSet {
    /// The eval set's id.
    #[serde(alias = "evalSetId")]
    pub eval_set_id: String,
    /// A name to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the set is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The cases, each run in a session of its own.
    #[serde(alias = "evalCases")]
    pub eval_cases: Vec<EvalCase>,
    /// When the set was made, in seconds since the Unix epoch.
    #[serde(default, alias = "creationTimestamp", skip_serializing_if = "is_zero")]
    pub creation_timestamp: f64,
}

impl EvalSet {
    /// An eval set `eval_set_id` of `eval_cases`.
    pub fn new(eval_set_id: impl Into<String>, eval_cases: Vec<EvalCase>) -> Self {
        Self {
            eval_set_id: eval_set_id.into(),
            name: None,
            description: None,
            eval_cases,
            creation_timestamp: 0.0,
        }
    }

    /// Reads an eval set from JSON text in any of ADK's formats: an eval set object, an older
    /// list of named cases (`[{"name", "data", "initial_session"}]`), or a `*.test.json` list of
    /// queries (one case). `source` names the text in errors (a file name, say), and is the id of
    /// a set in an older format, which has none of its own.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed), naming `source` and the JSON
    /// path of the first problem.
    pub fn from_json(text: &str, source: &str) -> Result<Self, EvalError> {
        let first = text.trim_start().chars().next();
        let set = if first == Some('[') {
            legacy::read(text, source)?
        } else {
            parse_json::<Self>(text, source)?
        };
        set.check(source)?;
        Ok(set)
    }

    /// Reads the eval set file at `path` (see [`from_json`](Self::from_json)).
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Io`](crate::EvalErrorKind::Io) when the file cannot be read, or
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed) naming the file and the JSON
    /// path of the first problem.
    pub async fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let (text, source) = crate::error::read_source(path.as_ref()).await?;
        Self::from_json(&text, &source)
    }

    /// The case with id `eval_id`.
    pub fn case(&self, eval_id: &str) -> Option<&EvalCase> {
        self.eval_cases.iter().find(|case| case.eval_id == eval_id)
    }

    /// Checks what the schema alone cannot say: each case has exactly one of a conversation and a
    /// conversation scenario, and ids are unique.
    fn check(&self, source: &str) -> Result<(), EvalError> {
        let cases = JsonPath::root().key("eval_cases");
        for (index, case) in self.eval_cases.iter().enumerate() {
            let path = cases.index(index);
            if case.conversation.is_some() == case.conversation_scenario.is_some() {
                return Err(EvalError::malformed(
                    source,
                    &path,
                    "an eval case needs exactly one of `conversation` and `conversation_scenario`",
                ));
            }
            if self.eval_cases[..index]
                .iter()
                .any(|earlier| earlier.eval_id == case.eval_id)
            {
                return Err(EvalError::malformed(
                    source,
                    &path.key("eval_id"),
                    format!("the eval id `{}` is used twice", case.eval_id),
                ));
            }
        }
        Ok(())
    }
}

/// One eval case: a conversation to replay and what the agent should do in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalCase {
    /// The case's id, unique in its set.
    #[serde(alias = "evalId")]
    pub eval_id: String,
    /// The user's messages, one per invocation, with the expected answers and tool uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Vec<Invocation>>,
    /// A scenario for a simulated user (ADK's user simulator; not run by adk-eval).
    #[serde(
        default,
        alias = "conversationScenario",
        skip_serializing_if = "Option::is_none"
    )]
    pub conversation_scenario: Option<Value>,
    /// The session the case starts in.
    #[serde(
        default,
        alias = "sessionInput",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_input: Option<SessionInput>,
    /// When the case was made, in seconds since the Unix epoch.
    #[serde(default, alias = "creationTimestamp", skip_serializing_if = "is_zero")]
    pub creation_timestamp: f64,
    /// Rubrics for every invocation of the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubrics: Option<Vec<Rubric>>,
    /// The state expected at the end.
    #[serde(
        default,
        alias = "finalSessionState",
        skip_serializing_if = "is_empty_state"
    )]
    pub final_session_state: Option<Map<String, Value>>,
}

impl EvalCase {
    /// The rubrics of this case, then those of `expected` (one of its invocations), as ADK
    /// gathers them for an invocation.
    pub fn rubrics_with<'a>(
        &'a self,
        expected: Option<&'a Invocation>,
    ) -> impl Iterator<Item = &'a Rubric> + 'a {
        self.rubrics.iter().flatten().chain(
            expected
                .and_then(|invocation| invocation.rubrics.as_ref())
                .into_iter()
                .flatten(),
        )
    }

    /// A case `eval_id` of the invocations in `conversation`.
    pub fn new(eval_id: impl Into<String>, conversation: Vec<Invocation>) -> Self {
        Self {
            eval_id: eval_id.into(),
            conversation: Some(conversation),
            conversation_scenario: None,
            session_input: None,
            creation_timestamp: 0.0,
            rubrics: None,
            final_session_state: None,
        }
    }

    /// Starts the case in a session with `input`.
    pub fn with_session_input(mut self, input: SessionInput) -> Self {
        self.session_input = Some(input);
        self
    }
}

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

/// The session an eval case starts in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionInput {
    /// The app name the session is created under.
    #[serde(alias = "appName")]
    pub app_name: String,
    /// The user the session belongs to.
    #[serde(alias = "userId")]
    pub user_id: String,
    /// A fixed session id; a fresh one when absent.
    #[serde(default, alias = "sessionId", skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The state the session starts with (scoped keys such as `user:last_city` included).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub state: Map<String, Value>,
}

impl SessionInput {
    /// A session of `user_id` in app `app_name` with no state.
    pub fn new(app_name: impl Into<String>, user_id: impl Into<String>) -> Self {
        Self {
            app_name: app_name.into(),
            user_id: user_id.into(),
            session_id: None,
            state: Map::new(),
        }
    }

    /// Sets the starting state.
    pub fn with_state(mut self, state: Map<String, Value>) -> Self {
        self.state = state;
        self
    }
}

/// A criterion an answer is judged by, in words (ADK's `Rubric`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Rubric {
    /// The rubric's id.
    #[serde(alias = "rubricId")]
    pub rubric_id: String,
    /// What is judged.
    #[serde(alias = "rubricContent")]
    pub rubric_content: RubricContent,
    /// How to read the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A kind of rubric (`FINAL_RESPONSE_QUALITY`, `TOOL_USE_QUALITY`, ...).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Rubric {
    /// A rubric `rubric_id` saying `property`.
    pub fn new(rubric_id: impl Into<String>, property: impl Into<String>) -> Self {
        Self {
            rubric_id: rubric_id.into(),
            rubric_content: RubricContent {
                text_property: Some(property.into()),
            },
            description: None,
            kind: None,
        }
    }

    /// The property the rubric states, or an empty string.
    pub fn property(&self) -> &str {
        self.rubric_content.text_property.as_deref().unwrap_or("")
    }
}

/// The text of a rubric.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RubricContent {
    /// The property judged, as a sentence.
    #[serde(
        default,
        alias = "textProperty",
        skip_serializing_if = "Option::is_none"
    )]
    pub text_property: Option<String>,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

fn is_empty_state(state: &Option<Map<String, Value>>) -> bool {
    state.as_ref().is_none_or(Map::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<EvalSet, String> {
        EvalSet::from_json(text, "set.json").map_err(|error| error.to_string())
    }

    #[test]
    fn camel_case_and_events_are_read() {
        let set = read(
            r#"{"evalSetId": "s", "evalCases": [{"evalId": "c", "conversation": [{
                "userContent": {"parts": [{"text": "hi"}], "role": "user"},
                "finalResponse": {"parts": [{"text": "a"}, {"text": "b"}], "role": "model"},
                "intermediateData": {"invocationEvents": [
                    {"author": "agent", "content": {"parts": [{"functionCall": {"name": "f", "args": {"x": 1}}}], "role": "model"}},
                    {"author": "agent", "content": {"parts": [{"function_response": {"name": "f", "response": {"y": 2}}}], "role": "user"}}
                ]}
            }], "sessionInput": {"appName": "app", "userId": "u", "state": {"k": 1}}}]}"#,
        )
        .unwrap();
        let invocation = &set.eval_cases[0].conversation.as_ref().unwrap()[0];
        assert_eq!(invocation.final_text(), "a\nb");
        assert_eq!(invocation.tool_calls()[0].args["x"], 1);
        assert_eq!(invocation.tool_responses()[0].response["y"], 2);
        let input = set.eval_cases[0].session_input.as_ref().unwrap();
        assert_eq!(
            (input.app_name.as_str(), input.state["k"].clone()),
            ("app", json!(1))
        );
    }

    #[test]
    fn problems_name_the_json_path() {
        let missing =
            read(r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{}]}]}"#)
                .unwrap_err();
        assert_eq!(
            missing,
            "set.json: at eval_cases[0].conversation[0]: missing field `user_content`"
        );
        let wrong = read(
            r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
                {"user_content": {"parts": []}, "intermediate_data": {"tool_uses": [{"name": 3}]}}]}]}"#,
        )
        .unwrap_err();
        assert!(
            wrong.starts_with("set.json: at eval_cases[0].conversation[0].intermediate_data"),
            "{wrong}"
        );
        let both = read(
            r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
                {"user_content": {"parts": []}, "intermediate_data": {"tool_uses": [], "invocation_events": []}}]}]}"#,
        )
        .unwrap_err();
        assert!(both.contains("not both"), "{both}");
        let neither =
            read(r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}"#).unwrap_err();
        assert_eq!(
            neither,
            "set.json: at eval_cases[0]: an eval case needs exactly one of `conversation` and `conversation_scenario`"
        );
        let twice = read(
            r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": []}, {"eval_id": "c", "conversation": []}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            twice,
            "set.json: at eval_cases[1].eval_id: the eval id `c` is used twice"
        );
    }

    #[test]
    fn written_sets_leave_out_what_is_empty_and_read_back() {
        let set = EvalSet::new(
            "s",
            vec![EvalCase::new(
                "c",
                vec![
                    Invocation::new(Content::user("hi"))
                        .with_tool_uses(vec![FunctionCall::new("f", json!({"x": 1}))]),
                ],
            )],
        );
        let json = serde_json::to_value(&set).unwrap();
        assert_eq!(
            json,
            json!({"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{
                "user_content": {"parts": [{"text": "hi"}], "role": "user"},
                "intermediate_data": {"tool_uses": [{"args": {"x": 1}, "name": "f"}]}
            }]}]})
        );
        assert_eq!(read(&json.to_string()).unwrap(), set);
    }
}
