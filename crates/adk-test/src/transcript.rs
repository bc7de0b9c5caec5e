//! [`Transcript`]: what a run did, turn by turn (its events, the model requests, its failures), in
//! a form that compares adk-rs with ADK Python field by field.
//!
//! The parity tests run one scenario on both: on ADK Python through a script of the repository
//! run by the peers' interpreter (its lines are `{"turn": n, "event" | "request" | "error": ...}`),
//! and on adk-rs in the test. [`Transcript::normalized`] leaves out what may differ without a
//! difference in behaviour: ids, times and invocation ids, the key order of maps (JSON objects
//! compare as maps), and the spacing of JSON held in text (a join's output shown to a model).

use std::path::Path;

use serde_json::{Map, Value};

use crate::python_peers::a2a_peers;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// An event the run yielded (as the API server writes it).
    Event(Value),
    /// A model request: `{"model", "contents", "tools"}`.
    Request(Value),
    /// A failed turn: `{"type", "message"}`.
    Error(Value),
}

/// What a run did, by turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// Each turn's entries, in order.
    pub turns: Vec<Vec<Entry>>,
}

impl Transcript {
    /// Adds `entry` to turn `turn`.
    pub fn push(&mut self, turn: usize, entry: Entry) {
        if self.turns.len() <= turn {
            self.turns.resize_with(turn + 1, Vec::new);
        }
        self.turns[turn].push(entry);
    }

    /// Runs `script` (a scenario of ADK Python) with `args` in the peers' virtualenv and reads what
    /// it printed.
    ///
    /// # Panics
    ///
    /// When the script fails or prints something other than transcript lines.
    pub fn of_python(script: &Path, args: &[&str]) -> Self {
        let output = a2a_peers()
            .command()
            .arg(script)
            .args(args)
            .current_dir(script.parent().expect("a script lives in a directory"))
            .output()
            .expect("running ADK Python");
        assert!(
            output.status.success(),
            "ADK Python's {} failed:\n{}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let mut transcript = Self::default();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|error| {
                panic!(
                    "{}: a line that is not JSON ({error}): {line}",
                    script.display()
                )
            });
            let turn = value["turn"].as_u64().expect("every line names its turn");
            let turn = usize::try_from(turn).expect("a small turn number");
            let entry = if let Some(event) = value.get("event") {
                Entry::Event(event.clone())
            } else if let Some(request) = value.get("request") {
                Entry::Request(request.clone())
            } else if let Some(error) = value.get("error") {
                Entry::Error(error.clone())
            } else {
                panic!("{}: a line of no known kind: {line}", script.display());
            };
            transcript.push(turn, entry);
        }
        transcript
    }

    /// The transcript with what may differ without a difference in behaviour left out: each
    /// turn's events and its requests apart (a model call's place among the events of concurrent
    /// nodes is not fixed), ids and times, and the type of an error (only its message is
    /// compared).
    pub fn normalized(&self) -> Value {
        let turns = self
            .turns
            .iter()
            .map(|entries| {
                let mut events = Vec::new();
                let mut requests = Vec::new();
                let mut errors = Vec::new();
                for entry in entries {
                    match entry {
                        Entry::Event(event) => events.push(normalize_event(event)),
                        Entry::Request(request) => requests.push(normalize_request(request)),
                        Entry::Error(error) => errors.push(error["message"].clone()),
                    }
                }
                serde_json::json!({"events": events, "requests": requests, "errors": errors})
            })
            .collect();
        Value::Array(turns)
    }

    /// Panics with both transcripts, turn by turn, when `self` (adk-rs's) and `expected` (ADK
    /// Python's) differ after [`normalized`](Self::normalized).
    ///
    /// # Panics
    ///
    /// When they differ.
    pub fn assert_matches(&self, expected: &Transcript, scenario: &str) {
        let (ours, theirs) = (self.normalized(), expected.normalized());
        if ours == theirs {
            return;
        }
        let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
        let mut report = format!("scenario {scenario}: adk-rs differs from ADK Python\n");
        let (ours_turns, theirs_turns) = (ours.as_array(), theirs.as_array());
        let count = ours_turns
            .map_or(0, Vec::len)
            .max(theirs_turns.map_or(0, Vec::len));
        for turn in 0..count {
            let a = ours.get(turn).cloned().unwrap_or(Value::Null);
            let b = theirs.get(turn).cloned().unwrap_or(Value::Null);
            for part in ["events", "requests", "errors"] {
                let (a, b) = (&a[part], &b[part]);
                if a == b {
                    continue;
                }
                let (a, b) = (
                    a.as_array().cloned().unwrap_or_default(),
                    b.as_array().cloned().unwrap_or_default(),
                );
                for index in 0..a.len().max(b.len()) {
                    let (x, y) = (a.get(index), b.get(index));
                    if x != y {
                        report.push_str(&format!(
                            "turn {turn}, {part} #{index}:\n  adk-rs:     {}\n  ADK Python: {}\n",
                            x.map(pretty).unwrap_or_else(|| "(none)".into()),
                            y.map(pretty).unwrap_or_else(|| "(none)".into()),
                        ));
                    }
                }
            }
        }
        panic!("{report}");
    }
}

/// An event without its ids and times.
pub fn normalize_event(event: &Value) -> Value {
    let mut event = event.clone();
    if let Some(map) = event.as_object_mut() {
        for key in ["id", "timestamp", "invocationId"] {
            map.remove(key);
        }
    }
    json_texts_as_values(&mut event);
    event
}

fn normalize_request(request: &Value) -> Value {
    let mut request = request.clone();
    json_texts_as_values(&mut request);
    if let Some(contents) = request.get_mut("contents").and_then(Value::as_array_mut) {
        contents.iter_mut().for_each(other_agents_turn_as_marker);
    }
    request
}

/// Another agent's turn as an agent's request shows it: a user content that starts with "For
/// context:". Its wording (and fencing) is each framework's own prose, so only which turns are
/// shown, in which order and with how many parts is compared.
fn other_agents_turn_as_marker(content: &mut Value) {
    let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else {
        return;
    };
    let is_context = parts
        .first()
        .and_then(|part| part["text"].as_str())
        .is_some_and(|text| text.starts_with("For context:"));
    if is_context {
        for part in parts.iter_mut() {
            *part = serde_json::json!({"text": "(another agent's turn, as context)"});
        }
    }
}

/// Replaces every `"text"` holding a JSON object or array with `{"json": <the value>}`, so that
/// the order of its keys and its spacing do not count.
fn json_texts_as_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get("text")
                && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) =
                    serde_json::from_str::<Value>(text)
            {
                let mut wrapped = Map::new();
                wrapped.insert("json".to_owned(), parsed);
                map.insert("text".to_owned(), Value::Object(wrapped));
            }
            for item in map.values_mut() {
                json_texts_as_values(item);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json_texts_as_values),
        _ => {}
    }
}
