//! The answer step's JSON, `{"answer": ...}`, read back as text (or as the answer's JSON when the
//! request has a response schema), whole or streamed.
//!
//! A free sentence (an answer that quotes no tool result) ends where it would say a phrase of
//! three words a second time: greedy decoding keeps a small model in a loop once it is in one
//! ("Weather Agent, a weather agent, I am a weather agent, ..."), which no sampling penalty
//! removes without turning its other answers into word salad.

use std::borrow::Cow;

use adk_core::{Content, LlmResponse, Part, Role};
use serde_json::Value;

/// How to read the answer step's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AnswerKind {
    /// The answer is a string that quotes tool results: its text goes out.
    Text,
    /// The answer is a free sentence: its text goes out, up to where it starts repeating itself.
    Sentence,
    /// The answer follows the request's response schema: its JSON goes out as text.
    Json,
}

impl AnswerKind {
    fn is_text(self) -> bool {
        matches!(self, Self::Text | Self::Sentence)
    }
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
        (Some(Value::String(answer)), AnswerKind::Sentence) => {
            Part::text(ended_before_repeat(&answer))
        }
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
/// `{"answer": "...`, the decoded text of the string goes out. A free sentence's last two words
/// are held back until its end, since a repeat they begin would cut them; [`rest`](Self::rest)
/// sends them.
#[derive(Debug)]
pub(super) struct AnswerStream {
    raw: String,
    /// Characters of the decoded answer already sent.
    emitted: usize,
    kind: AnswerKind,
}

impl AnswerStream {
    pub(super) fn new(kind: AnswerKind) -> Self {
        Self {
            raw: String::new(),
            emitted: 0,
            kind,
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

    /// The partial response with the text of `whole` not yet sent (a free sentence's held-back
    /// words), if any.
    pub(super) fn rest(&self, whole: &LlmResponse) -> Option<LlmResponse> {
        if self.kind != AnswerKind::Sentence {
            return None;
        }
        let text = whole.content.as_ref()?.text()?;
        let rest: String = text.chars().skip(self.emitted).collect();
        if rest.is_empty() {
            return None;
        }
        let mut partial = LlmResponse::new(Content::new(Role::Model, [Part::text(rest)]));
        partial.partial = Some(true);
        partial.model_version.clone_from(&whole.model_version);
        Some(partial)
    }

    /// Takes a delta of the raw reply; returns the new text of the answer, if any.
    fn push(&mut self, delta: &str) -> Option<String> {
        self.raw.push_str(delta);
        if !self.kind.is_text() {
            return None;
        }
        let start = answer_start(&self.raw)?;
        let decoded = decode_prefix(&self.raw[start..]);
        let settled = match self.kind {
            AnswerKind::Sentence => &decoded[..settled_end(&decoded)],
            _ => decoded.as_str(),
        };
        let fresh: String = settled.chars().skip(self.emitted).collect();
        if fresh.is_empty() {
            return None;
        }
        self.emitted += fresh.chars().count();
        Some(fresh)
    }
}

/// The byte ranges of `text`'s words: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = None;
    text.char_indices()
        .chain(std::iter::once((text.len(), ' ')))
        .filter_map(move |(index, c)| match (c.is_alphanumeric(), start) {
            (true, None) => {
                start = Some(index);
                None
            }
            (false, Some(begun)) => {
                start = None;
                Some((begun, index))
            }
            _ => None,
        })
}

/// Where the first phrase of three words (case ignored) that `text` has said before starts again.
fn repeat_start(text: &str) -> Option<usize> {
    let words: Vec<(usize, String)> = words(text)
        .map(|(start, end)| (start, text[start..end].to_lowercase()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    words.windows(3).find_map(|phrase| {
        let said = [&phrase[0].1, &phrase[1].1, &phrase[2].1];
        (!seen.insert(said)).then_some(phrase[0].0)
    })
}

/// `text` up to the end of its last word, without the spaces and marks after it.
fn to_last_word(text: &str) -> &str {
    text.trim_end_matches(|c: char| !c.is_alphanumeric())
}

/// A free sentence ended before it says a phrase of three words again, with the sentence's own
/// closing mark (`.` if it has none).
fn ended_before_repeat(answer: &str) -> Cow<'_, str> {
    let Some(start) = repeat_start(answer) else {
        return Cow::Borrowed(answer);
    };
    let close = answer
        .chars()
        .last()
        .filter(|c| ".!?".contains(*c))
        .unwrap_or('.');
    Cow::Owned(format!("{}{close}", to_last_word(&answer[..start])))
}

/// How much of a free sentence streamed so far is sure to stay: up to a repeat if one has begun,
/// else all but its last two whole words (a repeat they start would cut them), up to the end of
/// the word before what is held back. A word the text ends in may still grow, so it counts as
/// not yet said.
fn settled_end(decoded: &str) -> usize {
    let said = decoded.trim_end_matches(char::is_alphanumeric);
    if let Some(start) = repeat_start(said) {
        return to_last_word(&said[..start]).len();
    }
    let starts: Vec<usize> = words(said).map(|(start, _)| start).collect();
    match starts.len().checked_sub(2) {
        Some(held) => to_last_word(&said[..starts[held]]).len(),
        None => 0,
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

    fn answer_json(answer: &str) -> String {
        serde_json::json!({ "answer": answer }).to_string()
    }

    #[test]
    fn a_free_sentence_ends_before_it_says_a_phrase_again() {
        let looped = "Weather Agent, a weather agent, I am a weather agent, I'm here to help.";
        let read_as = |kind, answer: &str| {
            read(kind, text_response(&answer_json(answer)))
                .content
                .unwrap()
                .text()
                .unwrap()
        };
        assert_eq!(
            read_as(AnswerKind::Sentence, looped),
            "Weather Agent, a weather agent, I am."
        );
        assert_eq!(
            read_as(
                AnswerKind::Sentence,
                "weather, weather, weather, weather, city?"
            ),
            "weather?"
        );
        // Two words said twice are no loop ("New York, New York"), and an answer that quotes
        // tool results is left whole.
        let twice = "New York, New York is windy.";
        assert_eq!(read_as(AnswerKind::Sentence, twice), twice);
        assert_eq!(read_as(AnswerKind::Text, looped), looped);
    }

    #[test]
    fn a_streamed_free_sentence_sends_only_what_stays() {
        for answer in [
            "Weather Agent, a weather agent, I am a weather agent, I'm here to help.",
            // "go to a" is said again only if the word after "to" stays "a": while "an" is
            // being written, the sentence must not end.
            "Go to a park, then go to an inn.",
            "Hello, I'm here to answer your questions about the weather.",
        ] {
            let raw = answer_json(answer);
            let mut stream = AnswerStream::new(AnswerKind::Sentence);
            let sent: String = raw
                .chars()
                .filter_map(|c| stream.push(&c.to_string()))
                .collect();
            let whole = ended_before_repeat(answer);
            assert!(
                whole.starts_with(&sent),
                "{sent:?} is not how {whole:?} starts"
            );
            // All but the last two words went out as they came, and the rest goes out last.
            let held: Vec<&str> = whole[sent.len()..].split_whitespace().collect();
            assert!(held.len() <= 2, "{held:?} of {whole:?} was held back");
            let rest = stream
                .rest(&read(AnswerKind::Sentence, text_response(&raw)))
                .expect("a rest");
            assert!(rest.is_partial());
            assert_eq!(sent + &rest.content.unwrap().text().unwrap(), whole);
        }
        assert_eq!(
            ended_before_repeat("Go to a park, then go to an inn."),
            "Go to a park, then go to an inn."
        );
    }
}
