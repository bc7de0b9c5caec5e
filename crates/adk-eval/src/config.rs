//! [`EvalConfig`]: which metrics an eval scores and the [`Criterion`] each must meet, read from
//! ADK's `test_config.json`.
//!
//! ```json
//! {"criteria": {
//!    "tool_trajectory_avg_score": 1.0,
//!    "response_match_score": {"threshold": 0.6},
//!    "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 3}}
//! }}
//! ```
//!
//! A number is a threshold; an object is a threshold with the metric's own options (read by
//! [`Criterion`]). Metrics run in the order the file names them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::criterion::Criterion;
use crate::error::{EvalError, parse_json};
use crate::simulation::UserSimulatorConfig;

/// The name of the config file ADK looks for beside an eval set.
pub const TEST_CONFIG_FILE: &str = "test_config.json";

/// The metrics an eval scores, in order, each with its criterion.
///
/// ```
/// use adk_eval::EvalConfig;
///
/// let config = EvalConfig::from_json(
///     r#"{"criteria": {"tool_trajectory_avg_score": 0.9, "response_match_score": {"threshold": 0.5}}}"#,
///     "test_config.json",
/// )
/// .unwrap();
/// let names: Vec<&str> = config.criteria.iter().map(|(name, _)| name.as_str()).collect();
/// assert_eq!(names, ["tool_trajectory_avg_score", "response_match_score"]);
/// assert_eq!(config.criteria[1].1.threshold, 0.5);
///
/// // Without a file, ADK's defaults.
/// assert_eq!(EvalConfig::default().criteria.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct EvalConfig {
    /// Each metric's name and criterion, in the order they run.
    #[serde(default, deserialize_with = "ordered_criteria")]
    pub criteria: Vec<(String, Criterion)>,
    /// ADK's custom metric declarations, by metric name; a custom metric runs when one of that
    /// name is registered with the evaluator.
    #[serde(default, alias = "customMetrics")]
    pub custom_metrics: Option<Map<String, Value>>,
    /// How the simulated user of cases with a conversation scenario is run; ADK's defaults when
    /// unset.
    #[serde(default, alias = "userSimulatorConfig")]
    pub user_simulator_config: Option<UserSimulatorConfig>,
}

impl Default for EvalConfig {
    /// ADK's default criteria: a tool trajectory that matches exactly, and answers that score at
    /// least 0.8 in ROUGE-1 against the expected ones.
    fn default() -> Self {
        Self {
            criteria: vec![
                (
                    crate::metrics::TOOL_TRAJECTORY_AVG_SCORE.to_owned(),
                    Criterion::threshold(1.0),
                ),
                (
                    crate::metrics::RESPONSE_MATCH_SCORE.to_owned(),
                    Criterion::threshold(0.8),
                ),
            ],
            custom_metrics: None,
            user_simulator_config: None,
        }
    }
}

impl EvalConfig {
    /// A config of these metrics and criteria, in order.
    pub fn new(criteria: impl IntoIterator<Item = (String, Criterion)>) -> Self {
        Self {
            criteria: criteria.into_iter().collect(),
            custom_metrics: None,
            user_simulator_config: None,
        }
    }

    /// Reads a config from JSON; `source` names it in errors.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed), naming `source` and the JSON
    /// path of the first problem.
    pub fn from_json(text: &str, source: &str) -> Result<Self, EvalError> {
        parse_json(text, source)
    }

    /// Reads the config file at `path`.
    ///
    /// # Errors
    ///
    /// As [`from_json`](Self::from_json), or [`EvalErrorKind::Io`](crate::EvalErrorKind::Io) when
    /// the file cannot be read.
    pub async fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let (text, source) = crate::error::read_source(path.as_ref()).await?;
        Self::from_json(&text, &source)
    }

    /// The config an eval of the set at `eval_set_path` uses when none is named, as `adk eval`
    /// picks it: the `test_config.json` beside the set if there is one, else the
    /// [default](Self::default).
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load), for a `test_config.json` that exists but cannot be read.
    pub async fn beside(eval_set_path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let candidate = config_beside(eval_set_path.as_ref());
        match tokio::fs::try_exists(&candidate).await {
            Ok(true) => Self::load(&candidate).await,
            _ => Ok(Self::default()),
        }
    }

    /// Adds (or replaces) the criterion of `metric`.
    pub fn with_criterion(mut self, metric: impl Into<String>, criterion: Criterion) -> Self {
        let metric = metric.into();
        self.criteria.retain(|(name, _)| *name != metric);
        self.criteria.push((metric, criterion));
        self
    }

    /// Runs the simulated user of scenario cases with `config`.
    pub fn with_user_simulator_config(mut self, config: UserSimulatorConfig) -> Self {
        self.user_simulator_config = Some(config);
        self
    }
}

/// The `test_config.json` beside the file at `path`.
pub(crate) fn config_beside(path: &Path) -> PathBuf {
    path.parent()
        .unwrap_or_else(|| Path::new(""))
        .join(TEST_CONFIG_FILE)
}

/// Reads the `criteria` object keeping the order of its keys.
fn ordered_criteria<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, Criterion)>, D::Error> {
    struct Ordered;

    impl<'de> Visitor<'de> for Ordered {
        type Value = Vec<(String, Criterion)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of metric names and their criteria")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut criteria: Vec<(String, Criterion)> = Vec::new();
            while let Some(name) = map.next_key::<String>()? {
                let criterion = map.next_value::<Criterion>()?;
                criteria.retain(|(earlier, _)| *earlier != name);
                criteria.push((name, criterion));
            }
            Ok(criteria)
        }
    }

    deserializer.deserialize_map(Ordered)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn criteria_keep_their_order_and_options() {
        let config = EvalConfig::from_json(
            r#"{"criteria": {"b": 1, "a": {"threshold": 0.5, "matchType": "ANY_ORDER", "include_intermediate_responses_in_final": true}},
                "custom_metrics": {"a": {"code_config": {"name": "x.y"}}}}"#,
            "c.json",
        )
        .unwrap();
        assert_eq!(config.criteria[0].0, "b");
        let criterion = &config.criteria[1].1;
        assert!(criterion.include_intermediate_responses_in_final);
        assert_eq!(
            criterion
                .option::<String>("a", "match_type")
                .unwrap()
                .as_deref(),
            Some("ANY_ORDER")
        );
        assert_eq!(
            serde_json::to_value(criterion).unwrap(),
            json!({"threshold": 0.5, "include_intermediate_responses_in_final": true, "matchType": "ANY_ORDER"})
        );
        assert!(config.custom_metrics.unwrap().contains_key("a"));
    }

    #[test]
    fn problems_name_the_json_path() {
        let error =
            EvalConfig::from_json(r#"{"criteria": {"m": {"judge": 1}}}"#, "c.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.json: at criteria.m: missing field `threshold`"
        );
        let error = EvalConfig::from_json(r#"{"criteria": {"m": "high"}}"#, "c.json").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("c.json: at criteria.m: invalid type"),
            "{error}"
        );
    }
}
