//! ADK's eval set model: an [`EvalSet`] of [`EvalCase`]s, each a conversation of [`Invocation`]s
//! with what the agent is expected to do, and the [`SessionInput`] it starts from.
//!
//! The JSON is ADK Python's `*.evalset.json`: keys in snake_case as ADK writes them (camelCase is
//! read too, as pydantic reads it), absent and empty values left out when written. Contents are
//! [`adk_core::Content`], which reads both spellings of Gemini's keys. This module holds the set
//! and how it is read; `case` the case and its session, `invocation` one turn and what happened
//! in it, `rubric` the judged criteria, `legacy` ADK's two older formats read into a set.

mod case;
mod invocation;
mod legacy;
mod rubric;
mod scenario;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use case::{EvalCase, SessionInput};
pub(crate) use invocation::text_of;
pub use invocation::{IntermediateData, Invocation, InvocationEvent, InvocationEvents, ToolUses};
pub use rubric::{Rubric, RubricContent};
pub use scenario::{ConversationScenario, ConversationScenarios, UserBehavior, UserPersona};

use crate::error::{EvalError, JsonPath, parse_json};

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

/// Whether a timestamp is unset, so that it is left out when written.
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, FunctionCall};

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
