//! The results of an eval, as ADK Python writes them: an [`EvalSetResult`] of [`EvalCaseResult`]s,
//! each with the overall [`EvalMetricResult`] of every metric and the per-invocation ones.
//!
//! The JSON is ADK's `*.evalset_result.json`: snake_case keys, absent values written as `null`,
//! statuses as ADK's numbers (1 passed, 2 failed, 3 not evaluated). Contents and sessions inside
//! are adk-rs's (and ADK's) wire format, which ADK reads in either spelling.

use std::path::{Path, PathBuf};

use adk_core::Session;
use serde::{Deserialize, Serialize};

use crate::criterion::Criterion;
use crate::error::EvalError;
use crate::eval_set::Invocation;
use crate::metrics::{EvalStatus, RubricScore};

/// The extension ADK gives result files.
pub const RESULT_FILE_EXTENSION: &str = ".evalset_result.json";

/// The results of one run of an eval set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalSetResult {
    /// `<app>_<eval set id>_<timestamp>`.
    #[serde(alias = "evalSetResultId")]
    pub eval_set_result_id: String,
    /// The id with `/` replaced, usable as a file name.
    #[serde(default, alias = "evalSetResultName")]
    pub eval_set_result_name: Option<String>,
    /// The eval set that ran.
    #[serde(alias = "evalSetId")]
    pub eval_set_id: String,
    /// One result per case, in the set's order.
    #[serde(default, alias = "evalCaseResults")]
    pub eval_case_results: Vec<EvalCaseResult>,
    /// When the run ended, in seconds since the Unix epoch.
    #[serde(default, alias = "creationTimestamp")]
    pub creation_timestamp: f64,
}

impl EvalSetResult {
    /// The result of running set `eval_set_id` of app `app_name`, ending at `timestamp`.
    pub fn new(
        app_name: &str,
        eval_set_id: &str,
        eval_case_results: Vec<EvalCaseResult>,
        timestamp: f64,
    ) -> Self {
        let id = format!("{app_name}_{eval_set_id}_{timestamp}");
        Self {
            eval_set_result_name: Some(id.replace('/', "_")),
            eval_set_result_id: id,
            eval_set_id: eval_set_id.to_owned(),
            eval_case_results,
            creation_timestamp: timestamp,
        }
    }

    /// The result of running set `eval_set_id` of app `app_name`, ending now.
    pub fn finished(
        app_name: &str,
        eval_set_id: &str,
        eval_case_results: Vec<EvalCaseResult>,
    ) -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs_f64())
            .unwrap_or_default();
        Self::new(app_name, eval_set_id, eval_case_results, now)
    }

    /// Reads a result file's text, as ADK Python reads it: the result object, or the JSON text of
    /// one inside a JSON string (how older releases of ADK wrote results). `source` names the
    /// text in errors.
    ///
    /// ```
    /// # use adk_eval::EvalSetResult;
    /// let text = r#"{"eval_set_result_id": "app_set_1.5", "eval_set_id": "set", "eval_case_results": []}"#;
    /// let result = EvalSetResult::from_json(text, "result.json").unwrap();
    /// let quoted = serde_json::to_string(text).unwrap();
    /// assert_eq!(EvalSetResult::from_json(&quoted, "old.json").unwrap(), result);
    /// ```
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed), naming `source` and the JSON
    /// path of the first problem.
    pub fn from_json(text: &str, source: &str) -> Result<Self, EvalError> {
        if text.trim_start().starts_with('"') {
            let inner: String = crate::error::parse_json(text, source)?;
            return crate::error::parse_json(&inner, source);
        }
        crate::error::parse_json(text, source)
    }

    /// How many cases passed, and how many did not.
    pub fn counts(&self) -> (usize, usize) {
        let passed = self
            .eval_case_results
            .iter()
            .filter(|case| case.final_eval_status == EvalStatus::Passed)
            .count();
        (passed, self.eval_case_results.len() - passed)
    }

    /// Whether every case passed (and there was one).
    pub fn passed(&self) -> bool {
        let (passed, failed) = self.counts();
        passed > 0 && failed == 0
    }

    /// The mean over cases of a metric's overall score, counting the cases that have one.
    ///
    /// ```
    /// # use adk_eval::EvalSetResult;
    /// let empty = EvalSetResult::new("app", "set", Vec::new(), 0.0);
    /// assert_eq!(empty.mean_score("tool_trajectory_avg_score"), None);
    /// ```
    pub fn mean_score(&self, metric: &str) -> Option<f64> {
        let scores: Vec<f64> = self
            .eval_case_results
            .iter()
            .filter_map(|case| case.metric(metric)?.score)
            .collect();
        crate::metrics::mean(&scores)
    }

    /// The metrics scored, in the order they ran.
    pub fn metric_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for case in &self.eval_case_results {
            for result in &case.overall_eval_metric_results {
                if !names.contains(&result.metric_name.as_str()) {
                    names.push(&result.metric_name);
                }
            }
        }
        names
    }

    /// The file name ADK gives this result.
    pub fn file_name(&self) -> String {
        let name = self
            .eval_set_result_name
            .clone()
            .unwrap_or_else(|| self.eval_set_result_id.replace('/', "_"));
        format!("{name}{RESULT_FILE_EXTENSION}")
    }

    /// Writes the result into `dir` (created if needed) under its [file name](Self::file_name),
    /// as ADK writes it (indented by two spaces), and returns the file's path.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Io`](crate::EvalErrorKind::Io) when the folder or file cannot be written.
    pub async fn save(&self, dir: impl AsRef<Path>) -> Result<PathBuf, EvalError> {
        let dir = dir.as_ref();
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|error| EvalError::write(dir, error))?;
        let path = dir.join(self.file_name());
        let json = serde_json::to_string_pretty(self).map_err(|error| {
            EvalError::with_source(
                crate::EvalErrorKind::Io,
                format!("cannot write the result as JSON: {error}"),
                error,
            )
        })?;
        tokio::fs::write(&path, json)
            .await
            .map_err(|error| EvalError::write(&path, error))?;
        Ok(path)
    }
}

/// The result of one eval case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalCaseResult {
    /// The eval set's id (ADK's deprecated name for it, still written).
    #[serde(default, alias = "evalSetFile")]
    pub eval_set_file: Option<String>,
    /// The eval set's id.
    #[serde(default, alias = "evalSetId")]
    pub eval_set_id: String,
    /// The case's id.
    #[serde(default, alias = "evalId")]
    pub eval_id: String,
    /// Passed when every metric that passes or fails passed; failed when one failed or the agent
    /// could not be run.
    #[serde(alias = "finalEvalStatus")]
    pub final_eval_status: EvalStatus,
    /// ADK's deprecated pairs of metrics and results; always `null`.
    #[serde(default, alias = "evalMetricResults")]
    pub eval_metric_results: Option<serde_json::Value>,
    /// Each metric's result over the whole case, in the config's order.
    #[serde(default, alias = "overallEvalMetricResults")]
    pub overall_eval_metric_results: Vec<EvalMetricResult>,
    /// Each invocation's results.
    #[serde(default, alias = "evalMetricResultPerInvocation")]
    pub eval_metric_result_per_invocation: Vec<EvalMetricResultPerInvocation>,
    /// The session the case ran in.
    #[serde(default, alias = "sessionId")]
    pub session_id: String,
    /// That session, as it ended.
    #[serde(default, alias = "sessionDetails")]
    pub session_details: Option<Session>,
    /// The user the session belongs to.
    #[serde(default, alias = "userId")]
    pub user_id: Option<String>,
    /// Why the agent could not be run on the case, when it could not.
    #[serde(
        default,
        alias = "errorMessage",
        skip_serializing_if = "Option::is_none"
    )]
    pub error_message: Option<String>,
}

impl EvalCaseResult {
    /// The overall result of `metric`.
    pub fn metric(&self, metric: &str) -> Option<&EvalMetricResult> {
        self.overall_eval_metric_results
            .iter()
            .find(|result| result.metric_name == metric)
    }

    /// The case's status from its metrics' statuses, as ADK decides it: failed as soon as one
    /// failed, passed when one passed and none failed, not evaluated otherwise.
    pub(crate) fn status_of(results: &[EvalMetricResult]) -> EvalStatus {
        let mut status = EvalStatus::NotEvaluated;
        for result in results {
            match result.eval_status {
                EvalStatus::Failed => return EvalStatus::Failed,
                EvalStatus::Passed => status = EvalStatus::Passed,
                _ => {}
            }
        }
        status
    }
}

/// A metric's score and verdict, with the metric's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalMetricResult {
    /// The metric's name.
    #[serde(alias = "metricName")]
    pub metric_name: String,
    /// The threshold.
    #[serde(default)]
    pub threshold: Option<f64>,
    /// The criterion.
    #[serde(default)]
    pub criterion: Option<Criterion>,
    /// Where a custom metric's code is (ADK's `code_config` name), for custom metrics.
    #[serde(default, alias = "customFunctionPath")]
    pub custom_function_path: Option<String>,
    /// The score, if the metric produced one.
    #[serde(default)]
    pub score: Option<f64>,
    /// The verdict.
    #[serde(alias = "evalStatus")]
    pub eval_status: EvalStatus,
    /// Rubric scores and other details.
    #[serde(default)]
    pub details: EvalMetricResultDetails,
}

/// What a metric says besides its score.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalMetricResultDetails {
    /// The rubric scores, for rubric metrics.
    #[serde(default, alias = "rubricScores")]
    pub rubric_scores: Option<Vec<RubricScore>>,
    /// Token counts, for ADK's token usage metric (not scored by adk-eval; always `null`).
    #[serde(default, alias = "tokenUsageDetails")]
    pub token_usage_details: Option<serde_json::Value>,
    /// Durations, for ADK's duration metric (not scored by adk-eval; always `null`).
    #[serde(default, alias = "durationDetails")]
    pub duration_details: Option<serde_json::Value>,
}

/// The results of every metric for one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalMetricResultPerInvocation {
    /// What the agent did.
    #[serde(alias = "actualInvocation")]
    pub actual_invocation: Invocation,
    /// What was expected.
    #[serde(default, alias = "expectedInvocation")]
    pub expected_invocation: Option<Invocation>,
    /// Each metric's result, in the config's order.
    #[serde(default, alias = "evalMetricResults")]
    pub eval_metric_results: Vec<EvalMetricResult>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(status: EvalStatus) -> EvalMetricResult {
        EvalMetricResult {
            metric_name: "m".into(),
            threshold: Some(0.5),
            criterion: Some(Criterion::threshold(0.5)),
            custom_function_path: None,
            score: Some(1.0),
            eval_status: status,
            details: EvalMetricResultDetails::default(),
        }
    }

    #[test]
    fn a_case_fails_on_one_failure_and_passes_on_one_pass() {
        use EvalStatus::*;
        assert_eq!(
            EvalCaseResult::status_of(&[metric(Passed), metric(Failed)]),
            Failed
        );
        assert_eq!(
            EvalCaseResult::status_of(&[metric(NotEvaluated), metric(Passed)]),
            Passed
        );
        assert_eq!(
            EvalCaseResult::status_of(&[metric(NotEvaluated)]),
            NotEvaluated
        );
        assert_eq!(EvalCaseResult::status_of(&[]), NotEvaluated);
    }

    #[test]
    fn results_are_written_as_adk_writes_them() {
        let json = serde_json::to_value(metric(EvalStatus::Passed)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "metric_name": "m", "threshold": 0.5,
                "criterion": {"threshold": 0.5, "include_intermediate_responses_in_final": false},
                "custom_function_path": null, "score": 1.0, "eval_status": 1,
                "details": {"rubric_scores": null, "token_usage_details": null, "duration_details": null}
            })
        );
        let set = EvalSetResult::new("app", "dir/set", Vec::new(), 1.5);
        assert_eq!(set.eval_set_result_id, "app_dir/set_1.5");
        assert_eq!(set.file_name(), "app_dir_set_1.5.evalset_result.json");
    }
}
