//! Anthropic streaming: `message_start`, then per content block `content_block_start`, its
//! deltas (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`) and
//! `content_block_stop`, then `message_delta` with the stop reason and the final usage, and
//! `message_stop`; `ping` may come anywhere and an `error` event ends the stream. Text and
//! thinking deltas go out as partial responses; the blocks are assembled for the final one.

use std::collections::BTreeMap;

use adk_core::{Content, LlmResponse, Part, Role};
use serde::Deserialize;
use serde_json::Value;

use super::response::{self, Usage};
use crate::error::{Error, ErrorKind};
use crate::exchange::StreamDecoder;
use crate::parts::streamed_arguments;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: response::Message,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: MessageDelta,
        usage: Option<Usage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: ErrorBody,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

/// One content block as its deltas arrive.
enum Block {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A block of another kind, kept as it started.
    Other(Value),
}

/// What a stream has delivered so far.
#[derive(Default)]
pub(super) struct StreamState {
    blocks: BTreeMap<usize, Block>,
    model: Option<String>,
    usage: Option<Usage>,
    stop_reason: Option<String>,
    stopped: bool,
}

impl StreamDecoder for StreamState {
    /// Takes one SSE payload; returns the partial response to yield, if it carries text or
    /// thinking.
    fn push(&mut self, data: &str) -> Result<Option<LlmResponse>, Error> {
        let event: Event = serde_json::from_str(data)
            .map_err(|error| Error::decode("an Anthropic stream event", error, data))?;
        match event {
            Event::MessageStart { message } => {
                self.model = message.model;
                self.usage = message.usage;
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let text = |key: &str| content_block[key].as_str().unwrap_or_default().to_owned();
                let block = match content_block["type"].as_str() {
                    Some("text") => Block::Text(text("text")),
                    Some("thinking") => Block::Thinking {
                        thinking: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => Block::RedactedThinking(text("data")),
                    Some("tool_use") => Block::ToolUse {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    _ => Block::Other(content_block),
                };
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => return self.delta(index, delta),
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(later) = usage {
                    self.usage.get_or_insert_with(Usage::default).update(later);
                }
            }
            Event::MessageStop {} => self.stopped = true,
            Event::Error { error } => {
                let kind = error.kind.unwrap_or_else(|| "error".to_owned());
                return Err(Error::new(
                    ErrorKind::Provider,
                    format!(
                        "Anthropic reported an error mid-stream: {kind}: {}; retry the call",
                        error.message.as_deref().unwrap_or("(no message)")
                    ),
                )
                .with_body(data.to_owned())
                .with_provider_status(Some(kind)));
            }
            Event::ContentBlockStop {} | Event::Ping {} | Event::Unknown => {}
        }
        Ok(None)
    }

    /// The aggregated final response; [`ErrorKind::StreamCut`] when the stream ended before the
    /// message stopped, and [`ErrorKind::Decode`] when a tool call's arguments are not a whole
    /// JSON object (a call cut off mid-arguments never reaches a tool).
    fn finish(self) -> Result<LlmResponse, Error> {
        if !self.stopped && self.stop_reason.is_none() {
            return Err(Error::new(
                ErrorKind::StreamCut,
                "the Anthropic stream ended before `message_stop`, so the answer may be incomplete; retry the call",
            ));
        }
        let mut parts = Vec::with_capacity(self.blocks.len());
        for block in self.blocks.into_values() {
            parts.push(match block {
                Block::Text(text) if text.is_empty() => continue,
                Block::Text(text) => Part::text(text),
                Block::Thinking {
                    thinking,
                    signature,
                } => response::thinking_part(thinking, signature),
                Block::RedactedThinking(data) => response::redacted_thinking_part(data),
                Block::ToolUse { id, name, json } => {
                    let Some(input) = streamed_arguments(&json) else {
                        return Err(Error::new(
                            ErrorKind::Decode,
                            format!(
                                "the model's call of `{name}` ended mid-arguments (stop reason {}), so it was not made: {json}; raise max_output_tokens or retry",
                                self.stop_reason.as_deref().unwrap_or("none")
                            ),
                        ));
                    };
                    response::tool_use_part(id, name, input)
                }
                Block::Other(block) => response::block_part(&block)?,
            });
        }
        let mut last =
            response::assemble(parts, self.stop_reason.as_deref(), self.usage, self.model);
        // `turnComplete` is left unset, as ADK Python's adapters leave it: only live sessions
        // mark the end of a turn.
        last.partial = Some(false);
        Ok(last)
    }
}

impl StreamState {
    fn delta(&mut self, index: usize, delta: Delta) -> Result<Option<LlmResponse>, Error> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(Error::new(
                ErrorKind::Decode,
                format!("an Anthropic stream sent a delta for block {index}, which never started"),
            ));
        };
        let partial = match (block, delta) {
            (Block::Text(text), Delta::Text { text: delta }) => {
                text.push_str(&delta);
                Part::text(delta)
            }
            (Block::Thinking { thinking, .. }, Delta::Thinking { thinking: delta }) => {
                thinking.push_str(&delta);
                Part::thought(delta)
            }
            (Block::Thinking { signature, .. }, Delta::Signature { signature: delta }) => {
                signature.push_str(&delta);
                return Ok(None);
            }
            (Block::ToolUse { json, .. }, Delta::InputJson { partial_json }) => {
                json.push_str(&partial_json);
                return Ok(None);
            }
            _ => return Ok(None),
        };
        if partial.as_text().is_some_and(str::is_empty) {
            return Ok(None);
        }
        let mut response = LlmResponse::new(Content::new(Role::Model, [partial]));
        response.partial = Some(true);
        response.model_version.clone_from(&self.model);
        Ok(Some(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::FinishReason;

    fn run(events: &[&str]) -> (Vec<LlmResponse>, StreamState) {
        let mut state = StreamState::default();
        let partials = events
            .iter()
            .filter_map(|event| state.push(event).unwrap())
            .collect();
        (partials, state)
    }

    #[test]
    fn thinking_text_and_a_tool_call_in_pieces() {
        let (partials, state) = run(&[
            r#"{"type":"message_start","message":{"model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type": "ping"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Sure"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"ci"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ty\":\"Paris\"}"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(partials.len(), 2);
        assert!(partials[0].content.as_ref().unwrap().parts[0].thought);
        let last = state.finish().unwrap();
        let content = last.content.unwrap();
        assert_eq!(content.parts.len(), 3);
        assert_eq!(content.text().as_deref(), Some("Sure"));
        assert_eq!(
            content.function_calls().next().unwrap().args["city"],
            "Paris"
        );
        assert_eq!(last.finish_reason, Some(FinishReason::Stop));
        assert_eq!(last.usage_metadata.unwrap().total_token_count, Some(14));
    }

    #[test]
    fn errors_cut_streams_and_cut_calls_are_typed() {
        let mut state = StreamState::default();
        let error = state
            .push(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Provider);
        assert_eq!(error.provider_status(), Some("overloaded_error"));
        let (_, state) = run(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ]);
        assert_eq!(state.finish().unwrap_err().kind(), ErrorKind::StreamCut);
        let (_, state) = run(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let error = state.finish().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Decode);
        assert!(error.to_string().contains("max_tokens"), "{error}");
        let mut state = StreamState::default();
        assert_eq!(
            state
                .push(r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}"#)
                .unwrap_err()
                .kind(),
            ErrorKind::Decode
        );
    }
}
