//! Metrics: the [`Metric`] trait every metric implements, what it returns, and ADK's metrics.
//!
//! | metric | what it scores | needs |
//! |---|---|---|
//! | `tool_trajectory_avg_score` | the tool calls of each invocation against the expected ones: `EXACT`, `IN_ORDER` or `ANY_ORDER` (`match_type`), with or without arguments (`ignore_args`); 1 or 0 per invocation, averaged | expected invocations |
//! | `response_match_score` | ROUGE-1 F-measure of the final answer against the expected one | expected invocations |
//! | `final_response_match_v2` | a judge's verdict, valid or not, on the final answer against the expected one; majority of `num_samples` | a [`Judge`] |
//! | `rubric_based_final_response_quality_v1` | a judge's yes or no on each rubric about the final answer | a [`Judge`], rubrics |
//! | `rubric_based_tool_use_quality_v1` | a judge's yes or no on each rubric about the tool calls | a [`Judge`], rubrics |
//! | `per_turn_user_simulator_quality_v1` | whether a simulated user kept to its scenario: the starting prompt, then a judge's verdict on each later message and on where it ended; the share of turns that passed | a [`Judge`], a conversation scenario |
//!
//! Any other name is a custom metric, registered with the
//! [`Evaluator`](crate::Evaluator) under that name.

mod judge;
mod porter;
mod rouge;
mod rubrics;
mod trajectory;
mod user_simulator_quality;
mod verdict;

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::criterion::Criterion;
use crate::error::EvalError;
use crate::eval_set::{EvalCase, Invocation};

pub use judge::{IntoJudge, Judge, LlmJudge};
pub use rouge::{RougeScore, rouge_tokens, rouge1};
pub use rubrics::RubricMetric;
pub use trajectory::{MatchType, ToolTrajectory};
pub use user_simulator_quality::UserSimulatorQuality;
pub use verdict::FinalResponseMatchV2;

/// The tool trajectory metric's name.
pub const TOOL_TRAJECTORY_AVG_SCORE: &str = "tool_trajectory_avg_score";
/// The ROUGE-1 response metric's name.
pub const RESPONSE_MATCH_SCORE: &str = "response_match_score";
/// The judged final-answer metric's name.
pub const FINAL_RESPONSE_MATCH_V2: &str = "final_response_match_v2";
/// The judged final-answer rubric metric's name.
pub const RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1: &str = "rubric_based_final_response_quality_v1";
/// The judged tool-use rubric metric's name.
pub const RUBRIC_BASED_TOOL_USE_QUALITY_V1: &str = "rubric_based_tool_use_quality_v1";

/// The judged metric of a simulated user's turns.
pub const PER_TURN_USER_SIMULATOR_QUALITY_V1: &str = "per_turn_user_simulator_quality_v1";

/// The metrics that need a [`Judge`].
pub const JUDGED_METRICS: [&str; 4] = [
    FINAL_RESPONSE_MATCH_V2,
    RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1,
    RUBRIC_BASED_TOOL_USE_QUALITY_V1,
    PER_TURN_USER_SIMULATOR_QUALITY_V1,
];

/// Whether a metric (or a whole case) passed; written as ADK's numbers (1 to 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EvalStatus {
    /// The score reached the threshold.
    Passed,
    /// The score fell short of the threshold.
    Failed,
    /// There was nothing to score, or scoring failed.
    NotEvaluated,
    /// A value to read, not to pass or fail on.
    Informational,
}

impl EvalStatus {
    /// `Passed` when `score` reaches `threshold`, `Failed` below it, `NotEvaluated` without a score.
    pub fn of(score: Option<f64>, threshold: f64) -> Self {
        match score {
            None => Self::NotEvaluated,
            Some(score) if score >= threshold => Self::Passed,
            Some(_) => Self::Failed,
        }
    }

    /// ADK's number for the status.
    pub fn code(self) -> u8 {
        match self {
            Self::Passed => 1,
            Self::Failed => 2,
            Self::NotEvaluated => 3,
            Self::Informational => 4,
        }
    }

    /// The status of ADK's number.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Self::Passed,
            2 => Self::Failed,
            3 => Self::NotEvaluated,
            4 => Self::Informational,
            _ => return None,
        })
    }
}

impl fmt::Display for EvalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Passed => "PASSED",
            Self::Failed => "FAILED",
            Self::NotEvaluated => "NOT_EVALUATED",
            Self::Informational => "INFORMATIONAL",
        })
    }
}

impl Serialize for EvalStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.code())
    }
}

impl<'de> Deserialize<'de> for EvalStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = u8::deserialize(deserializer)?;
        Self::from_code(code).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown eval status {code}; expected 1 to 4"))
        })
    }
}

/// A judge's score of one rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RubricScore {
    /// The rubric's id.
    #[serde(alias = "rubricId")]
    pub rubric_id: String,
    /// Why, in the judge's words.
    #[serde(default)]
    pub rationale: Option<String>,
    /// 1 for yes, 0 for no; `None` when the judge gave no verdict.
    #[serde(default)]
    pub score: Option<f64>,
}

impl RubricScore {
    /// The score of rubric `rubric_id`.
    pub fn new(rubric_id: impl Into<String>, score: Option<f64>) -> Self {
        Self {
            rubric_id: rubric_id.into(),
            rationale: None,
            score,
        }
    }

    /// Sets the rationale.
    pub fn with_rationale(mut self, rationale: impl Into<String>) -> Self {
        self.rationale = Some(rationale.into());
        self
    }
}

/// A metric's score of one invocation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PerInvocationResult {
    /// The score, if there is one.
    pub score: Option<f64>,
    /// Whether it passed.
    pub eval_status: EvalStatus,
    /// Rubric scores, for rubric metrics.
    pub rubric_scores: Option<Vec<RubricScore>>,
}

impl PerInvocationResult {
    /// A result of `score` judged against `threshold`.
    pub fn scored(score: Option<f64>, threshold: f64) -> Self {
        Self {
            score,
            eval_status: EvalStatus::of(score, threshold),
            rubric_scores: None,
        }
    }

    /// A result that was not evaluated.
    pub fn not_evaluated() -> Self {
        Self::scored(None, 0.0)
    }
}

/// A metric's scores of a case: overall, and per invocation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EvaluationResult {
    /// The case's score, if there is one.
    pub overall_score: Option<f64>,
    /// Whether the case passed on this metric.
    pub overall_eval_status: EvalStatus,
    /// One result per invocation, in order (or none when the metric scores only the case).
    pub per_invocation_results: Vec<PerInvocationResult>,
    /// Rubric scores over the case, for rubric metrics.
    pub overall_rubric_scores: Option<Vec<RubricScore>>,
}

impl EvaluationResult {
    /// A result with nothing evaluated.
    pub fn not_evaluated() -> Self {
        Self {
            overall_score: None,
            overall_eval_status: EvalStatus::NotEvaluated,
            per_invocation_results: Vec::new(),
            overall_rubric_scores: None,
        }
    }

    /// The mean of the invocations' scores against `threshold` (invocations without a score left
    /// out); not evaluated when none has a score.
    pub fn mean_of(per_invocation_results: Vec<PerInvocationResult>, threshold: f64) -> Self {
        let scores: Vec<f64> = per_invocation_results
            .iter()
            .filter_map(|result| result.score)
            .collect();
        let overall_score = mean(&scores);
        Self {
            overall_score,
            overall_eval_status: EvalStatus::of(overall_score, threshold),
            per_invocation_results,
            overall_rubric_scores: None,
        }
    }
}

/// The mean of `values`, `None` when there are none.
pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    // A case has a handful of invocations; the count converts exactly.
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// What a metric scores: the invocations the agent produced, those expected of it, and the
/// criterion it must meet.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct MetricInput<'a> {
    /// The metric's name, as the config names it.
    pub metric_name: &'a str,
    /// The criterion from the config.
    pub criterion: &'a Criterion,
    /// The invocations the agent produced, in order.
    pub actual: &'a [Invocation],
    /// The invocations the case expects, one per actual invocation.
    pub expected: Option<&'a [Invocation]>,
    /// The case.
    pub eval_case: &'a EvalCase,
}

impl<'a> MetricInput<'a> {
    /// The input for `metric_name` with `criterion` on these invocations of `eval_case`.
    pub fn new(
        metric_name: &'a str,
        criterion: &'a Criterion,
        actual: &'a [Invocation],
        eval_case: &'a EvalCase,
    ) -> Self {
        Self {
            metric_name,
            criterion,
            actual,
            expected: eval_case.conversation.as_deref(),
            eval_case,
        }
    }

    /// The expected invocations, paired one to one with the actual ones.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Metric`](crate::EvalErrorKind::Metric) when there are none or their
    /// number differs from the actual ones'.
    pub fn expected_pairs(&self) -> Result<Vec<(&'a Invocation, &'a Invocation)>, EvalError> {
        let expected = self.expected.ok_or_else(|| {
            EvalError::new(
                crate::EvalErrorKind::Metric,
                format!(
                    "`{}` needs the expected invocations of a conversation",
                    self.metric_name
                ),
            )
        })?;
        if expected.len() != self.actual.len() {
            return Err(EvalError::new(
                crate::EvalErrorKind::Metric,
                format!(
                    "`{}` pairs invocations one to one, but there are {} actual and {} expected",
                    self.metric_name,
                    self.actual.len(),
                    expected.len()
                ),
            ));
        }
        Ok(self.actual.iter().zip(expected).collect())
    }
}

/// A metric: scores the invocations of a case against a criterion.
///
/// Custom metrics implement it and are registered with the
/// [`Evaluator`](crate::Evaluator) under the name the config gives them, as ADK's custom metrics
/// are.
///
/// ```
/// use adk_eval::{EvalError, EvaluationResult, Metric, MetricInput, PerInvocationResult};
///
/// /// Scores 1 when the answer is at most ten words long.
/// struct Brief;
///
/// #[async_trait::async_trait]
/// impl Metric for Brief {
///     async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
///         let results = input
///             .actual
///             .iter()
///             .map(|invocation| {
///                 let words = invocation.final_text().split_whitespace().count();
///                 PerInvocationResult::scored(Some(f64::from(u8::from(words <= 10))), input.criterion.threshold)
///             })
///             .collect();
///         Ok(EvaluationResult::mean_of(results, input.criterion.threshold))
///     }
/// }
/// ```
#[async_trait]
pub trait Metric: Send + Sync {
    /// Scores `input`'s invocations.
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError>;
}

/// ROUGE-1 F-measure of each final answer against the expected one (`response_match_score`).
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ResponseMatch;

#[async_trait]
impl Metric for ResponseMatch {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let threshold = input.criterion.threshold;
        let results = input
            .expected_pairs()?
            .into_iter()
            .map(|(actual, expected)| {
                let score = rouge1(&actual.final_text(), &expected.final_text()).fmeasure;
                PerInvocationResult::scored(Some(score), threshold)
            })
            .collect();
        Ok(EvaluationResult::mean_of(results, threshold))
    }
}

adk_core::__into_shared!(
    /// A [`Metric`] as a builder takes it: the metric itself, an `Arc` of it, or an
    /// `Arc<dyn Metric>`.
    IntoMetric,
    into_metric,
    Metric,
    "`{Self}` is not an eval metric"
);
