//! The quickstart's own eval metric, `sky_word_grounded`: the weather an answer states must be
//! the weather a tool returned.
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

/// The skies the tools of `invocation` returned (the `sky` of each response).
fn tool_skies(invocation: &Invocation) -> BTreeSet<String> {
    invocation
        .tool_responses()
        .iter()
        .filter_map(|response| response.response.get("sky").and_then(Value::as_str))
        .flat_map(|sky| skies_in(sky).into_iter().map(str::to_owned))
        .collect()
}

/// The `sky_word_grounded` metric.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkyWordGrounded;

#[async_trait::async_trait]
impl Metric for SkyWordGrounded {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let threshold = input.criterion.threshold;
        let results = input
            .actual
            .iter()
            .map(|invocation| {
                let score = grounded(&invocation.final_text(), &tool_skies(invocation));
                PerInvocationResult::scored(Some(if score { 1.0 } else { 0.0 }), threshold)
            })
            .collect();
        Ok(EvaluationResult::mean_of(results, threshold))
    }
}

/// The quickstart's custom metrics, by name, for an evaluator or the command line.
pub fn metrics() -> Vec<(String, Arc<dyn Metric>)> {
    vec![(SKY_WORD_GROUNDED.to_owned(), SkyWordGrounded.into_metric())]
}
