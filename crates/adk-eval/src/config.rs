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
//! A number is a threshold; an object is a threshold with the metric's own options. Metrics run in
//! the order the file names them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{EvalError, parse_json};

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
        }
    }
}

impl EvalConfig {
    /// A config of these metrics and criteria, in order.
    pub fn new(criteria: impl IntoIterator<Item = (String, Criterion)>) -> Self {
        Self {
            criteria: criteria.into_iter().collect(),
            custom_metrics: None,
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
}

/// The `test_config.json` beside the file at `path`.
pub(crate) fn config_beside(path: &Path) -> PathBuf {
    path.parent()
        .unwrap_or_else(|| Path::new(""))
        .join(TEST_CONFIG_FILE)
}

/// What a metric must reach: a threshold, and the options of the metric, as written.
///
/// Options are read by the metric that uses them ([`option`](Self::option)), under their
/// snake_case or camelCase name.
///
/// ```
/// use adk_eval::Criterion;
/// use serde_json::json;
///
/// let criterion = Criterion::threshold(0.9).with_option("match_type", json!("IN_ORDER"));
/// assert_eq!(criterion.raw_option("matchType"), Some(&json!("IN_ORDER")));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Criterion {
    /// The score a metric must reach for the case to pass on it.
    pub threshold: f64,
    /// Whether text the agent said on the way counts as part of its final answer.
    pub include_intermediate_responses_in_final: bool,
    options: Map<String, Value>,
}

impl Criterion {
    /// A criterion that is only a threshold.
    pub fn threshold(threshold: f64) -> Self {
        Self {
            threshold,
            include_intermediate_responses_in_final: false,
            options: Map::new(),
        }
    }

    /// Sets a metric option, under its snake_case name.
    pub fn with_option(mut self, key: impl Into<String>, value: Value) -> Self {
        self.options.insert(key.into(), value);
        self
    }

    /// The option `key` (snake_case) as written, under its snake_case or camelCase name.
    pub fn raw_option(&self, key: &str) -> Option<&Value> {
        self.options
            .get(key)
            .or_else(|| self.options.get(&camel_case(key)))
            .or_else(|| {
                // A camelCase key asked for: try its snake_case spelling too.
                self.options.get(&snake_case(key))
            })
    }

    /// The option `key` read as a `T`; `None` when it is absent.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Config`](crate::EvalErrorKind::Config) naming the metric and the option
    /// when the value does not fit.
    pub fn option<T: DeserializeOwned>(
        &self,
        metric: &str,
        key: &str,
    ) -> Result<Option<T>, EvalError> {
        let Some(value) = self.raw_option(key) else {
            return Ok(None);
        };
        serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|error| {
                EvalError::config(format!(
                    "the criterion of `{metric}` has a bad `{key}`: {error}"
                ))
            })
    }
}

impl Serialize for Criterion {
    /// As ADK writes a criterion into a result: the threshold, whether intermediate answers count,
    /// then the metric's options as they were written.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("threshold", &self.threshold)?;
        map.serialize_entry(
            "include_intermediate_responses_in_final",
            &self.include_intermediate_responses_in_final,
        )?;
        for (key, value) in &self.options {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Criterion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CriterionVisitor)
    }
}

struct CriterionVisitor;

impl<'de> Visitor<'de> for CriterionVisitor {
    type Value = Criterion;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a threshold (a number) or a criterion object with a `threshold`")
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Criterion, E> {
        Ok(Criterion::threshold(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Criterion, E> {
        // Thresholds are small; the conversion is exact for every value one would write.
        Ok(Criterion::threshold(value as f64))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Criterion, E> {
        Ok(Criterion::threshold(value as f64))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Criterion, A::Error> {
        let mut threshold = None;
        let mut include = false;
        let mut options = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "threshold" => threshold = Some(map.next_value::<f64>()?),
                "include_intermediate_responses_in_final"
                | "includeIntermediateResponsesInFinal" => include = map.next_value()?,
                _ => {
                    let value = map.next_value::<Value>()?;
                    options.insert(key, value);
                }
            }
        }
        let threshold = threshold.ok_or_else(|| de::Error::missing_field("threshold"))?;
        Ok(Criterion {
            threshold,
            include_intermediate_responses_in_final: include,
            options,
        })
    }
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

/// `snake_case` as `snakeCase`.
fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` as `camel_case`.
fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
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
        let bad = Criterion::threshold(1.0).with_option("match_type", json!(3.5));
        let error = bad.option::<String>("m", "match_type").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the criterion of `m` has a bad `match_type`")
        );
    }

    #[test]
    fn names_convert_between_cases() {
        assert_eq!(camel_case("judge_model_options"), "judgeModelOptions");
        assert_eq!(snake_case("judgeModelOptions"), "judge_model_options");
    }
}
