//! Helpers shared by the replay tests: loading recordings from the shared folder, running an
//! adapter against the replay server, and comparing JSON with a readable diff.

use std::path::PathBuf;

use adk_core::{Llm, LlmRequest, LlmResponse};
use adk_test::{Exchange, MockServer, ReceivedRequest};
use futures::StreamExt as _;
use serde_json::Value;

/// The folder of recorded traffic inside the shared fixtures folder.
pub(crate) fn recorded_dir() -> PathBuf {
    adk_test::shared_dir().join("fixtures").join("recorded")
}

/// The exchanges of recording `name` (`gemini/...` or `openai/...`).
pub(crate) fn load(name: &str) -> Vec<Exchange> {
    let exchanges = adk_test::load_recording(recorded_dir().join(name))
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(!exchanges.is_empty(), "{name} holds no exchanges");
    exchanges
}

/// The final content of call `index` of a replay.
pub(crate) fn content(outcomes: &[Outcome], index: usize) -> adk_core::Content {
    outcomes[index]
        .last()
        .content
        .clone()
        .expect("the final response has content")
}

/// What one call gave: every response in order, or the error that ended it.
pub(crate) struct Outcome {
    pub(crate) responses: Vec<LlmResponse>,
    pub(crate) error: Option<adk_core::Error>,
}

impl Outcome {
    /// The final, non-partial response.
    ///
    /// # Panics
    ///
    /// When the call failed, showing the error.
    pub(crate) fn last(&self) -> &LlmResponse {
        if let Some(error) = &self.error {
            panic!("the call failed: {error}");
        }
        let last = self.responses.last().expect("at least one response");
        assert!(!last.is_partial(), "the last response must not be partial");
        last
    }

    /// The text of all partial responses, concatenated.
    pub(crate) fn partial_text(&self) -> String {
        self.responses
            .iter()
            .filter(|response| response.is_partial())
            .flat_map(|response| {
                response
                    .content
                    .iter()
                    .flat_map(|content| content.parts.iter())
            })
            .filter_map(|part| part.as_text())
            .collect()
    }

    /// The adapter's own error, downcast from the core error.
    pub(crate) fn model_error(&self) -> &adk_model::Error {
        let error = self.error.as_ref().expect("the call should have failed");
        assert_eq!(error.kind(), adk_core::ErrorKind::Model);
        error
            .downcast_source::<adk_model::Error>()
            .expect("the source of a model error is an adk_model::Error")
    }
}

/// Runs `request` through `model` and collects what the stream yields; only partial responses
/// may come before the final one.
pub(crate) async fn run(model: &dyn Llm, request: LlmRequest, stream: bool) -> Outcome {
    let mut responses = Vec::new();
    let mut error = None;
    let mut items = model.generate(request, mode(stream));
    while let Some(item) = items.next().await {
        match item {
            Ok(response) => responses.push(response),
            Err(failure) => {
                error = Some(failure);
                break;
            }
        }
    }
    assert!(items.next().await.is_none(), "nothing may follow an error");
    if error.is_none() {
        let finals = responses
            .iter()
            .filter(|response| !response.is_partial())
            .count();
        assert_eq!(finals, 1, "exactly one final response");
    }
    Outcome { responses, error }
}

/// The request the server received for exchange `index`.
pub(crate) fn received(server: &MockServer, index: usize) -> ReceivedRequest {
    server
        .requests()
        .get(index)
        .cloned()
        .unwrap_or_else(|| panic!("the server received no request #{index}"))
}

/// Asserts two JSON values are equal, showing both pretty-printed when not.
pub(crate) fn assert_json_eq(sent: &Value, recorded: &Value, what: &str) {
    if sent != recorded {
        panic!(
            "{what}: the request we sent differs from the recording\n--- sent ---\n{}\n--- recorded ---\n{}",
            serde_json::to_string_pretty(sent).unwrap(),
            serde_json::to_string_pretty(recorded).unwrap()
        );
    }
}

/// Removes `null` values from objects and writes every number as a float, at any depth: the APIs
/// read an absent field and a null one alike (some clients send nulls), and `0` and `0.0` alike
/// (we write an `f32` setting as a float, Go writes `0`).
pub(crate) fn canonical(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, value| !value.is_null());
            map.values_mut().for_each(canonical);
        }
        Value::Array(items) => items.iter_mut().for_each(canonical),
        Value::Number(number) => {
            if let Some(float) = number.as_f64() {
                *value = Value::from(float);
            }
        }
        _ => {}
    }
}

/// Renames key `from` to `to` in `object`, when present.
pub(crate) fn rename(object: &mut Value, from: &str, to: &str) {
    if let Some(map) = object.as_object_mut()
        && let Some(value) = map.remove(from)
    {
        map.insert(to.to_owned(), value);
    }
}

/// One replay test per row: `name = <a call returning the outcomes> => |outcomes| { checks };`,
/// so that each recording's test is one row of its adapter's table. Without the shared fixtures
/// (a clone on a hosted CI runner) each test reports itself skipped and checks nothing.
macro_rules! replay_cases {
    ($($name:ident = $call:expr => |$outcomes:ident| $check:block;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                if !adk_test::shared_fixtures_present() {
                    return;
                }
                let $outcomes = $call.await;
                let _ = &$outcomes;
                $check
            }
        )*
    };
}
pub(crate) use replay_cases;

/// The recorded error envelope's status or code, as the adapter reports it: the first that does
/// not merely repeat the HTTP status `status`.
pub(crate) fn envelope_status(body: &Value, status: u16) -> Option<String> {
    let error = body.get("error")?;
    ["status", "code", "type"]
        .iter()
        .filter_map(|key| match error.get(*key)? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
        .find(|code| *code != status.to_string())
}

/// Checks a failed call against a recorded error response: HTTP status, body and provider status.
pub(crate) fn assert_recorded_error(outcome: &Outcome, exchange: &Exchange) {
    let error = outcome.model_error();
    assert_eq!(error.status(), Some(exchange.status), "{error}");
    assert_eq!(error.body(), Some(exchange.response_text().as_str()));
    let envelope = exchange
        .response_json()
        .expect("recorded error bodies are JSON");
    assert_eq!(
        error.provider_status().map(str::to_owned),
        envelope_status(&envelope, exchange.status)
    );
    // The status is stated once.
    let status = exchange.status.to_string();
    assert!(
        !error.to_string().contains(&format!("{status} {status}")),
        "{error}"
    );
    let message = envelope["error"]["message"]
        .as_str()
        .expect("an error message");
    assert!(error.to_string().contains(message), "{error}");
}

/// The streaming mode a test's `stream` flag asks for.
fn mode(stream: bool) -> adk_core::StreamingMode {
    if stream {
        adk_core::StreamingMode::Sse
    } else {
        adk_core::StreamingMode::None
    }
}
