//! `final_response_match_v2`: a judge decides whether each final answer is as good as the expected
//! one (1) or not (0). Each invocation is judged `num_samples` times and the majority wins (a tie
//! is invalid); the case's score is the share of valid answers among those judged.

use std::sync::Arc;

use async_trait::async_trait;

use super::judge::{JudgeOptions, samples};
use super::{EvalStatus, EvaluationResult, Judge, Metric, MetricInput, PerInvocationResult};
use crate::error::EvalError;
use crate::eval_set::Invocation;

/// The judged final-answer metric.
#[derive(Clone)]
pub struct FinalResponseMatchV2 {
    judge: Arc<dyn Judge>,
}

impl FinalResponseMatchV2 {
    /// The metric, judged by `judge`.
    pub fn new(judge: impl crate::IntoJudge) -> Self {
        let judge = judge.into_judge();
        Self { judge }
    }
}

impl std::fmt::Debug for FinalResponseMatchV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FinalResponseMatchV2")
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Metric for FinalResponseMatchV2 {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let options = JudgeOptions::of(input.criterion, input.metric_name)?;
        let threshold = input.criterion.threshold;
        let intermediate = input.criterion.include_intermediate_responses_in_final;
        let mut results = Vec::new();
        for (actual, expected) in input.expected_pairs()? {
            let prompt = prompt(actual, expected, intermediate);
            let answers = samples(self.judge.as_ref(), &prompt, &options).await;
            results.push(majority(&answers, threshold, read_verdict));
        }
        let judged: Vec<f64> = results
            .iter()
            .filter(|result| result.eval_status != EvalStatus::NotEvaluated)
            .filter_map(|result| result.score)
            .collect();
        let overall_score = super::mean(&judged);
        Ok(EvaluationResult {
            overall_score,
            overall_eval_status: EvalStatus::of(overall_score, threshold),
            per_invocation_results: results,
            overall_rubric_scores: None,
        })
    }
}

/// The rater prompt for one answer.
fn prompt(actual: &Invocation, expected: &Invocation, intermediate: bool) -> String {
    let answer = answer_text(actual, intermediate);
    let reference = answer_text(expected, intermediate);
    format!(
        "You grade the answers of an AI agent that can call tools. Decide whether the agent's \
         answer to the user is correct, using the reference answer, which a person wrote and which \
         is right.\n\
         \n\
         Count the answer as valid when it holds the facts of the reference that the user asked \
         for, even if it is worded or formatted differently, is shorter or longer, or adds correct \
         details. Count it as invalid when it contradicts the reference, leaves out what the user \
         asked for, uses other units or values, or refuses where the reference answers.\n\
         \n\
         User: {user}\n\
         Agent answer: {answer}\n\
         Reference answer: {reference}\n\
         \n\
         Reply with one JSON object and nothing else:\n\
         {{\"reasoning\": \"<one or two sentences>\", \"is_the_agent_response_valid\": \"valid\" or \"invalid\"}}",
        user = serde_json::Value::String(expected.user_text()),
        answer = serde_json::Value::String(answer),
        reference = serde_json::Value::String(reference),
    )
}

/// The answer a judged metric reads: the final answer, after the text said on the way when
/// `intermediate` is set.
pub(crate) fn answer_text(invocation: &Invocation, intermediate: bool) -> String {
    if !intermediate {
        return invocation.final_text();
    }
    let mut texts = intermediate_texts(invocation);
    let last = invocation.final_text();
    if !last.is_empty() {
        texts.push(last);
    }
    texts.join("\n")
}

/// The texts the agent said before its final answer.
fn intermediate_texts(invocation: &Invocation) -> Vec<String> {
    use crate::eval_set::IntermediateData;
    match &invocation.intermediate_data {
        Some(IntermediateData::Events(events)) => events
            .invocation_events
            .iter()
            .filter_map(|event| event.content.as_ref())
            .map(crate::eval_set::text_of)
            .filter(|text| !text.is_empty())
            .collect(),
        Some(IntermediateData::ToolUses(uses)) => uses
            .intermediate_responses
            .iter()
            .map(|(_, parts)| {
                crate::eval_set::text_of(&adk_core::Content {
                    parts: parts.clone(),
                    role: None,
                })
            })
            .filter(|text| !text.is_empty())
            .collect(),
        None => Vec::new(),
    }
}

/// The invocation's result from the judge's answers, each read by `read`: a failed sample makes
/// it not evaluated; otherwise the majority of valid and invalid verdicts wins, a tie being
/// invalid.
pub(crate) fn majority(
    answers: &[Option<String>],
    threshold: f64,
    read: fn(&str) -> Option<bool>,
) -> PerInvocationResult {
    if answers.iter().any(Option::is_none) {
        return PerInvocationResult::not_evaluated();
    }
    let verdicts: Vec<Option<bool>> = answers
        .iter()
        .flatten()
        .map(|answer| read(answer))
        .collect();
    let valid = verdicts
        .iter()
        .filter(|verdict| **verdict == Some(true))
        .count();
    let invalid = verdicts
        .iter()
        .filter(|verdict| **verdict == Some(false))
        .count();
    let score = match (valid, invalid) {
        (0, 0) => None,
        (valid, invalid) if valid > invalid => Some(1.0),
        _ => Some(0.0),
    };
    PerInvocationResult::scored(score, threshold)
}

/// The verdict in a judge's answer: `Some(true)` for valid, `Some(false)` for invalid, `None` when
/// it gives none.
pub(crate) fn read_verdict(answer: &str) -> Option<bool> {
    read_verdict_under(
        answer,
        &[
            ("\"is_the_agent_response_valid\"", false),
            ("\"is_the_agent_response_invalid\"", true),
        ],
    )
}

/// The verdict in a judge's answer under the first of `keys` (a quoted JSON key, and whether it
/// asks for invalidity) that the answer holds.
pub(crate) fn read_verdict_under(answer: &str, keys: &[(&str, bool)]) -> Option<bool> {
    for &(key, negated) in keys {
        let Some(start) = answer.find(key) else {
            continue;
        };
        let rest = answer[start + key.len()..].trim_start().strip_prefix(':')?;
        let word: String = rest
            .trim_start_matches(|c: char| c.is_whitespace() || c == '[' || c == '"')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ' ')
            .collect();
        let word = word.trim().to_lowercase();
        let valid = match word.as_str() {
            "valid" | "true" => true,
            "invalid" | "false" | "almost" | "partially" | "partially valid"
            | "partially_valid" => false,
            _ => return None,
        };
        return Some(valid != negated);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_loose_json() {
        assert_eq!(
            read_verdict(r#"{"reasoning": "ok", "is_the_agent_response_valid": "valid"}"#),
            Some(true)
        );
        assert_eq!(
            read_verdict("\"is_the_agent_response_valid\": [\n invalid\n]"),
            Some(false)
        );
        assert_eq!(
            read_verdict(r#""is_the_agent_response_valid": "partially valid","#),
            Some(false)
        );
        assert_eq!(
            read_verdict(r#""is_the_agent_response_invalid": "true""#),
            Some(false)
        );
        assert_eq!(read_verdict("I think it is fine."), None);
    }

    #[test]
    fn the_majority_wins_and_a_tie_is_invalid() {
        let valid = Some(r#""is_the_agent_response_valid": "valid""#.to_owned());
        let invalid = Some(r#""is_the_agent_response_valid": "invalid""#.to_owned());
        assert_eq!(
            majority(
                &[valid.clone(), valid.clone(), invalid.clone()],
                0.5,
                read_verdict
            )
            .score,
            Some(1.0)
        );
        assert_eq!(
            majority(&[valid.clone(), invalid.clone()], 0.5, read_verdict).score,
            Some(0.0)
        );
        assert_eq!(
            majority(&[valid, None], 0.5, read_verdict).eval_status,
            EvalStatus::NotEvaluated
        );
        assert_eq!(majority(&[Some("?".into())], 0.5, read_verdict).score, None);
    }
}
