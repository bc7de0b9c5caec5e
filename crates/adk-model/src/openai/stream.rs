//! Chat Completions streaming: `chat.completion.chunk` events whose text deltas go out as partial
//! responses, whose tool-call deltas are assembled by index, ending with a usage-only chunk and
//! `[DONE]`.

use std::collections::BTreeMap;

use adk_core::{Content, LlmResponse, Part, Role};
use serde::Deserialize;

use super::response::{self, Usage};
use crate::error::{Error, ErrorKind};

#[derive(Deserialize)]
struct Chunk {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<Usage>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: u32,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Default)]
struct ToolCallParts {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// What a stream has delivered so far.
#[derive(Default)]
pub(super) struct StreamState {
    text: String,
    refusal: String,
    calls: BTreeMap<u32, ToolCallParts>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    model: Option<String>,
    done: bool,
}

impl StreamState {
    /// Takes one SSE payload; returns the partial response to yield, if it carries text.
    pub(super) fn push(&mut self, data: &str) -> Result<Option<LlmResponse>, Error> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|error| Error::decode("a Chat Completions chunk", error, data))?;
        if let Some(error) = chunk.error {
            return Err(Error::new(
                ErrorKind::Provider,
                format!("the server reported an error mid-stream: {error}; retry the call"),
            )
            .with_body(data.to_owned()));
        }
        if chunk.model.is_some() {
            self.model = chunk.model;
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        let mut delta_text = String::new();
        // Only the first choice is read, as `n` > 1 has no place in a single LlmResponse stream.
        for choice in chunk.choices.into_iter().take(1) {
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content {
                delta_text.push_str(&text);
            }
            if let Some(refusal) = delta.refusal {
                self.refusal.push_str(&refusal);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                let parts = self.calls.entry(call.index).or_default();
                if call.id.is_some() {
                    parts.id = call.id;
                }
                if let Some(function) = call.function {
                    if let Some(name) = function.name {
                        parts.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        parts.arguments.push_str(&arguments);
                    }
                }
            }
        }
        if delta_text.is_empty() {
            return Ok(None);
        }
        self.text.push_str(&delta_text);
        let mut partial = LlmResponse::new(Content::new(Role::Model, [Part::text(delta_text)]));
        partial.partial = Some(true);
        partial.model_version.clone_from(&self.model);
        Ok(Some(partial))
    }

    /// The aggregated final response, or [`ErrorKind::StreamCut`] when the stream ended with
    /// neither a finish reason nor `[DONE]`.
    pub(super) fn finish(self) -> Result<LlmResponse, Error> {
        if !self.done && self.finish_reason.is_none() {
            return Err(Error::new(
                ErrorKind::StreamCut,
                "the Chat Completions stream ended without a finish reason or [DONE], so the answer may be incomplete; retry the call",
            ));
        }
        let calls = self
            .calls
            .into_values()
            .map(|call| response::function_call(call.id, call.name, &call.arguments))
            .collect();
        let mut last = response::assemble(
            self.text,
            Some(self.refusal),
            calls,
            self.finish_reason.as_deref(),
            self.usage,
            self.model,
        );
        // `turnComplete` is left unset, as ADK Python's adapters leave it: only live sessions
        // mark the end of a turn.
        last.partial = Some(false);
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::FinishReason;

    #[test]
    fn text_then_tool_call_deltas_by_index_then_usage_and_done() {
        let mut state = StreamState::default();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Looking"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"country"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"other","arguments":"{}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\"UK\"}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#,
            "[DONE]",
        ];
        let partials: Vec<_> = chunks
            .iter()
            .filter_map(|chunk| state.push(chunk).unwrap())
            .collect();
        assert_eq!(partials.len(), 1);
        assert_eq!(
            partials[0].content.as_ref().unwrap().text().as_deref(),
            Some("Looking")
        );
        let last = state.finish().unwrap();
        let content = last.content.unwrap();
        assert_eq!(content.text().as_deref(), Some("Looking"));
        let calls: Vec<_> = content.function_calls().collect();
        assert_eq!(calls[0].args["country"], "UK");
        assert_eq!(calls[1].name, "other");
        assert_eq!(last.finish_reason, Some(FinishReason::Stop));
        assert_eq!(last.usage_metadata.unwrap().total_token_count, Some(7));
    }

    #[test]
    fn a_streamed_refusal_is_reported_as_such() {
        let mut state = StreamState::default();
        for chunk in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"refusal":"I can't"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"refusal":" help with that."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            assert!(
                state.push(chunk).unwrap().is_none(),
                "a refusal is not answer text"
            );
        }
        let last = state.finish().unwrap();
        assert_eq!(last.error_code.as_deref(), Some("REFUSAL"));
        assert_eq!(
            last.error_message.as_deref(),
            Some("I can't help with that.")
        );
        assert!(last.content.is_none());
    }

    #[test]
    fn malformed_chunks_and_cut_streams_are_typed_errors() {
        let mut state = StreamState::default();
        assert_eq!(
            state.push("{\"choices\": [").unwrap_err().kind(),
            ErrorKind::Decode
        );
        state
            .push(r#"{"choices":[{"delta":{"content":"Hi"}}]}"#)
            .unwrap();
        assert_eq!(state.finish().unwrap_err().kind(), ErrorKind::StreamCut);
    }

    mod properties {
        //! The assembler against generated streams: calls whose names and arguments arrive in
        //! pieces, interleaved across calls, come out whole; no payload makes it panic.

        use proptest::prelude::*;
        use serde_json::{Map, Value, json};

        use super::StreamState;

        /// Cases per property.
        const CASES: u32 = 2048;

        /// A call: id, name and a small arguments object.
        fn call() -> impl Strategy<Value = (String, String, Map<String, Value>)> {
            (
                "call_[a-zA-Z0-9]{1,10}",
                "[a-z_]{1,16}",
                prop::collection::vec(
                    (
                        "[a-z]{1,6}",
                        prop_oneof![
                            any::<i32>().prop_map(Value::from),
                            "[^\\p{Cc}]{0,12}".prop_map(Value::from),
                            any::<bool>().prop_map(Value::from),
                        ],
                    ),
                    0..4,
                )
                .prop_map(|entries| entries.into_iter().collect()),
            )
        }

        /// `text` cut at the given fractions into non-empty pieces, on char boundaries.
        fn pieces(text: &str, cuts: &[f64]) -> Vec<String> {
            let mut ends: Vec<usize> = cuts
                .iter()
                .map(|fraction| {
                    let mut end = (text.len() as f64 * fraction) as usize;
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    end
                })
                .collect();
            ends.push(text.len());
            ends.sort_unstable();
            ends.dedup();
            let mut start = 0;
            let mut pieces = Vec::new();
            for end in ends {
                if end > start {
                    pieces.push(text[start..end].to_owned());
                    start = end;
                }
            }
            pieces
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(CASES))]

            #[test]
            fn calls_in_interleaved_pieces_are_assembled_whole(
                calls in prop::collection::vec(call(), 1..4),
                cuts in prop::collection::vec(prop::collection::vec(0.0..1.0f64, 0..4), 4),
                order in prop::collection::vec(0..4usize, 0..64),
            ) {
                // Each call's chunks in its own order: the first with the id and the name, then
                // the arguments in pieces.
                let mut queues: Vec<Vec<Value>> = calls
                    .iter()
                    .enumerate()
                    .map(|(index, (id, name, args))| {
                        let text = Value::Object(args.clone()).to_string();
                        let mut chunks = vec![json!({
                            "index": index, "id": id, "type": "function",
                            "function": {"name": name, "arguments": ""},
                        })];
                        chunks.extend(pieces(&text, &cuts[index]).into_iter().map(|piece| {
                            json!({"index": index, "function": {"arguments": piece}})
                        }));
                        chunks.reverse();
                        chunks
                    })
                    .collect();
                let mut state = StreamState::default();
                let mut push = |delta: Value| {
                    let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]});
                    state.push(&chunk.to_string()).unwrap();
                };
                // Interleave the calls in the generated order, then drain what is left.
                for choice in order.into_iter().chain(0..calls.len()).chain(0..calls.len()) {
                    let index = choice % calls.len();
                    while let Some(delta) = queues[index].pop() {
                        push(delta);
                        if choice < 4 {
                            break;
                        }
                    }
                }
                for queue in &mut queues {
                    while let Some(delta) = queue.pop() {
                        push(delta);
                    }
                }
                state
                    .push(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#)
                    .unwrap();
                let content = state.finish().unwrap().content.unwrap();
                let assembled: Vec<_> = content.function_calls().collect();
                prop_assert_eq!(assembled.len(), calls.len());
                for (call, (id, name, args)) in assembled.into_iter().zip(&calls) {
                    prop_assert_eq!(call.id.as_ref().map(|id| id.as_str()), Some(id.as_str()));
                    prop_assert_eq!(&call.name, name);
                    prop_assert_eq!(&call.args, args);
                }
            }

            #[test]
            fn no_payload_makes_the_assembler_panic(payloads in prop::collection::vec(
                prop_oneof![
                    ".{0,80}",
                    Just("[DONE]".to_owned()),
                    (0..3u32, ".{0,10}", ".{0,10}").prop_map(|(index, name, args)| json!({
                        "choices": [{"delta": {"tool_calls": [
                            {"index": index, "function": {"name": name, "arguments": args}}
                        ]}, "finish_reason": null}]
                    }).to_string()),
                ],
                0..8,
            )) {
                let mut state = StreamState::default();
                for payload in &payloads {
                    let _ = state.push(payload);
                }
                let _ = state.finish();
            }
        }
    }
}
