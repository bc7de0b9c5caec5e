//! The answer step's JSON, `{"answer": ...}`, read back as text (or as the answer's JSON when the
//! request has a response schema), whole or streamed.

use adk_core::{Content, LlmResponse, Part, Role};
use serde_json::Value;

/// How to read the answer step's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AnswerKind {
    /// The answer is a string: its text goes out.
    Text,
    /// The answer follows the request's response schema: its JSON goes out as text.
    Json,
}

/// `response` with the answer's JSON turned into its text. Text that is not the protocol's JSON
/// (an answer cut short by the token limit, say) is left as it is.
pub(super) fn read(kind: AnswerKind, mut response: LlmResponse) -> LlmResponse {
    let Some(content) = response.content.as_mut() else {
        return response;
    };
    let text: String = content
        .parts
        .iter()
        .filter(|part| !part.thought)
        .filter_map(Part::as_text)
        .collect();
    let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(&text) else {
        return response;
    };
    let part = match (reply.remove("answer"), kind) {
        (Some(Value::String(answer)), AnswerKind::Text) => Part::text(answer),
        (Some(answer), _) => Part::text(answer.to_string()),
        (None, _) => return response,
    };
    content
        .parts
        .retain(|part| part.thought || part.as_text().is_none());
    content.parts.push(part);
    response
}

/// Turns streamed JSON deltas into deltas of the answer's text: while the reply reads
/// `{"answer": "...`, the decoded text of the string goes out.
#[derive(Debug)]
pub(super) struct AnswerStream {
    raw: String,
    /// Characters of the decoded answer already sent.
    emitted: usize,
    /// Whether answers are text, so that they can be streamed.
    enabled: bool,
}

impl AnswerStream {
    pub(super) fn new(kind: AnswerKind) -> Self {
        Self {
            raw: String::new(),
            emitted: 0,
            enabled: kind == AnswerKind::Text,
        }
    }

    /// The partial response to yield for `partial`, if any.
    pub(super) fn partial(&mut self, mut partial: LlmResponse) -> Option<LlmResponse> {
        let delta: String = partial
            .content
            .as_ref()?
            .parts
            .iter()
            .filter_map(Part::as_text)
            .collect();
        let text = self.push(&delta)?;
        partial.content = Some(Content::new(Role::Model, [Part::text(text)]));
        Some(partial)
    }

    /// Takes a delta of the raw reply; returns the new text of the answer, if any.
    fn push(&mut self, delta: &str) -> Option<String> {
        self.raw.push_str(delta);
        if !self.enabled {
            return None;
        }
        let start = answer_start(&self.raw)?;
        let decoded = decode_prefix(&self.raw[start..]);
        let fresh: String = decoded.chars().skip(self.emitted).collect();
        if fresh.is_empty() {
            return None;
        }
        self.emitted += fresh.chars().count();
        Some(fresh)
    }
}

/// Where the answer string's characters begin when `raw` starts like `{"answer": "`.
fn answer_start(raw: &str) -> Option<usize> {
    let rest = raw.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix("\"answer\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(raw.len() - rest.len())
}

/// The decoded text of a JSON string body, up to its closing quote or to the last complete escape.
fn decode_prefix(body: &str) -> String {
    let mut decoded = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some((_, escape)) = chars.next() else {
                    break;
                };
                let simple = match escape {
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '/' => Some('/'),
                    'b' => Some('\u{8}'),
                    'f' => Some('\u{c}'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    _ => None,
                };
                if let Some(simple) = simple {
                    decoded.push(simple);
                    continue;
                }
                // `\uXXXX`, perhaps a surrogate pair `\uD83D\uDE00`: decode it with serde_json
                // once complete, else stop and wait for more.
                let take = if body[index..].starts_with("\\uD") || body[index..].starts_with("\\ud")
                {
                    12
                } else {
                    6
                };
                let Some(sequence) = body.get(index..index + take) else {
                    break;
                };
                match serde_json::from_str::<String>(&format!("\"{sequence}\"")) {
                    Ok(text) => decoded.push_str(&text),
                    Err(_) => break,
                }
                for _ in 0..take - 2 {
                    chars.next();
                }
            }
            c => decoded.push(c),
        }
    }
    decoded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_response(text: &str) -> LlmResponse {
        LlmResponse::new(Content::new(Role::Model, [Part::text(text)]))
    }

    #[test]
    fn answers_become_text_and_other_text_stays() {
        let answer = read(
            AnswerKind::Text,
            text_response("{\"answer\": \"Sunny, 21 \\u00b0C.\"}"),
        );
        assert_eq!(
            answer.content.unwrap().text().as_deref(),
            Some("Sunny, 21 °C.")
        );
        let json = read(
            AnswerKind::Json,
            text_response(r#"{"answer": {"temp": 21.5}}"#),
        );
        assert_eq!(
            json.content.unwrap().text().as_deref(),
            Some(r#"{"temp":21.5}"#)
        );
        let cut = read(AnswerKind::Text, text_response("{\"answer\": \"Sunny and"));
        assert_eq!(
            cut.content.unwrap().text().as_deref(),
            Some("{\"answer\": \"Sunny and")
        );
        assert!(
            read(AnswerKind::Text, LlmResponse::default())
                .content
                .is_none()
        );
    }

    #[test]
    fn streamed_answers_come_out_as_decoded_text() {
        let mut stream = AnswerStream::new(AnswerKind::Text);
        let deltas = [
            "{",
            "\"answer\"",
            ": \"",
            "Hi",
            " \\",
            "\"you\\",
            "\" \\u00",
            "e9 \\uD83D",
            "\\uDE00",
            "\"}",
        ];
        let out: Vec<String> = deltas
            .iter()
            .filter_map(|delta| stream.push(delta))
            .collect();
        assert_eq!(out.concat(), "Hi \"you\" é 😀");
        assert_eq!(out[0], "Hi");
        let mut json = AnswerStream::new(AnswerKind::Json);
        assert!(json.partial(text_response("{\"answer\": \"x")).is_none());
    }
}
