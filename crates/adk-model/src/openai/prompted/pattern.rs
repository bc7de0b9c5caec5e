//! The `pattern` of the answer's JSON string: one sentence of a bounded number of words, each a
//! word the conversation holds, a common English word or a number, and, after tool results, one
//! that must quote their values with a few words around them.
//!
//! Patterns are regular expressions in the subset llama.cpp turns into a grammar (anchored,
//! groups, classes, `{m,n}` repetition). Holding a small model to the conversation's words keeps it
//! from stating what nobody said (a sky no tool reported, say); bounding the words keeps it from
//! running on, and the sentence must end with `.`, `!` or `?`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Words any answer may use besides the conversation's own: English function words, greetings
/// and courtesies. Intensifiers ("very", "quite", "really") are left out: a small model pads its
/// answers with them ("quite the windy", "very, very, very, 16.5 °C").
const COMMON_WORDS: &str = "a an the and or but so if then than that this these those it its is are \
    was were be been being am i you he she we they me him her us them my your our their his \
    in on at of for to from with by about as into over under near not no yes \
    also just still now today currently do does did can could will would should may might must \
    have has had what which who where when why how there here please thanks thank sorry hello hi \
    welcome good morning afternoon evening here's there's it's i'm you're";

/// Between words: a space, after a comma, semicolon or colon perhaps.
const GAP: &str = "[,;:]? ";

/// How many words a plain answer may have.
pub(super) const SENTENCE_WORDS: usize = 24;

/// Words allowed before the first quoted value, between two, and after the last. They are few: a
/// small model given room around the facts fills it with comment and restatement ("with a sky
/// that is just as sunny as it can be"); fewer than four cut it off mid-phrase ("19.0 Celsius
/// and."). A value quoted by its start also allows the rest of its words after it.
const LEAD_WORDS: usize = 4;
const BETWEEN_WORDS: usize = 4;
const TAIL_WORDS: usize = 4;

/// How many words of a value must be quoted: a value this long or shorter (a city, an error
/// message with its suggestions) is quoted whole, a longer one by its start. Quoting only the
/// start of a short message let a small model finish it with words of its own ("No weather data
/// for Sydney was sentence.").
const QUOTED_WORDS: usize = 12;

/// The most values an answer is made to quote; a result with more is not quoted.
pub(super) const MAX_QUOTED_VALUES: usize = 3;

/// The words an answer may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Vocabulary {
    words: BTreeSet<String>,
}

impl Vocabulary {
    /// The words and numbers of `texts`, lowercased, and the common words.
    pub(super) fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut words: BTreeSet<String> =
            COMMON_WORDS.split_whitespace().map(str::to_owned).collect();
        for text in texts {
            words.extend(words_of(text));
        }
        Self { words }
    }

    /// The vocabulary without the words of `values` but the common ones: what an answer must
    /// quote it states once, in the quote, instead of restating it around it ("a rainy and rainy
    /// one").
    fn without_words_of<'a>(&self, values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut words = self.words.clone();
        for word in values.into_iter().flat_map(words_of) {
            if !COMMON_WORDS.split_whitespace().any(|common| common == word) {
                words.remove(&word);
            }
        }
        Self { words }
    }

    /// One word of the vocabulary, its first letter in either case.
    fn word(&self) -> String {
        let alternatives: Vec<String> = self.words.iter().map(|word| literal(word)).collect();
        format!("(?:{})", alternatives.join("|"))
    }
}

/// The words and numbers of `text`, lowercased. A decimal point belongs to its number ("16.5");
/// elsewhere it ends a word.
fn words_of(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let decimal_point = c == '.'
            && word
                .chars()
                .last()
                .is_some_and(|last| last.is_ascii_digit())
            && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric() || c == '\'' || decimal_point {
            word.push(c);
        } else {
            push_word(&mut words, &word);
            word.clear();
        }
    }
    push_word(&mut words, &word);
    words
}

fn push_word(words: &mut Vec<String>, word: &str) {
    let word = word.trim_matches('\'').to_lowercase();
    if !word.is_empty() {
        words.push(word);
    }
}

/// One sentence of at most `words` words of `vocabulary`.
pub(super) fn sentence(vocabulary: &Vocabulary, words: usize) -> String {
    let word = vocabulary.word();
    format!(
        "^(?:{word}{GAP}){{0,{}}}{word}[.!?]$",
        words.saturating_sub(1)
    )
}

/// One sentence of words of `vocabulary` that quotes each of `values` (at most
/// [`MAX_QUOTED_VALUES`]), in any order, with a few words around them; `None` when there is
/// nothing that can be quoted.
///
/// A value is quoted whole when it is short, else by its first twelve words, and the words of it
/// left out may follow it; its first letter may change case, as it does at the start of a
/// sentence. Values a JSON string could only hold escaped (quotes, backslashes, control
/// characters) cannot be required and are left out.
pub(super) fn quoting(vocabulary: &Vocabulary, values: &[String]) -> Option<String> {
    // Each value's quoted start and how many of its words are left out.
    let mut quoted: Vec<(String, usize)> = Vec::new();
    for value in values {
        if value.trim().is_empty()
            || value
                .chars()
                .any(|c| c == '"' || c == '\\' || c.is_control())
        {
            continue;
        }
        let words: Vec<&str> = value.split_whitespace().collect();
        let kept = words.len().min(QUOTED_WORDS);
        let start = words[..kept].join(" ");
        if !quoted.iter().any(|(earlier, _)| *earlier == start) {
            quoted.push((start, words.len() - kept));
        }
    }
    if quoted.is_empty() || quoted.len() > MAX_QUOTED_VALUES {
        return None;
    }
    // A value quoted by its start keeps its words: the rest of it may follow the quote.
    let whole = quoted
        .iter()
        .filter(|(_, left_out)| *left_out == 0)
        .map(|(value, _)| value.as_str());
    let word = vocabulary.without_words_of(whole).word();
    let orders: Vec<String> = permutations(&quoted.iter().collect::<Vec<_>>())
        .into_iter()
        .map(|order| {
            let mut alternative = format!("(?:{word}{GAP}){{0,{LEAD_WORDS}}}");
            let mut left_out = 0;
            for (index, (value, rest)) in order.iter().enumerate() {
                if index > 0 {
                    let most = BETWEEN_WORDS + left_out;
                    let _ = write!(alternative, "(?:{GAP}{word}){{0,{most}}}{GAP}");
                }
                alternative.push_str(&literal(value));
                alternative.push_str("(?:'s)?");
                left_out = *rest;
            }
            let most = TAIL_WORDS + left_out;
            let _ = write!(alternative, "(?:{GAP}{word}){{0,{most}}}");
            alternative
        })
        .collect();
    let body = match orders.as_slice() {
        [only] => only.clone(),
        _ => format!("(?:{})", orders.join("|")),
    };
    Some(format!("^{body}[.!?]$"))
}

/// `value` as a pattern matching it literally, its first letter in either case.
fn literal(value: &str) -> String {
    let mut chars = value.chars();
    let mut out = String::with_capacity(value.len() + 8);
    if let Some(first) = chars.next() {
        let (lower, upper): (String, String) = (
            first.to_lowercase().collect(),
            first.to_uppercase().collect(),
        );
        if lower != upper && lower.chars().count() == 1 && upper.chars().count() == 1 {
            let _ = write!(out, "[{lower}{upper}]");
        } else {
            escape_into(first, &mut out);
        }
    }
    for c in chars {
        escape_into(c, &mut out);
    }
    out
}

fn escape_into(c: char, out: &mut String) {
    if "\\.^$|?*+()[]{}".contains(c) {
        out.push('\\');
    }
    out.push(c);
}

/// Every order of `items` (six for three items).
fn permutations<'a, T>(items: &[&'a T]) -> Vec<Vec<&'a T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for index in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(index);
        for tail in permutations(&rest) {
            let mut order = vec![first];
            order.extend(tail);
            all.push(order);
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_regex_characters_and_free_the_first_letter() {
        assert_eq!(literal("new york"), "[nN]ew york");
        assert_eq!(literal("19.5 (C)"), r"19\.5 \(C\)");
        assert_eq!(literal("東京"), "東京");
    }

    #[test]
    fn the_vocabulary_is_the_conversations_words_and_common_ones() {
        let vocabulary = Vocabulary::of(["It's RAINY in Tokyo, 19.5 °C! Done.", "sky"]);
        for word in [
            "it's", "rainy", "tokyo", "sky", "the", "hello", "19.5", "done",
        ] {
            assert!(vocabulary.words.contains(word), "{word}");
        }
        assert!(!vocabulary.words.contains("sunny") && !vocabulary.words.contains("19"));
        let word = vocabulary.word();
        assert!(
            word.contains("|[rR]ainy|") && word.contains(r"(?:19\.5|"),
            "{word}"
        );
    }

    #[test]
    fn values_are_quoted_in_any_order_and_long_ones_by_their_start() {
        let vocabulary = Vocabulary::of(["x"]);
        let pattern = quoting(&vocabulary, &["Tokyo".into(), "rainy".into()]).unwrap();
        assert!(pattern.starts_with("^(?:(?:"), "{pattern}");
        assert_eq!(
            pattern.matches("[tT]okyo(?:'s)?").count(),
            2,
            "both orders: {pattern}"
        );
        assert!(pattern.ends_with("[.!?]$"));
        let message = "no weather data for Berlin; try Paris, London, Tokyo or New York";
        let short = quoting(&vocabulary, &[message.into()]).unwrap();
        assert!(
            short.contains(
                "[nN]o weather data for Berlin; try Paris, London, Tokyo or New York(?:'s)?"
            ),
            "{short}"
        );
        let long_value =
            "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
        let long = quoting(&vocabulary, &[long_value.into()]).unwrap();
        assert!(
            long.contains(
                "[oO]ne two three four five six seven eight nine ten eleven twelve(?:'s)?"
            ),
            "{long}"
        );
        assert!(!long.contains("thirteen"), "{long}");
        // The two words left out of the value ("thirteen fourteen") may follow it, besides the
        // usual tail.
        let tail = format!("{{0,{}}}[.!?]$", TAIL_WORDS + 2);
        assert!(long.ends_with(&tail), "{long}");
        let between = quoting(&vocabulary, &[long_value.into(), "x".into()]).unwrap();
        assert!(
            between.contains(&format!("{{0,{}}}{GAP}[xX]", BETWEEN_WORDS + 2)),
            "{between}"
        );
    }

    #[test]
    fn a_value_is_stated_once_in_its_quote() {
        let vocabulary = Vocabulary::of(["Is it rainy in Tokyo today? No data for Rome."]);
        let pattern = quoting(
            &vocabulary,
            &["Tokyo".into(), "rainy".into(), "no data for Rome".into()],
        )
        .unwrap();
        let around = vocabulary
            .without_words_of(["Tokyo", "rainy", "no data for Rome"])
            .word();
        assert!(pattern.contains(&around), "{pattern}");
        for gone in ["[tT]okyo|", "[rR]ainy|", "[rR]ome|", "[dD]ata|"] {
            assert!(!around.contains(gone), "{gone} in {around}");
        }
        // Common words stay, for the sentence around the quotes.
        for kept in ["|[nN]o|", "|[fF]or|", "|[tT]oday|"] {
            assert!(around.contains(kept), "{kept} not in {around}");
        }
    }

    #[test]
    fn unquotable_values_are_left_out() {
        let vocabulary = Vocabulary::of([]);
        assert_eq!(quoting(&vocabulary, &[]), None);
        assert_eq!(
            quoting(&vocabulary, &["say \"hi\"".into(), " ".into()]),
            None
        );
        let four: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(quoting(&vocabulary, &four), None);
        assert_eq!(permutations(&four[..3].iter().collect::<Vec<_>>()).len(), 6);
    }

    #[test]
    fn a_sentence_has_a_bounded_number_of_words() {
        let vocabulary = Vocabulary::of(["Hi"]);
        let word = vocabulary.word();
        assert_eq!(
            sentence(&vocabulary, 3),
            format!("^(?:{word}{GAP}){{0,2}}{word}[.!?]$")
        );
    }
}
