//! The history as a model without tool messages reads it: its earlier calls as the protocol's JSON
//! in its own turns, and function responses as user messages that begin with [`RESULT_PREFIX`].

use adk_core::{Content, FunctionCall, FunctionResponse, Part, PartData, Role};
use serde_json::Value;

/// How a function response starts when it is sent back as a user message.
pub(crate) const RESULT_PREFIX: &str = "Tool result";

/// A content of the history as the model reads it: calls as protocol JSON, responses as text.
pub(super) fn content(content: &Content) -> Content {
    let has_tool_parts = content.parts.iter().any(|part| {
        matches!(
            part.data,
            PartData::FunctionCall(_) | PartData::FunctionResponse(_)
        )
    });
    if !has_tool_parts {
        return content.clone();
    }
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for part in content.parts.iter().filter(|part| !part.thought) {
        match &part.data {
            PartData::Text(text) => texts.push(text.clone()),
            PartData::FunctionCall(call) => texts.push(call_json(call)),
            PartData::FunctionResponse(response) => texts.push(response_text(response)),
            _ => others.push(part.clone()),
        }
    }
    let mut parts = vec![Part::text(texts.join("\n"))];
    parts.extend(others);
    Content {
        parts,
        role: content.role,
    }
}

/// A call as the protocol writes it.
pub(super) fn call_json(call: &FunctionCall) -> String {
    // Written by hand so that `tool` comes first, whatever the map's key order.
    format!(
        "{{\"tool\": {}, \"args\": {}}}",
        Value::String(call.name.clone()),
        Value::Object(call.args.clone())
    )
}

/// A function response as a message the model can read.
fn response_text(response: &FunctionResponse) -> String {
    let result = match (response.response.len(), response.response.get("result")) {
        (1, Some(Value::String(text))) => text.clone(),
        (1, Some(value)) => value.to_string(),
        _ => Value::Object(response.response.clone()).to_string(),
    };
    format!("{RESULT_PREFIX} of {}: {result}", response.name)
}

/// The contents of the current turn: from the user's last message of text on.
pub(super) fn this_turn(contents: &[Content]) -> &[Content] {
    let start = contents
        .iter()
        .rposition(|content| {
            content.role != Some(Role::Model)
                && content.parts.iter().any(
                    |part| matches!(&part.data, PartData::Text(text) if !text.trim().is_empty()),
                )
        })
        .unwrap_or(0);
    &contents[start..]
}

/// The calls the model made since the user's last message of text: what it already asked in
/// this turn.
pub(super) fn calls_this_turn(contents: &[Content]) -> Vec<&FunctionCall> {
    this_turn(contents)
        .iter()
        .flat_map(Content::function_calls)
        .collect()
}

/// The values of the function responses in the last content that an answer after them must
/// quote: their strings in order, then their numbers as JSON writes them while fewer than `most`
/// values are taken (the strings are the facts a reader needs first; a number is a fact too, the
/// temperature of a weather report, say).
pub(super) fn latest_result_values(contents: &[Content], most: usize) -> Vec<String> {
    let Some(last) = contents.last() else {
        return Vec::new();
    };
    let mut strings = Vec::new();
    let mut numbers = Vec::new();
    for response in last.function_responses() {
        for value in response.response.values() {
            collect_strings(value, &mut strings);
            collect_numbers(value, &mut numbers);
        }
    }
    let room = most.saturating_sub(strings.len());
    strings.extend(numbers.into_iter().take(room));
    strings
}

/// Whether the last content holds function responses.
pub(super) fn ends_with_results(contents: &[Content]) -> bool {
    contents
        .last()
        .is_some_and(|content| content.function_responses().next().is_some())
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// The numbers in `value`, as JSON writes them.
fn collect_numbers(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| collect_numbers(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_numbers(item, out)),
        _ => {}
    }
}

/// The strings and numbers in `value`, numbers as JSON writes them.
fn collect_words(value: &Value, out: &mut Vec<String>) {
    collect_strings(value, out);
    collect_numbers(value, out);
}

/// Everything the conversation says, lowercased: the instruction and every content's text,
/// calls and results, to look arguments up in.
pub(super) fn said(system: Option<&str>, contents: &[Content]) -> String {
    texts(system, contents).join("\n").to_lowercase()
}

/// The texts of the conversation: the instruction, what the user and the model said, the
/// arguments of calls, and the keys and values of results (not the protocol's own words).
pub(super) fn texts(system: Option<&str>, contents: &[Content]) -> Vec<String> {
    let mut texts: Vec<String> = system.map(str::to_owned).into_iter().collect();
    for content in contents {
        for part in content.parts.iter().filter(|part| !part.thought) {
            match &part.data {
                PartData::Text(text) => texts.push(text.clone()),
                PartData::FunctionCall(call) => {
                    for value in call.args.values() {
                        collect_words(value, &mut texts);
                    }
                }
                PartData::FunctionResponse(response) => {
                    for (key, value) in &response.response {
                        texts.push(key.clone());
                        collect_words(value, &mut texts);
                    }
                }
                _ => {}
            }
        }
    }
    texts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_turns_calls_start_after_the_users_last_text() {
        let earlier = FunctionCall::new("f", json!({"x": 1}));
        let now = FunctionCall::new("f", json!({"x": 2}));
        let contents = vec![
            Content::user("first"),
            Content::new(Role::Model, [Part::function_call(earlier)]),
            Content::user("second"),
            Content::new(Role::Model, [Part::function_call(now.clone())]),
            Content::new(
                Role::User,
                [Part::function_response(FunctionResponse::new(
                    "f",
                    json!({"city": "Tokyo", "sky": "rainy", "celsius": 19, "tags": ["wet"]}),
                ))],
            ),
        ];
        assert_eq!(calls_this_turn(&contents), [&now]);
        assert_eq!(this_turn(&contents).len(), 3);
        assert!(ends_with_results(&contents));
        let mut values = latest_result_values(&contents, 3);
        values.sort();
        assert_eq!(values, ["Tokyo", "rainy", "wet"]);
        let mut values = latest_result_values(&contents, 4);
        values.sort();
        assert_eq!(values, ["19", "Tokyo", "rainy", "wet"]);
        let said = said(Some("Be brief."), &contents);
        assert!(
            said.contains("be brief.")
                && said.contains("tokyo")
                && said.contains("celsius")
                && said.contains("19"),
            "{said}"
        );
        assert!(
            !said.contains("tool result"),
            "the protocol's words are not the conversation's: {said}"
        );
    }
}
