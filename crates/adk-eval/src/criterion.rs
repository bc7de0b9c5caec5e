//! [`Criterion`]: what one metric must reach, its threshold and its own options, read from a
//! `test_config.json` entry (a number, or an object with a `threshold`) and written into results
//! as ADK writes it.

use std::fmt;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::EvalError;

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
    fn a_bad_option_names_the_metric_and_the_option() {
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
