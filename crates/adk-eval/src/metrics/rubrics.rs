//! The rubric metrics, `rubric_based_final_response_quality_v1` and
//! `rubric_based_tool_use_quality_v1`: a judge answers yes (1) or no (0) to each rubric, for the
//! final answer or for the tool calls of each invocation.
//!
//! The rubrics are the criterion's `rubrics`, then those of the case and of the expected
//! invocation whose `type` is the metric's (`FINAL_RESPONSE_QUALITY` or `TOOL_USE_QUALITY`). Each
//! invocation is judged `num_samples` times, each rubric taking its majority verdict (a tie is
//! no); an invocation scores the mean of its rubrics, and the case the mean of every rubric score
//! of every invocation.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::judge::{JudgeOptions, samples};
use super::verdict::answer_text;
use super::{
    EvalStatus, EvaluationResult, Judge, Metric, MetricInput, PerInvocationResult, RubricScore,
};
use crate::error::EvalError;
use crate::eval_set::{Invocation, Rubric};

/// What a rubric metric judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    FinalResponse,
    ToolUse,
}

impl Subject {
    /// The rubric type of case and invocation rubrics the metric takes.
    fn rubric_type(self) -> &'static str {
        match self {
            Self::FinalResponse => "FINAL_RESPONSE_QUALITY",
            Self::ToolUse => "TOOL_USE_QUALITY",
        }
    }
}

/// A rubric metric, judged by a [`Judge`].
#[derive(Clone)]
pub struct RubricMetric {
    judge: Arc<dyn Judge>,
    subject: Subject,
}

impl RubricMetric {
    /// `rubric_based_final_response_quality_v1`, judged by `judge`.
    pub fn final_response_quality(judge: impl crate::IntoJudge) -> Self {
        let judge = judge.into_judge();
        Self {
            judge,
            subject: Subject::FinalResponse,
        }
    }

    /// `rubric_based_tool_use_quality_v1`, judged by `judge`.
    pub fn tool_use_quality(judge: impl crate::IntoJudge) -> Self {
        let judge = judge.into_judge();
        Self {
            judge,
            subject: Subject::ToolUse,
        }
    }
}

impl std::fmt::Debug for RubricMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RubricMetric")
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Metric for RubricMetric {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let metric = input.metric_name;
        let options = JudgeOptions::of(input.criterion, metric)?;
        let threshold = input.criterion.threshold;
        let criterion_rubrics: Vec<Rubric> = input
            .criterion
            .option(metric, "rubrics")?
            .unwrap_or_default();
        let mut results = Vec::with_capacity(input.actual.len());
        for (index, actual) in input.actual.iter().enumerate() {
            let expected = input.expected.and_then(|expected| expected.get(index));
            let rubrics = self.rubrics(metric, &criterion_rubrics, input, expected)?;
            let prompt = self.prompt(
                actual,
                &rubrics,
                input.criterion.include_intermediate_responses_in_final,
            );
            let answers = samples(self.judge.as_ref(), &prompt, &options).await;
            if answers.iter().any(Option::is_none) {
                results.push(PerInvocationResult::not_evaluated());
                continue;
            }
            let sampled: Vec<Vec<RubricScore>> = answers
                .iter()
                .flatten()
                .map(|answer| scores_of(answer, &rubrics))
                .collect();
            let rubric_scores = majority(&sampled);
            let score = super::mean(
                &rubric_scores
                    .iter()
                    .filter_map(|s| s.score)
                    .collect::<Vec<_>>(),
            );
            let mut result = PerInvocationResult::scored(score, threshold);
            result.rubric_scores = Some(rubric_scores);
            results.push(result);
        }
        Ok(summarize(results, threshold))
    }
}

impl RubricMetric {
    /// The rubrics an invocation is judged by, with ids checked to be unique.
    fn rubrics(
        &self,
        metric: &str,
        criterion_rubrics: &[Rubric],
        input: MetricInput<'_>,
        expected: Option<&Invocation>,
    ) -> Result<Vec<Rubric>, EvalError> {
        let wanted = self.subject.rubric_type();
        let invocation_rubrics = input
            .eval_case
            .rubrics_with(expected)
            .filter(|rubric| rubric.kind.as_deref() == Some(wanted));
        let mut rubrics: Vec<Rubric> = Vec::new();
        for rubric in criterion_rubrics.iter().chain(invocation_rubrics) {
            if rubrics
                .iter()
                .any(|known| known.rubric_id == rubric.rubric_id)
            {
                return Err(EvalError::config(format!(
                    "`{metric}` has two rubrics with the id `{}`; rubric ids must be unique",
                    rubric.rubric_id
                )));
            }
            rubrics.push(rubric.clone());
        }
        if rubrics.is_empty() {
            return Err(EvalError::config(format!(
                "`{metric}` needs rubrics: give them in its criterion's `rubrics`, or on the case or \
                 its invocations with the type {wanted}"
            )));
        }
        Ok(rubrics)
    }

    fn prompt(&self, actual: &Invocation, rubrics: &[Rubric], intermediate: bool) -> String {
        let listed: String = rubrics
            .iter()
            .map(|rubric| format!("- [id: {}] {}\n", rubric.rubric_id, rubric.property()))
            .collect();
        let subject = match self.subject {
            Subject::FinalResponse => format!(
                "The agent's final answer:\n{}\n",
                answer_text(actual, intermediate)
            ),
            Subject::ToolUse => {
                let calls: String = actual
                    .tool_calls()
                    .iter()
                    .map(|call| format!("- {}({})\n", call.name, Value::Object(call.args.clone())))
                    .collect();
                let responses: String = actual
                    .tool_responses()
                    .iter()
                    .map(|response| {
                        format!(
                            "- {}: {}\n",
                            response.name,
                            Value::Object(response.response.clone())
                        )
                    })
                    .collect();
                format!(
                    "The agent's tool calls, in order:\n{calls}\nWhat the tools returned:\n{responses}"
                )
            }
        };
        format!(
            "You check the work of an AI agent against rubrics. For each rubric, decide whether \
             the statement holds for the agent's work below.\n\
             \n\
             The user's message:\n{user}\n\
             \n\
             {subject}\n\
             Rubrics:\n{listed}\n\
             Answer every rubric in this form, one block after another:\n\
             ID: <the rubric's id>\n\
             Property: <the rubric's text>\n\
             Rationale: <why, in one sentence>\n\
             Verdict: yes or no\n",
            user = actual.user_text(),
        )
    }
}

/// The scores in one answer of the judge, matched to `rubrics` by id or else by their text.
fn scores_of(answer: &str, rubrics: &[Rubric]) -> Vec<RubricScore> {
    let blocks = parse_blocks(answer);
    let mut scores = Vec::new();
    for block in blocks {
        let rubric = block
            .id
            .as_deref()
            .and_then(|id| rubrics.iter().find(|rubric| rubric.rubric_id == id))
            .or_else(|| {
                let property = normalize(&block.property);
                rubrics
                    .iter()
                    .find(|rubric| normalize(rubric.property()) == property)
            });
        match rubric {
            Some(rubric) => {
                let mut score = RubricScore::new(rubric.rubric_id.clone(), block.score);
                score.rationale = Some(block.rationale);
                scores.push(score);
            }
            None => {
                tracing::warn!(property = %block.property, "the judge answered a rubric it was not given")
            }
        }
    }
    scores
}

/// One rubric's block in a judge's answer.
struct Block {
    id: Option<String>,
    property: String,
    rationale: String,
    score: Option<f64>,
}

/// The blocks of `answer`; none when the numbers of properties, rationales and verdicts differ (a
/// partial answer could drop a failed rubric and raise the score).
fn parse_blocks(answer: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut pending_id: Option<String> = None;
    let (mut rationales, mut verdicts) = (Vec::new(), Vec::new());
    for line in answer.lines() {
        let trimmed = line.trim();
        if let Some(id) = trimmed.strip_prefix("ID:") {
            pending_id = Some(id.trim().to_owned()).filter(|id| !id.is_empty());
        } else if let Some(property) = trimmed.strip_prefix("Property:") {
            blocks.push(Block {
                id: pending_id.take(),
                property: property.trim().to_owned(),
                rationale: String::new(),
                score: None,
            });
        }
        if let Some(at) = line.find("Rationale: ") {
            rationales.push(line[at + "Rationale: ".len()..].trim().to_owned());
        }
        if let Some(at) = line.find("Verdict: ") {
            let verdict = line[at + "Verdict: ".len()..].to_lowercase();
            verdicts.push(if verdict.contains("yes") {
                Some(1.0)
            } else if verdict.contains("no") {
                Some(0.0)
            } else {
                None
            });
        }
    }
    if blocks.len() != rationales.len() || blocks.len() != verdicts.len() {
        return Vec::new();
    }
    for ((block, rationale), verdict) in blocks.iter_mut().zip(rationales).zip(verdicts) {
        block.rationale = rationale;
        block.score = verdict;
    }
    blocks
}

/// Rubric text as compared with the judge's echo of it: no markdown or typographic decoration,
/// single spaces, lowercase.
fn normalize(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let plain: String = text
        .nfkc()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            other => other,
        })
        .collect();
    plain
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| " *_`#>-\u{2022}\"'".contains(c))
        .to_lowercase()
}

/// One rubric's verdicts over the samples: without a score, yes, and no.
#[derive(Default)]
struct Votes {
    none: Vec<RubricScore>,
    yes: Vec<RubricScore>,
    no: Vec<RubricScore>,
}

/// Each rubric's majority verdict over the samples: the first yes when yes has more votes, else
/// the first no (a tie is no), else the first sample without a verdict.
fn majority(samples: &[Vec<RubricScore>]) -> Vec<RubricScore> {
    let mut order: Vec<String> = Vec::new();
    let mut by_rubric: HashMap<String, Votes> = HashMap::new();
    for score in samples.iter().flatten() {
        let votes = by_rubric.entry(score.rubric_id.clone()).or_insert_with(|| {
            order.push(score.rubric_id.clone());
            Votes::default()
        });
        match score.score {
            None => votes.none.push(score.clone()),
            Some(1.0) => votes.yes.push(score.clone()),
            Some(_) => votes.no.push(score.clone()),
        }
    }
    order
        .into_iter()
        .filter_map(|id| {
            let votes = by_rubric.remove(&id)?;
            if votes.yes.is_empty() && votes.no.is_empty() {
                votes.none.into_iter().next()
            } else if votes.yes.len() > votes.no.len() {
                votes.yes.into_iter().next()
            } else {
                votes.no.into_iter().next()
            }
        })
        .collect()
}

/// The case's result: the mean of every rubric score, and each rubric's mean over invocations.
fn summarize(results: Vec<PerInvocationResult>, threshold: f64) -> EvaluationResult {
    let mut order: Vec<String> = Vec::new();
    let mut by_rubric: HashMap<String, Vec<f64>> = HashMap::new();
    let mut all = Vec::new();
    for score in results
        .iter()
        .flat_map(|result| result.rubric_scores.iter().flatten())
    {
        let entry = by_rubric.entry(score.rubric_id.clone()).or_insert_with(|| {
            order.push(score.rubric_id.clone());
            Vec::new()
        });
        if let Some(value) = score.score {
            entry.push(value);
            all.push(value);
        }
    }
    let overall_rubric_scores = order
        .into_iter()
        .map(|id| {
            let mean = super::mean(&by_rubric[&id]);
            RubricScore::new(id, mean).with_rationale(
                "The mean of this rubric's scores over the invocations; each invocation's score \
                 carries the judge's rationale.",
            )
        })
        .collect();
    let overall_score = super::mean(&all);
    EvaluationResult {
        overall_score,
        overall_eval_status: EvalStatus::of(overall_score, threshold),
        per_invocation_results: results,
        overall_rubric_scores: Some(overall_rubric_scores),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubrics() -> Vec<Rubric> {
        vec![
            Rubric::new("sky", "The answer names the sky the tool reported."),
            Rubric::new("short", "The answer is one sentence."),
        ]
    }

    #[test]
    fn blocks_are_matched_by_id_or_by_text() {
        let answer = "ID: sky\nProperty: The answer names the sky the tool reported.\nRationale: It says rainy.\nVerdict: yes\n\n\
                      Property: **the answer is one sentence.**\nRationale: Two sentences.\nVerdict: No";
        let scores = scores_of(answer, &rubrics());
        assert_eq!(
            scores
                .iter()
                .map(|s| (s.rubric_id.as_str(), s.score))
                .collect::<Vec<_>>(),
            [("sky", Some(1.0)), ("short", Some(0.0))]
        );
        assert_eq!(scores[0].rationale.as_deref(), Some("It says rainy."));
    }

    #[test]
    fn a_partial_answer_counts_for_nothing() {
        let answer = "ID: sky\nProperty: x\nRationale: r\nVerdict: yes\nProperty: y\nVerdict: no";
        assert!(scores_of(answer, &rubrics()).is_empty());
    }

    #[test]
    fn rubrics_take_the_majority_and_cases_the_mean() {
        let yes = RubricScore::new("a", Some(1.0));
        let no = RubricScore::new("a", Some(0.0));
        let voted = majority(&[vec![yes.clone()], vec![no.clone()], vec![yes.clone()]]);
        assert_eq!(voted[0].score, Some(1.0));
        assert_eq!(
            majority(&[vec![yes.clone()], vec![no.clone()]])[0].score,
            Some(0.0)
        );
        let mut first = PerInvocationResult::scored(Some(1.0), 0.5);
        first.rubric_scores = Some(vec![yes]);
        let mut second = PerInvocationResult::scored(Some(0.0), 0.5);
        second.rubric_scores = Some(vec![no]);
        let summary = summarize(vec![first, second], 0.5);
        assert_eq!(summary.overall_score, Some(0.5));
        assert_eq!(summary.overall_rubric_scores.unwrap()[0].score, Some(0.5));
    }
}
