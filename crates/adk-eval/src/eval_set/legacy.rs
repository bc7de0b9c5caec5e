//! ADK's two older eval formats, read into an [`EvalSet`] as ADK Python converts them.
//!
//! - A `*.test.json` file is a list of queries, one eval case: `[{"query", "expected_tool_use":
//!   [{"tool_name", "tool_input"}], "expected_intermediate_agent_responses": [{"author", "text"}],
//!   "reference"}]`.
//! - An older eval set is a list of named cases: `[{"name", "data": [<queries as above>],
//!   "initial_session": {"app_name", "user_id", "state"}}]`.
//!
//! Neither has an id of its own: the set (and a test file's one case) take the name of the text's
//! source.

use adk_core::{Content, FunctionCall, Part, Role};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{EvalCase, EvalSet, IntermediateData, Invocation, SessionInput, ToolUses};
use crate::error::{EvalError, JsonPath, parse_json};

/// Reads `text`, a JSON list in either older format.
pub(crate) fn read(text: &str, source: &str) -> Result<EvalSet, EvalError> {
    let items: Vec<Value> = parse_json(text, source)?;
    let is_test_file = items
        .first()
        .and_then(Value::as_object)
        .is_some_and(|first| first.contains_key("query"));
    let eval_cases = if is_test_file {
        let queries: Vec<Query> = parse_json(text, source)?;
        vec![EvalCase::new(
            source,
            queries.into_iter().map(Query::into_invocation).collect(),
        )]
    } else {
        let cases: Vec<NamedCase> = parse_json(text, source)?;
        cases.into_iter().map(NamedCase::into_case).collect()
    };
    if eval_cases.is_empty() {
        return Err(EvalError::malformed(
            source,
            &JsonPath::root(),
            "the list holds no eval case",
        ));
    }
    let mut set = EvalSet::new(source, eval_cases);
    set.name = Some(source.to_owned());
    Ok(set)
}

/// One query of the older formats.
#[derive(Deserialize)]
struct Query {
    query: String,
    #[serde(default)]
    reference: String,
    #[serde(default)]
    expected_tool_use: Vec<ToolUse>,
    #[serde(default)]
    expected_intermediate_agent_responses: Vec<IntermediateResponse>,
}

#[derive(Deserialize)]
struct ToolUse {
    tool_name: String,
    #[serde(default)]
    tool_input: Map<String, Value>,
}

#[derive(Deserialize)]
struct IntermediateResponse {
    author: String,
    text: String,
}

impl Query {
    fn into_invocation(self) -> Invocation {
        let calls = self
            .expected_tool_use
            .into_iter()
            .map(|tool_use| {
                FunctionCall::new(tool_use.tool_name, Value::Object(tool_use.tool_input))
            })
            .collect();
        let intermediate_responses = self
            .expected_intermediate_agent_responses
            .into_iter()
            .map(|response| (response.author, vec![Part::text(response.text)]))
            .collect();
        let mut invocation = Invocation::new(Content::user(self.query))
            .with_final_response(Content::new(Role::Model, [Part::text(self.reference)]));
        invocation.intermediate_data = Some(IntermediateData::ToolUses(ToolUses {
            tool_uses: calls,
            tool_responses: Vec::new(),
            intermediate_responses,
        }));
        invocation
    }
}

/// One case of the older eval set format.
#[derive(Deserialize)]
struct NamedCase {
    name: String,
    data: Vec<Query>,
    #[serde(default)]
    initial_session: Option<InitialSession>,
}

#[derive(Deserialize)]
struct InitialSession {
    #[serde(default)]
    app_name: String,
    #[serde(default)]
    user_id: String,
    #[serde(default)]
    state: Map<String, Value>,
}

impl NamedCase {
    fn into_case(self) -> EvalCase {
        let case = EvalCase::new(
            self.name,
            self.data.into_iter().map(Query::into_invocation).collect(),
        );
        match self.initial_session {
            Some(session) => case.with_session_input(
                SessionInput::new(session.app_name, session.user_id).with_state(session.state),
            ),
            None => case,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_test_file_is_one_case_of_its_queries() {
        let set = EvalSet::from_json(
            r#"[
              {"query": "hi", "expected_tool_use": [], "reference": "Hello!"},
              {"query": "Roll a die", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
               "expected_intermediate_agent_responses": [{"author": "helper", "text": "rolling"}], "reference": "4"}
            ]"#,
            "dice.test.json",
        )
        .unwrap();
        assert_eq!(set.eval_set_id, "dice.test.json");
        let case = &set.eval_cases[0];
        assert_eq!(case.eval_id, "dice.test.json");
        let conversation = case.conversation.as_ref().unwrap();
        assert_eq!(conversation[0].final_text(), "Hello!");
        assert!(conversation[0].tool_calls().is_empty());
        assert_eq!(
            conversation[1].tool_calls()[0].args,
            json!({"sides": 6}).as_object().unwrap().clone()
        );
        let Some(IntermediateData::ToolUses(uses)) = &conversation[1].intermediate_data else {
            panic!("tool uses expected");
        };
        assert_eq!(uses.intermediate_responses[0].0, "helper");
    }

    #[test]
    fn an_older_eval_set_keeps_names_and_sessions() {
        let set = EvalSet::from_json(
            r#"[{"name": "greet", "data": [{"query": "hi", "reference": "hello"}],
                 "initial_session": {"app_name": "app", "user_id": "u", "state": {"user:name": "Ada"}}}]"#,
            "old.json",
        )
        .unwrap();
        assert_eq!(set.eval_cases[0].eval_id, "greet");
        let input = set.eval_cases[0].session_input.as_ref().unwrap();
        assert_eq!(input.state["user:name"], "Ada");
    }

    #[test]
    fn problems_name_the_json_path() {
        let error = EvalSet::from_json(
            r#"[{"query": "hi"}, {"query": "x", "expected_tool_use": [{"tool_input": {}}]}]"#,
            "t.test.json",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.test.json: at [1].expected_tool_use[0]: missing field `tool_name`"
        );
        let empty = EvalSet::from_json("[]", "e.json").unwrap_err();
        assert_eq!(empty.to_string(), "e.json: the list holds no eval case");
    }
}
