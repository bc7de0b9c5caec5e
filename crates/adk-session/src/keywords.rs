//! Turning text into the lowercase words that memory search matches on.

use std::collections::BTreeSet;

use adk_core::{Content, PartData};

/// The distinct lowercase words of `text`: runs of letters and digits (any script).
pub(crate) fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The searchable text of `content`: its text parts (thoughts included), joined by spaces.
pub(crate) fn content_text(content: &Content) -> String {
    let mut text = String::new();
    for part in &content.parts {
        if let PartData::Text(part_text) = &part.data {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(part_text);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercase_and_split_on_punctuation() {
        let found: Vec<String> = words("Paris, PARIS and Zürich; 東京!")
            .into_iter()
            .collect();
        assert_eq!(found, ["and", "paris", "zürich", "東京"]);
    }
}
