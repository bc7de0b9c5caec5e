//! Responses API streaming: `response.created`, then per output item `response.output_item.added`,
//! its deltas (`response.output_text.delta`, `response.function_call_arguments.delta` and
//! `.done`, `response.reasoning_summary_text.delta`) and `response.output_item.done`, ending with
//! `response.completed`, `response.incomplete` or `response.failed`, whose response object holds
//! the whole answer and its usage; an `error` event ends the stream. Text and reasoning-summary
//! deltas go out as partial responses.

use std::collections::BTreeMap;

use adk_core::{Content, LlmResponse, Part, Role};
use serde::Deserialize;
use serde_json::Value;

use super::response::{self, ErrorBody, Response};
use crate::error::{Error, ErrorKind};
use crate::exchange::StreamDecoder;

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.created", alias = "response.in_progress")]
    Created { response: Started },
    #[serde(
        rename = "response.output_item.added",
        alias = "response.output_item.done"
    )]
    Item {
        output_index: Option<usize>,
        item: Value,
    },
    #[serde(rename = "response.output_text.delta")]
    TextDelta { delta: String },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningDelta { delta: String },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        output_index: Option<usize>,
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        output_index: Option<usize>,
        item_id: Option<String>,
        arguments: String,
    },
    #[serde(
        rename = "response.completed",
        alias = "response.incomplete",
        alias = "response.failed"
    )]
    Ended { response: Box<Response> },
    #[serde(rename = "error")]
    Error {
        code: Option<String>,
        message: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Started {
    model: Option<String>,
}

/// What a stream has delivered so far.
#[derive(Default)]
pub(super) struct StreamState {
    /// The output items by index, as last seen (the `done` version replaces the `added` one).
    items: BTreeMap<usize, Value>,
    model: Option<String>,
    ended: Option<Box<Response>>,
    /// The terminal event's text, for an error that quotes it.
    ended_text: String,
}

impl StreamDecoder for StreamState {
    /// Takes one SSE payload; returns the partial response to yield, if it carries text or a
    /// reasoning summary.
    fn push(&mut self, data: &str) -> Result<Option<LlmResponse>, Error> {
        let event: Event = serde_json::from_str(data)
            .map_err(|error| Error::decode("a Responses API stream event", error, data))?;
        let partial = match event {
            Event::Created { response } => {
                if response.model.is_some() {
                    self.model = response.model;
                }
                return Ok(None);
            }
            Event::Item { output_index, item } => {
                // Servers that leave `output_index` out (llama.cpp's) name the item by its id.
                let index = output_index
                    .or_else(|| self.index_of(None, item["id"].as_str()))
                    .unwrap_or(self.items.len());
                self.items.insert(index, item);
                return Ok(None);
            }
            Event::TextDelta { delta } => Part::text(delta),
            Event::ReasoningDelta { delta } => Part::thought(delta),
            Event::ArgumentsDelta {
                output_index,
                item_id,
                delta,
            } => {
                let index = self.index_of(output_index, item_id.as_deref());
                if let Some(item) = index.and_then(|index| self.items.get_mut(&index)) {
                    let mut arguments = item["arguments"].as_str().unwrap_or_default().to_owned();
                    arguments.push_str(&delta);
                    item["arguments"] = Value::String(arguments);
                }
                return Ok(None);
            }
            Event::ArgumentsDone {
                output_index,
                item_id,
                arguments,
            } => {
                let index = self.index_of(output_index, item_id.as_deref());
                if let Some(item) = index.and_then(|index| self.items.get_mut(&index)) {
                    item["arguments"] = Value::String(arguments);
                }
                return Ok(None);
            }
            Event::Ended { response } => {
                self.ended = Some(response);
                data.clone_into(&mut self.ended_text);
                return Ok(None);
            }
            Event::Error { code, message } => {
                return Err(response::failed(ErrorBody { code, message }, data));
            }
            Event::Other => return Ok(None),
        };
        if partial.as_text().is_some_and(str::is_empty) {
            return Ok(None);
        }
        let mut response = LlmResponse::new(Content::new(Role::Model, [partial]));
        response.partial = Some(true);
        response.model_version.clone_from(&self.model);
        Ok(Some(response))
    }

    /// The aggregated final response, read from the terminal event's response (with the streamed
    /// items when it carries none); [`ErrorKind::StreamCut`] when the stream ended without one.
    fn finish(self) -> Result<LlmResponse, Error> {
        let Some(ended) = self.ended else {
            return Err(Error::new(
                ErrorKind::StreamCut,
                format!(
                    "the Responses stream ended after {} output item(s) without `response.completed` or `response.incomplete`, so the answer may be incomplete; retry the call",
                    self.items.len()
                ),
            ));
        };
        let streamed = self.items.into_values().collect();
        let mut last = ended.into_llm_response(Some(streamed), &self.ended_text)?;
        // `turnComplete` is left unset, as ADK Python's adapters leave it: only live sessions
        // mark the end of a turn.
        last.partial = Some(false);
        if last.model_version.is_none() {
            last.model_version = self.model;
        }
        Ok(last)
    }
}

impl StreamState {
    /// The index of the item an event names: its `output_index`, else the item whose id is
    /// `item_id`.
    fn index_of(&self, output_index: Option<usize>, item_id: Option<&str>) -> Option<usize> {
        output_index.or_else(|| {
            let id = item_id?;
            self.items
                .iter()
                .find(|(_, item)| item["id"].as_str() == Some(id))
                .map(|(index, _)| *index)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::FinishReason;

    #[test]
    fn deltas_are_partial_and_the_terminal_response_is_the_answer() {
        let mut state = StreamState::default();
        let events = [
            r#"{"type":"response.created","response":{"model":"gpt-5","status":"in_progress","output":[],"usage":null}}"#,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#,
            r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"Think"}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\""}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":":1}","obfuscation":"x"}"#,
            r#"{"type":"response.output_text.delta","output_index":2,"delta":"Hi"}"#,
            r#"{"type":"response.completed","response":{"model":"gpt-5","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}"#,
        ];
        let partials: Vec<_> = events
            .iter()
            .filter_map(|event| state.push(event).unwrap())
            .collect();
        assert_eq!(partials.len(), 2);
        assert!(partials[0].content.as_ref().unwrap().parts[0].thought);
        let last = state.finish().unwrap();
        let content = last.content.unwrap();
        assert_eq!(content.function_calls().next().unwrap().args["a"], 1);
        assert_eq!(last.finish_reason, Some(FinishReason::Stop));
        assert_eq!(last.usage_metadata.unwrap().total_token_count, Some(3));
    }

    #[test]
    fn items_without_an_output_index_are_named_by_their_id() {
        // llama.cpp's server leaves `output_index` out of its events.
        let mut state = StreamState::default();
        for event in [
            r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"a\":1}"}"#,
            r#"{"type":"response.output_item.added","item":{"type":"message","id":"msg_1","content":[]}}"#,
            r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"ok"}"#,
            r#"{"type":"response.output_item.done","item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"ok"}]}}"#,
            r#"{"type":"response.completed","response":{"status":"completed"}}"#,
        ] {
            state.push(event).unwrap();
        }
        let content = state.finish().unwrap().content.unwrap();
        assert_eq!(content.function_calls().next().unwrap().args["a"], 1);
        assert_eq!(content.text().as_deref(), Some("ok"));
    }

    #[test]
    fn errors_and_cut_streams_are_typed() {
        let mut state = StreamState::default();
        let error = state
            .push(r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down"}"#)
            .unwrap_err();
        assert_eq!(error.provider_status(), Some("rate_limit_exceeded"));
        let mut state = StreamState::default();
        state
            .push(r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}"#)
            .unwrap();
        assert_eq!(state.finish().unwrap_err().kind(), ErrorKind::StreamCut);
        let mut state = StreamState::default();
        state
            .push(r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}}"#)
            .unwrap();
        assert_eq!(state.finish().unwrap_err().kind(), ErrorKind::Provider);
    }
}
