//! Eval sets, cases and results as ADK Python's API server answers them: the field names of its
//! eval models in camelCase (pydantic's aliases) and absent values left out, while what the
//! models only carry (contents, sessions, state, tool arguments) keeps its own keys.
//!
//! adk-eval writes the files in snake_case, as ADK's managers write them; this turns that JSON
//! into the routes' shape instead of keeping a second set of types in step with the first.

use serde_json::{Map, Value};

/// The fields whose values are not eval models: wire-format contents and sessions (already in
/// their camelCase), and maps whose keys are the user's.
const OPAQUE: &[&str] = &[
    "user_content",
    "final_response",
    "content",
    "tool_uses",
    "tool_responses",
    "intermediate_responses",
    "state",
    "final_session_state",
    "session_details",
    "grounding_metadata",
    "usage_metadata",
    "app_details",
    // ADK's personas are plain models, written with their field names as they are.
    "user_persona",
];

/// `value`, an eval model written by serde in snake_case, with its model fields in camelCase and
/// its `null`s left out, as ADK's routes answer (`by_alias=True, exclude_none=True`).
pub(crate) fn to_api(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut out = Map::with_capacity(object.len());
            for (key, value) in object {
                if value.is_null() {
                    continue;
                }
                let value = if OPAQUE.contains(&key.as_str()) {
                    value
                } else {
                    to_api(value)
                };
                out.insert(camel(&key), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(to_api).collect()),
        value => value,
    }
}

/// `snake_case` as `snakeCase`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn model_fields_become_camel_case_and_user_keys_stay() {
        let wire = to_api(json!({
            "eval_id": "c",
            "rubrics": null,
            "conversation": [{"user_content": {"parts": [{"functionCall": {"name": "f", "args": {"city_name": "Paris"}}}]},
                              "intermediate_data": {"tool_uses": [{"name": "f", "args": {"city_name": "Paris"}}]}}],
            "session_input": {"app_name": "a", "user_id": "u", "state": {"user:last_city": "Paris", "my_key": 1}},
        }));
        assert_eq!(
            wire,
            json!({
                "evalId": "c",
                "conversation": [{"userContent": {"parts": [{"functionCall": {"name": "f", "args": {"city_name": "Paris"}}}]},
                                  "intermediateData": {"toolUses": [{"name": "f", "args": {"city_name": "Paris"}}]}}],
                "sessionInput": {"appName": "a", "userId": "u", "state": {"user:last_city": "Paris", "my_key": 1}},
            })
        );
        assert_eq!(
            camel("eval_metric_result_per_invocation"),
            "evalMetricResultPerInvocation"
        );
        assert_eq!(camel("_private"), "_private");
    }
}
