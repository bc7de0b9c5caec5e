//! The Porter stemmer as NLTK runs it by default (its "NLTK extensions" mode), which is the
//! stemmer ROUGE scoring uses in ADK Python: Porter's 1980 suffix-stripping steps with NLTK's
//! table of irregular forms and its changes to steps 1a, 1b, 1c and 2.
//!
//! Words are lowercase ASCII here (the ROUGE tokenizer makes them so); the stemmer works on bytes.

/// Irregular forms NLTK maps directly, and what they map to.
const IRREGULAR: [(&str, &str); 16] = [
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
];

/// The stem of `word` (lowercased first).
///
/// ```text
/// caresses -> caress   ponies -> poni   relational -> relat   hopping -> hop
/// ```
pub(crate) fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some((_, stem)) = IRREGULAR.iter().find(|(form, _)| *form == lower) {
        return (*stem).to_owned();
    }
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut word = lower.into_bytes();
    step1a(&mut word);
    step1b(&mut word);
    step1c(&mut word);
    step2(&mut word);
    step3(&mut word);
    step4(&mut word);
    step5a(&mut word);
    step5b(&mut word);
    // Only ASCII bytes are removed or added, so the bytes stay UTF-8.
    String::from_utf8(word).unwrap_or_default()
}

/// Which letters of `word` are consonants: everything but a, e, i, o, u, and y after a consonant.
fn consonants(word: &[u8]) -> Vec<bool> {
    let mut flags: Vec<bool> = Vec::with_capacity(word.len());
    for (index, &letter) in word.iter().enumerate() {
        let consonant = match letter {
            b'a' | b'e' | b'i' | b'o' | b'u' => false,
            b'y' => index == 0 || !flags[index - 1],
            _ => true,
        };
        flags.push(consonant);
    }
    flags
}

fn is_consonant(word: &[u8], index: usize) -> bool {
    consonants(&word[..=index])[index]
}

/// Porter's m: how many vowel-consonant sequences the stem has.
fn measure(stem: &[u8]) -> usize {
    consonants(stem)
        .windows(2)
        .filter(|pair| !pair[0] && pair[1])
        .count()
}

fn contains_vowel(stem: &[u8]) -> bool {
    consonants(stem).iter().any(|consonant| !consonant)
}

/// Condition *d: ends with a double consonant.
fn ends_double_consonant(word: &[u8]) -> bool {
    let n = word.len();
    n >= 2 && word[n - 1] == word[n - 2] && is_consonant(word, n - 1)
}

/// Condition *o: ends consonant-vowel-consonant, the last not w, x or y (NLTK also counts a
/// two-letter vowel-consonant word).
fn ends_cvc(word: &[u8]) -> bool {
    let n = word.len();
    if n >= 3 {
        let flags = consonants(word);
        flags[n - 3] && !flags[n - 2] && flags[n - 1] && !matches!(word[n - 1], b'w' | b'x' | b'y')
    } else if n == 2 {
        let flags = consonants(word);
        !flags[0] && flags[1]
    } else {
        false
    }
}

/// A condition a rule's stem must meet.
type Condition<'a> = &'a dyn Fn(&[u8]) -> bool;

/// One suffix rule: replace `suffix` by `replacement` when the stem meets the condition.
struct Rule<'a> {
    suffix: &'a [u8],
    replacement: &'a [u8],
    condition: Option<Condition<'a>>,
}

fn rule<'a>(suffix: &'a str, replacement: &'a str, condition: Option<Condition<'a>>) -> Rule<'a> {
    Rule {
        suffix: suffix.as_bytes(),
        replacement: replacement.as_bytes(),
        condition,
    }
}

/// Applies the first rule whose suffix the word ends with; when its condition fails, no later rule
/// is tried. Returns whether the word changed.
fn apply_first(word: &mut Vec<u8>, rules: &[Rule<'_>]) -> bool {
    for rule in rules {
        if word.ends_with(rule.suffix) {
            let stem_len = word.len() - rule.suffix.len();
            if rule
                .condition
                .is_none_or(|condition| condition(&word[..stem_len]))
            {
                word.truncate(stem_len);
                word.extend_from_slice(rule.replacement);
                return true;
            }
            return false;
        }
    }
    false
}

fn positive_measure(stem: &[u8]) -> bool {
    measure(stem) > 0
}

fn measure_above_one(stem: &[u8]) -> bool {
    measure(stem) > 1
}

fn step1a(word: &mut Vec<u8>) {
    // NLTK: a four-letter word in -ies keeps its e ("dies" -> "die", but "flies" -> "fli").
    if word.len() == 4 && word.ends_with(b"ies") {
        word.truncate(1);
        word.extend_from_slice(b"ie");
        return;
    }
    apply_first(
        word,
        &[
            rule("sses", "ss", None),
            rule("ies", "i", None),
            rule("ss", "ss", None),
            rule("s", "", None),
        ],
    );
}

fn step1b(word: &mut Vec<u8>) {
    // NLTK: -ied becomes -ie in a four-letter word ("died"), else -i ("spied").
    if word.ends_with(b"ied") {
        let keep_e = word.len() == 4;
        word.truncate(word.len() - 3);
        word.extend_from_slice(if keep_e { b"ie" } else { b"i" });
        return;
    }
    if word.ends_with(b"eed") {
        let stem_len = word.len() - 3;
        if measure(&word[..stem_len]) > 0 {
            word.truncate(stem_len + 2);
        }
        return;
    }
    let mut removed = false;
    for suffix in [&b"ed"[..], b"ing"] {
        if word.ends_with(suffix) && contains_vowel(&word[..word.len() - suffix.len()]) {
            word.truncate(word.len() - suffix.len());
            removed = true;
            break;
        }
    }
    if !removed {
        return;
    }
    if apply_first(
        word,
        &[
            rule("at", "ate", None),
            rule("bl", "ble", None),
            rule("iz", "ize", None),
        ],
    ) {
        return;
    }
    // A double consonant other than l, s or z becomes single ("hopp" -> "hop").
    if ends_double_consonant(word) {
        if !matches!(word[word.len() - 1], b'l' | b's' | b'z') {
            word.pop();
        }
        return;
    }
    if measure(word) == 1 && ends_cvc(word) {
        word.push(b'e');
    }
}

fn step1c(word: &mut Vec<u8>) {
    // NLTK: y becomes i after a consonant that is not the word's only letter ("happy" ->
    // "happi", "enjoy" stays).
    let condition = |stem: &[u8]| stem.len() > 1 && is_consonant(stem, stem.len() - 1);
    apply_first(word, &[rule("y", "i", Some(&condition))]);
}

fn step2(word: &mut Vec<u8>) {
    // NLTK applies -alli -> -al first, and then step 2 again on the result.
    if word.ends_with(b"alli") && positive_measure(&word[..word.len() - 4]) {
        word.truncate(word.len() - 2);
        step2(word);
        return;
    }
    let positive: Condition<'_> = &positive_measure;
    // The l of -logi stays with the stem when its measure is taken ("geology" -> "geolog").
    let logi_whole = word.clone();
    let logi = move |_: &[u8]| positive_measure(&logi_whole[..logi_whole.len() - 3]);
    apply_first(
        word,
        &[
            rule("ational", "ate", Some(positive)),
            rule("tional", "tion", Some(positive)),
            rule("enci", "ence", Some(positive)),
            rule("anci", "ance", Some(positive)),
            rule("izer", "ize", Some(positive)),
            rule("bli", "ble", Some(positive)),
            rule("alli", "al", Some(positive)),
            rule("entli", "ent", Some(positive)),
            rule("eli", "e", Some(positive)),
            rule("ousli", "ous", Some(positive)),
            rule("ization", "ize", Some(positive)),
            rule("ation", "ate", Some(positive)),
            rule("ator", "ate", Some(positive)),
            rule("alism", "al", Some(positive)),
            rule("iveness", "ive", Some(positive)),
            rule("fulness", "ful", Some(positive)),
            rule("ousness", "ous", Some(positive)),
            rule("aliti", "al", Some(positive)),
            rule("iviti", "ive", Some(positive)),
            rule("biliti", "ble", Some(positive)),
            rule("fulli", "ful", Some(positive)),
            rule("logi", "log", Some(&logi)),
        ],
    );
}

fn step3(word: &mut Vec<u8>) {
    let positive: Condition<'_> = &positive_measure;
    apply_first(
        word,
        &[
            rule("icate", "ic", Some(positive)),
            rule("ative", "", Some(positive)),
            rule("alize", "al", Some(positive)),
            rule("iciti", "ic", Some(positive)),
            rule("ical", "ic", Some(positive)),
            rule("ful", "", Some(positive)),
            rule("ness", "", Some(positive)),
        ],
    );
}

fn step4(word: &mut Vec<u8>) {
    let above_one: Condition<'_> = &measure_above_one;
    let ion = |stem: &[u8]| measure(stem) > 1 && matches!(stem.last(), Some(b's' | b't'));
    apply_first(
        word,
        &[
            rule("al", "", Some(above_one)),
            rule("ance", "", Some(above_one)),
            rule("ence", "", Some(above_one)),
            rule("er", "", Some(above_one)),
            rule("ic", "", Some(above_one)),
            rule("able", "", Some(above_one)),
            rule("ible", "", Some(above_one)),
            rule("ant", "", Some(above_one)),
            rule("ement", "", Some(above_one)),
            rule("ment", "", Some(above_one)),
            rule("ent", "", Some(above_one)),
            rule("ion", "", Some(&ion)),
            rule("ou", "", Some(above_one)),
            rule("ism", "", Some(above_one)),
            rule("ate", "", Some(above_one)),
            rule("iti", "", Some(above_one)),
            rule("ous", "", Some(above_one)),
            rule("ive", "", Some(above_one)),
            rule("ize", "", Some(above_one)),
        ],
    );
}

fn step5a(word: &mut Vec<u8>) {
    // Both conditions are tried here (unlike step 1b's -eed/-ed): m > 1, or m = 1 and not *o.
    if word.ends_with(b"e") {
        let stem = &word[..word.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            word.pop();
        }
    }
}

fn step5b(word: &mut Vec<u8>) {
    // -ll becomes -l when the word without its last l has m > 1 ("controll" -> "control").
    if word.ends_with(b"ll") && measure(&word[..word.len() - 1]) > 1 {
        word.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn porters_examples_and_nltks_changes() {
        let cases = [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("hissing", "hiss"),
            ("failing", "fail"),
            ("filing", "file"),
            ("happy", "happi"),
            ("enjoy", "enjoy"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("generalization", "gener"),
            ("electrical", "electr"),
            ("hopeful", "hope"),
            ("goodness", "good"),
            ("adoption", "adopt"),
            ("controlling", "control"),
            ("rate", "rate"),
            ("cease", "ceas"),
            ("skies", "sky"),
            ("dying", "die"),
            ("spied", "spi"),
            ("died", "die"),
            ("geology", "geolog"),
            ("radically", "radic"),
            ("sunny", "sunni"),
            ("weather", "weather"),
            ("yyyy", "yyyi"),
        ];
        for (word, expected) in cases {
            assert_eq!(stem(word), expected, "stem of {word}");
        }
    }
}
