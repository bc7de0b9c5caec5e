//! Gemini streaming: each SSE event is a whole `GenerateContentResponse`; text deltas go out as
//! partial responses and every part is merged into the final aggregated response.

use adk_core::{Content, LlmResponse, Part, PartData, Role};

use super::response;
use crate::error::{Error, ErrorKind};

/// What a stream has delivered so far.
#[derive(Default)]
pub(super) struct StreamState {
    parts: Vec<Part>,
    last: LlmResponse,
    events: usize,
}

impl StreamState {
    /// Takes one SSE payload; returns the partial response to yield, if it carries text.
    pub(super) fn push(&mut self, data: &str) -> Result<Option<LlmResponse>, Error> {
        let mut event = response::parse(data)?.into_llm_response();
        self.events += 1;
        let parts = event
            .content
            .take()
            .map(|content| content.parts)
            .unwrap_or_default();
        let text_parts: Vec<Part> = parts
            .iter()
            .filter(|part| matches!(&part.data, PartData::Text(text) if !text.is_empty()))
            .cloned()
            .collect();
        for part in parts {
            merge(&mut self.parts, part);
        }
        // Usage is cumulative and the finish reason comes on the last events: keep the latest.
        if event.usage_metadata.is_some() {
            self.last.usage_metadata = event.usage_metadata.take();
        }
        if event.finish_reason.is_some() {
            self.last.finish_reason = event.finish_reason.take();
            self.last.error_code = event.error_code.take();
            self.last.error_message = event.error_message.take();
        }
        if event.model_version.is_some() {
            self.last.model_version = event.model_version.take();
        }
        for (kept, new) in [
            (
                &mut self.last.grounding_metadata,
                event.grounding_metadata.take(),
            ),
            (
                &mut self.last.citation_metadata,
                event.citation_metadata.take(),
            ),
        ] {
            if new.is_some() {
                *kept = new;
            }
        }
        if text_parts.is_empty() {
            return Ok(None);
        }
        let mut partial = LlmResponse::new(Content::new(Role::Model, text_parts));
        partial.partial = Some(true);
        partial.model_version.clone_from(&self.last.model_version);
        Ok(Some(partial))
    }

    /// The aggregated final response, or [`ErrorKind::StreamCut`] when the stream ended before an
    /// event carried a finish reason.
    pub(super) fn finish(self) -> Result<LlmResponse, Error> {
        if self.last.finish_reason.is_none() && self.last.error_code.is_none() {
            return Err(Error::new(
                ErrorKind::StreamCut,
                format!(
                    "the Gemini stream ended after {} event(s) without a finish reason, so the answer may be incomplete; retry the call",
                    self.events
                ),
            ));
        }
        let mut last = self.last;
        if !self.parts.is_empty() {
            last.content = Some(Content::new(Role::Model, self.parts));
        }
        // `turnComplete` is left unset, as ADK Python's adapters leave it: only live sessions
        // mark the end of a turn.
        last.partial = Some(false);
        Ok(last)
    }
}

/// Appends `part`, joining a text delta onto the previous text part of the same kind (thought or
/// answer). The last thought signature seen is kept; an empty text part carrying nothing is
/// dropped.
fn merge(parts: &mut Vec<Part>, part: Part) {
    if let PartData::Text(text) = &part.data {
        if let Some(last) = parts.last_mut()
            && last.thought == part.thought
            && last.extra == part.extra
            && let PartData::Text(previous) = &mut last.data
        {
            previous.push_str(text);
            if part.thought_signature.is_some() {
                last.thought_signature = part.thought_signature;
            }
            return;
        }
        if text.is_empty() && part.thought_signature.is_none() && part.extra.is_empty() {
            return;
        }
    }
    parts.push(part);
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::FinishReason;

    #[test]
    fn text_deltas_are_partial_and_the_final_response_merges_them() {
        let mut state = StreamState::default();
        let first = state
            .push(r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}], "usageMetadata": {"promptTokenCount": 1}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(first.partial, Some(true));
        assert_eq!(first.content.unwrap().text().as_deref(), Some("Hel"));
        state
            .push(r#"{"candidates": [{"content": {"parts": [{"text": "lo"}], "role": "model"}}]}"#)
            .unwrap();
        let call = state
            .push(r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}], "role": "model"}}]}"#)
            .unwrap();
        assert!(
            call.is_none(),
            "function calls only come in the final response"
        );
        state
            .push(r#"{"candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": "AAEC"}], "role": "model"}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 4}}"#)
            .unwrap();
        let last = state.finish().unwrap();
        assert_eq!(last.partial, Some(false));
        assert_eq!(
            last.turn_complete, None,
            "as ADK Python's adapter leaves it"
        );
        assert_eq!(last.finish_reason, Some(FinishReason::Stop));
        assert_eq!(last.usage_metadata.unwrap().candidates_token_count, Some(4));
        let content = last.content.unwrap();
        assert_eq!(content.text().as_deref(), Some("Hello"));
        assert_eq!(content.parts.len(), 3);
        assert!(content.parts[2].thought_signature.is_some());
    }

    #[test]
    fn a_stream_without_finish_reason_is_cut() {
        let mut state = StreamState::default();
        state
            .push(r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]}"#)
            .unwrap();
        assert_eq!(state.finish().unwrap_err().kind(), ErrorKind::StreamCut);
    }
}
