//! ROUGE-1 as ADK Python scores `response_match_score`: unigram overlap of an answer with the
//! expected one, on tokens from a Unicode-aware tokenizer with the Porter stemmer.
//!
//! The tokenizer lowercases the NFKC form of the text and splits it into words of letters, digits
//! and combining marks; Chinese, Japanese and Korean characters are tokens of their own, and Thai,
//! Lao, Khmer and Myanmar text is cut before each base letter. ASCII words longer than three
//! letters are stemmed; other words are kept as they are.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization as _;

use super::porter;

/// Precision, recall and their harmonic mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RougeScore {
    /// The share of the candidate's tokens found in the reference.
    pub precision: f64,
    /// The share of the reference's tokens found in the candidate.
    pub recall: f64,
    /// The harmonic mean of the two (0 when both are 0).
    pub fmeasure: f64,
}

/// The ROUGE-1 score of `candidate` against `reference`.
///
/// ```
/// let score = adk_eval::rouge1("It is sunny in Paris.", "Paris is sunny today");
/// assert_eq!(score.precision, 0.6);
/// assert_eq!(score.recall, 0.75);
/// ```
pub fn rouge1(candidate: &str, reference: &str) -> RougeScore {
    let (reference, candidate) = (rouge_tokens(reference), rouge_tokens(candidate));
    let (reference, candidate) = (counts(&reference), counts(&candidate));
    let overlap: usize = reference
        .iter()
        .map(|(token, count)| (*count).min(candidate.get(token).copied().unwrap_or(0)))
        .sum();
    let reference_total: usize = reference.values().sum();
    let candidate_total: usize = candidate.values().sum();
    // Counts are far below 2^53, so these conversions are exact.
    let precision = overlap as f64 / candidate_total.max(1) as f64;
    let recall = overlap as f64 / reference_total.max(1) as f64;
    let fmeasure = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    RougeScore {
        precision,
        recall,
        fmeasure,
    }
}

fn counts(tokens: &[String]) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for token in tokens {
        *counts.entry(token.as_str()).or_default() += 1;
    }
    counts
}

/// The tokens ROUGE compares in `text`: to see why an answer scores as it does.
///
/// ```
/// assert_eq!(adk_eval::metrics::rouge_tokens("It's raining!"), ["it", "s", "rain"]);
/// ```
pub fn rouge_tokens(text: &str) -> Vec<String> {
    let normalized: String = text.nfkc().collect::<String>().to_lowercase();
    let mut spaced = String::with_capacity(normalized.len());
    for c in normalized.chars() {
        if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else if is_non_spaced_script(c) {
            // A combining mark stays on the letter before it; a base letter starts a cluster.
            if !is_mark(c) {
                spaced.push(' ');
            }
            spaced.push(c);
        } else if is_word_char(c) {
            spaced.push(c);
        } else {
            spaced.push(' ');
        }
    }
    let mut tokens = Vec::new();
    for word in spaced.split_whitespace() {
        if word.is_ascii() {
            tokens.extend(ascii_tokens(word));
        } else {
            tokens.push(word.to_owned());
        }
    }
    tokens
}

/// An ASCII word as ROUGE's own tokenizer reads it: runs of lowercase letters and digits, those
/// longer than three letters stemmed.
fn ascii_tokens(word: &str) -> Vec<String> {
    word.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|token| !token.is_empty())
        .map(|token| {
            if token.len() > 3 {
                porter::stem(token)
            } else {
                token.to_owned()
            }
        })
        .filter(|token| !token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric()))
        .collect()
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3040..=0x309F | 0x30A0..=0x30FF | 0xAC00..=0xD7AF)
}

fn is_non_spaced_script(c: char) -> bool {
    matches!(c as u32, 0x0E00..=0x0E7F | 0x0E80..=0x0EFF | 0x1780..=0x17FF | 0x1000..=0x109F)
}

fn is_mark(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    )
}

/// Letters, digits and numbers (Python's `isalnum`), and combining marks.
fn is_word_char(c: char) -> bool {
    use GeneralCategory as Category;
    matches!(
        get_general_category(c),
        Category::UppercaseLetter
            | Category::LowercaseLetter
            | Category::TitlecaseLetter
            | Category::ModifierLetter
            | Category::OtherLetter
            | Category::DecimalNumber
            | Category::LetterNumber
            | Category::OtherNumber
    ) || is_mark(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_stemmed_ascii_words_and_unicode_words() {
        assert_eq!(
            rouge_tokens("It's RAINING in Tokyo, 19°C!"),
            ["it", "s", "rain", "in", "tokyo", "19", "c"]
        );
        assert_eq!(rouge_tokens("東京は雨"), ["東", "京", "は", "雨"]);
        assert_eq!(rouge_tokens("Café naïve"), ["café", "naïve"]);
        assert_eq!(rouge_tokens("ﬁne"), ["fine"]);
    }

    #[test]
    fn scores_count_repeated_tokens_once_each() {
        let score = rouge1("sunny sunny sunny", "sunny");
        assert_eq!((score.precision, score.recall), (1.0 / 3.0, 1.0));
        assert_eq!(rouge1("", "").fmeasure, 0.0);
        assert_eq!(rouge1("Hello there", "hello, THERE.").fmeasure, 1.0);
    }
}
