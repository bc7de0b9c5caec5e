//! The quickstart's own eval metrics: `sky_word_grounded` (the weather an answer states must be
//! the weather a tool returned, every number it states a number a tool returned, and an answer
//! must state the weather whenever the expected answer does) and `no_repeated_phrase` (an answer
//! says each phrase of three words or more once).
//!
//! The eval set `eval/quickstart.evalset.json` and its `eval/test_config.json` hold the agent to
//! it, beside ADK's `tool_trajectory_avg_score` and `response_match_score`:
//! `cargo run -p adk-cli -- eval quickstart examples/quickstart/eval/quickstart.evalset.json`.

use std::collections::BTreeSet;
use std::sync::Arc;

use adk::eval::{
    EvalError, EvaluationResult, IntoMetric as _, Invocation, Metric, MetricInput,
    PerInvocationResult,
};
use serde_json::Value;

/// The metric's name, as `test_config.json` names it.
pub const SKY_WORD_GROUNDED: &str = "sky_word_grounded";

/// Words that state the sky, and the sky each states.
const SKY_WORDS: [(&str, &str); 24] = [
    ("sunny", "sunny"),
    ("sun", "sunny"),
    ("sunshine", "sunny"),
    ("cloudy", "cloudy"),
    ("cloud", "cloudy"),
    ("clouds", "cloudy"),
    ("overcast", "cloudy"),
    ("rainy", "rainy"),
    ("rain", "rainy"),
    ("raining", "rainy"),
    ("drizzle", "rainy"),
    ("windy", "windy"),
    ("wind", "windy"),
    ("winds", "windy"),
    ("snowy", "snowy"),
    ("snow", "snowy"),
    ("snowing", "snowy"),
    ("foggy", "foggy"),
    ("fog", "foggy"),
    ("misty", "foggy"),
    ("stormy", "stormy"),
    ("storm", "stormy"),
    ("thunderstorm", "stormy"),
    ("clear", "sunny"),
];

/// Scores an answer 1 when it states exactly the skies the invocation's tools returned: every sky
/// word of the answer names a sky a tool reported, and a sky a tool reported is named. An answer
/// with no tool behind it may state no weather at all.
///
/// ```
/// use quickstart::eval::grounded;
///
/// assert!(grounded("It is rainy in Tokyo, 19 °C.", &["rainy".into()].into()));
/// assert!(!grounded("It is sunny in Tokyo.", &["rainy".into()].into()));
/// assert!(!grounded("It is sunny in Tokyo.", &Default::default()));
/// assert!(grounded("Hello! Ask me about the weather.", &Default::default()));
/// ```
pub fn grounded(answer: &str, tool_skies: &BTreeSet<String>) -> bool {
    let stated = skies_in(answer);
    stated.iter().all(|sky| tool_skies.contains(*sky))
        && tool_skies.iter().all(|sky| stated.contains(sky.as_str()))
}

/// Scores an answer 1 when it is [`grounded`] in what its tools returned and, when the expected
/// answer states the weather, states the weather too: a model that skipped the tool and said
/// nothing of the weather is not grounded, it is missing the answer.
///
/// ```
/// use quickstart::eval::grounded_against;
///
/// let rainy = ["rainy".to_owned()].into();
/// let expected = Some("It is rainy in Tokyo, 19 °C.");
/// assert!(grounded_against("Rainy, 19 °C.", &rainy, expected));
/// // No tool called, no weather stated: the expected weather is missing.
/// assert!(!grounded_against("Let me check.", &Default::default(), expected));
/// // A tool returned weather and the answer states none.
/// assert!(!grounded_against("It is 19 °C in Tokyo.", &rainy, expected));
/// assert!(grounded_against("Hello!", &Default::default(), Some("Hello! Ask me.")));
/// ```
pub fn grounded_against(
    answer: &str,
    tool_skies: &BTreeSet<String>,
    expected_answer: Option<&str>,
) -> bool {
    let weather_expected = expected_answer.is_some_and(|expected| !skies_in(expected).is_empty());
    grounded(answer, tool_skies) && (!weather_expected || !skies_in(answer).is_empty())
}

/// Whether every number `answer` states is one `tool_numbers` holds: an answer that gives
/// another temperature than the tool's contradicts it, whatever sky it names.
///
/// ```
/// use quickstart::eval::numbers_grounded;
///
/// assert!(numbers_grounded("Rainy in Tokyo, 19.0 °C.", &[19.0]));
/// assert!(!numbers_grounded("Rainy in Tokyo, 21 °C.", &[19.0]));
/// assert!(numbers_grounded("Hello!", &[]));
/// ```
pub fn numbers_grounded(answer: &str, tool_numbers: &[f64]) -> bool {
    numbers_in(answer).iter().all(|stated| {
        tool_numbers
            .iter()
            .any(|known| (known - stated).abs() < 1e-9)
    })
}

/// The numbers `text` states, a decimal point between digits belonging to its number:
/// "16.5 °C, 12." states 16.5 and 12.
///
/// ```
/// use quickstart::eval::numbers_in;
///
/// assert_eq!(numbers_in("It is 16.5 °C, 12. Or 3.x"), [16.5, 12.0, 3.0]);
/// ```
pub fn numbers_in(text: &str) -> Vec<f64> {
    let mut numbers = Vec::new();
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let decimal_point = c == '.'
            && !number.is_empty()
            && !number.contains('.')
            && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_ascii_digit() || decimal_point {
            number.push(c);
        } else if !number.is_empty() {
            numbers.extend(number.parse::<f64>().ok());
            number.clear();
        }
    }
    numbers.extend(number.parse::<f64>().ok());
    numbers
}

/// The skies `text` states.
pub fn skies_in(text: &str) -> BTreeSet<&'static str> {
    text.split(|c: char| !c.is_alphabetic())
        .map(str::to_lowercase)
        .filter_map(|word| {
            SKY_WORDS
                .iter()
                .find(|(known, _)| *known == word)
                .map(|(_, sky)| *sky)
        })
        .collect()
}

/// The numbers the tools of `invocation` returned, as numbers or within strings ("19 °C").
fn tool_numbers(invocation: &Invocation) -> Vec<f64> {
    fn collect(value: &Value, out: &mut Vec<f64>) {
        match value {
            Value::Number(number) => out.extend(number.as_f64()),
            Value::String(text) => out.extend(numbers_in(text)),
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            Value::Object(map) => map.values().for_each(|item| collect(item, out)),
            Value::Null | Value::Bool(_) => {}
        }
    }
    let mut numbers = Vec::new();
    for response in invocation.tool_responses() {
        response
            .response
            .values()
            .for_each(|value| collect(value, &mut numbers));
    }
    numbers
}

/// The skies the tools of `invocation` returned (the `sky` of each response).
fn tool_skies(invocation: &Invocation) -> BTreeSet<String> {
    invocation
        .tool_responses()
        .iter()
        .filter_map(|response| response.response.get("sky").and_then(Value::as_str))
        .flat_map(|sky| skies_in(sky).into_iter().map(str::to_owned))
        .collect()
}

/// The `sky_word_grounded` metric: [`grounded_against`] the tools' skies and the expected
/// answer, and [`numbers_grounded`] in the tools' numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkyWordGrounded;

#[async_trait::async_trait]
impl Metric for SkyWordGrounded {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        Ok(score_each(&input, |index, invocation| {
            let expected = input
                .expected
                .and_then(|expected| expected.get(index))
                .map(Invocation::final_text);
            let answer = invocation.final_text();
            grounded_against(&answer, &tool_skies(invocation), expected.as_deref())
                && numbers_grounded(&answer, &tool_numbers(invocation))
        }))
    }
}

/// The repetition metric's name, as `test_config.json` names it.
pub const NO_REPEATED_PHRASE: &str = "no_repeated_phrase";

/// The phrase of three words or more that `answer` says twice, if any: the first three-word run
/// (words being letters and digits, case ignored) that comes back later in the answer. A small
/// model stuck in a loop ("21.0 Celsius, 21.0 Sunny Sky, 21.0 Celsius, ...") repeats one.
///
/// ```
/// use quickstart::eval::repeated_phrase;
///
/// assert_eq!(repeated_phrase("It is sunny in Paris, 21 °C."), None);
/// assert_eq!(
///     repeated_phrase("21.0 Celsius, 21.0 Sunny Sky, 21.0 Celsius, 21.0 Sunny Sky"),
///     Some("21 0 celsius".to_owned())
/// );
/// ```
pub fn repeated_phrase(answer: &str) -> Option<String> {
    let words: Vec<String> = answer
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut seen = std::collections::HashSet::new();
    words
        .windows(3)
        .find(|phrase| !seen.insert(*phrase))
        .map(|phrase| phrase.join(" "))
}

/// The `no_repeated_phrase` metric: 1 for an answer with no [`repeated_phrase`], else 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRepeatedPhrase;

#[async_trait::async_trait]
impl Metric for NoRepeatedPhrase {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        Ok(score_each(&input, |_, invocation| {
            repeated_phrase(&invocation.final_text()).is_none()
        }))
    }
}

/// Scores each invocation of `input` 1 when `passes(index, invocation)`, else 0, and the case
/// the mean.
fn score_each(
    input: &MetricInput<'_>,
    passes: impl Fn(usize, &Invocation) -> bool,
) -> EvaluationResult {
    let threshold = input.criterion.threshold;
    let results = input
        .actual
        .iter()
        .enumerate()
        .map(|(index, invocation)| {
            let score = if passes(index, invocation) { 1.0 } else { 0.0 };
            PerInvocationResult::scored(Some(score), threshold)
        })
        .collect();
    EvaluationResult::mean_of(results, threshold)
}

/// The quickstart's custom metrics, by name, for an evaluator or the command line.
pub fn metrics() -> Vec<(String, Arc<dyn Metric>)> {
    vec![
        (SKY_WORD_GROUNDED.to_owned(), SkyWordGrounded.into_metric()),
        (
            NO_REPEATED_PHRASE.to_owned(),
            NoRepeatedPhrase.into_metric(),
        ),
    ]
}
