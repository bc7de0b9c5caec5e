//! `tool_trajectory_avg_score`: whether each invocation called the tools it was expected to.
//!
//! Per invocation the score is 1 when the calls match and 0 otherwise; the case's score is the
//! mean. `match_type` says what matching means: `EXACT` (the same calls in the same order, nothing
//! more), `IN_ORDER` (the expected calls appear in order, others may come between) or `ANY_ORDER`
//! (each expected call appears, in any order). With `ignore_args` only names are compared.
//! Arguments compare as JSON values the way ADK Python compares them: `1` equals `1.0`.

use adk_core::FunctionCall;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use super::{EvaluationResult, Metric, MetricInput, PerInvocationResult};
use crate::error::EvalError;

/// How actual tool calls must match the expected ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MatchType {
    /// The same calls, in the same order, and no others.
    #[default]
    Exact,
    /// The expected calls in their order; other calls may come between.
    InOrder,
    /// Every expected call, in any order; other calls may come too.
    AnyOrder,
}

impl<'de> Deserialize<'de> for MatchType {
    /// ADK accepts the names in any case, with `-` or spaces for `_`, and the enum's numbers.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let parsed = match &value {
            Value::Number(number) => match number.as_u64() {
                Some(0) => Some(Self::Exact),
                Some(1) => Some(Self::InOrder),
                Some(2) => Some(Self::AnyOrder),
                _ => None,
            },
            Value::String(name) => {
                match name.trim().to_uppercase().replace(['-', ' '], "_").as_str() {
                    "EXACT" => Some(Self::Exact),
                    "IN_ORDER" => Some(Self::InOrder),
                    "ANY_ORDER" => Some(Self::AnyOrder),
                    _ => None,
                }
            }
            _ => None,
        };
        parsed.ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown match type {value}; use EXACT, IN_ORDER or ANY_ORDER"
            ))
        })
    }
}

/// The tool trajectory metric.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ToolTrajectory;

#[async_trait]
impl Metric for ToolTrajectory {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let metric = input.metric_name;
        let match_type: MatchType = input
            .criterion
            .option(metric, "match_type")?
            .unwrap_or_default();
        let ignore_args: bool = input
            .criterion
            .option(metric, "ignore_args")?
            .unwrap_or(false);
        let threshold = input.criterion.threshold;
        let results = input
            .expected_pairs()?
            .into_iter()
            .map(|(actual, expected)| {
                let matched = trajectory_matches(
                    &actual.tool_calls(),
                    &expected.tool_calls(),
                    match_type,
                    ignore_args,
                );
                PerInvocationResult::scored(Some(if matched { 1.0 } else { 0.0 }), threshold)
            })
            .collect();
        Ok(EvaluationResult::mean_of(results, threshold))
    }
}

/// Whether `actual` calls match `expected` ones.
pub(crate) fn trajectory_matches(
    actual: &[&FunctionCall],
    expected: &[&FunctionCall],
    match_type: MatchType,
    ignore_args: bool,
) -> bool {
    let same = |a: &FunctionCall, e: &FunctionCall| {
        a.name == e.name
            && (ignore_args
                || json_equal(
                    &Value::Object(a.args.clone()),
                    &Value::Object(e.args.clone()),
                ))
    };
    match match_type {
        MatchType::Exact => {
            actual.len() == expected.len() && actual.iter().zip(expected).all(|(a, e)| same(a, e))
        }
        MatchType::InOrder => {
            let mut wanted = expected.iter().peekable();
            for call in actual {
                if wanted.peek().is_some_and(|next| same(call, next)) {
                    wanted.next();
                }
            }
            wanted.peek().is_none()
        }
        MatchType::AnyOrder => {
            let mut left: Vec<&FunctionCall> = actual.to_vec();
            expected.iter().all(
                |wanted| match left.iter().position(|call| same(call, wanted)) {
                    Some(index) => {
                        left.remove(index);
                        true
                    }
                    None => false,
                },
            )
        }
    }
}

/// Equality of JSON values as Python compares the dicts they load as: numbers by value (so `1`
/// equals `1.0`), and `true`/`false` equal to `1`/`0`, since Python's booleans are numbers.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| json_equal(value, other)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_equal(x, y))
        }
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::Bool(flag) => Some(if *flag { 1.0 } else { 0.0 }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> FunctionCall {
        FunctionCall::new(name, args)
    }

    fn check(actual: &[FunctionCall], expected: &[FunctionCall], match_type: MatchType) -> bool {
        let actual: Vec<&FunctionCall> = actual.iter().collect();
        let expected: Vec<&FunctionCall> = expected.iter().collect();
        trajectory_matches(&actual, &expected, match_type, false)
    }

    #[test]
    fn the_three_match_types() {
        let t1 = call("t1", json!({}));
        let t2 = call("t2", json!({"a": 1}));
        let t3 = call("t3", json!({}));
        let extra = call("x", json!({}));
        let expected = [t1.clone(), t2.clone(), t3.clone()];
        assert!(check(&expected, &expected, MatchType::Exact));
        let with_extra = [t1.clone(), extra.clone(), t2.clone(), t3.clone()];
        assert!(!check(&with_extra, &expected, MatchType::Exact));
        assert!(check(&with_extra, &expected, MatchType::InOrder));
        let shuffled = [t3.clone(), extra, t1.clone(), t2.clone()];
        assert!(!check(&shuffled, &expected, MatchType::InOrder));
        assert!(check(&shuffled, &expected, MatchType::AnyOrder));
        assert!(!check(
            &[t1.clone(), t2.clone()],
            &expected,
            MatchType::AnyOrder
        ));
        assert!(check(&[], &[], MatchType::Exact));
        assert!(check(&[t1], &[], MatchType::InOrder));
    }

    #[test]
    fn arguments_compare_as_python_compares_them() {
        assert!(json_equal(
            &json!({"n": 1, "x": [true]}),
            &json!({"x": [1], "n": 1.0})
        ));
        assert!(!json_equal(&json!({"n": 1}), &json!({"n": "1"})));
        assert!(!json_equal(&json!({"n": 1}), &json!({"n": 1, "m": null})));
        let actual = [call("f", json!({"city": "paris"}))];
        let expected = [call("f", json!({"city": "Paris"}))];
        assert!(!check(&actual, &expected, MatchType::Exact));
        let actual: Vec<&FunctionCall> = actual.iter().collect();
        let expected: Vec<&FunctionCall> = expected.iter().collect();
        assert!(trajectory_matches(
            &actual,
            &expected,
            MatchType::Exact,
            true
        ));
    }

    #[test]
    fn match_types_are_read_as_adk_writes_them() {
        for (written, expected) in [
            (json!("EXACT"), MatchType::Exact),
            (json!("in-order"), MatchType::InOrder),
            (json!("Any Order"), MatchType::AnyOrder),
            (json!(1), MatchType::InOrder),
        ] {
            assert_eq!(
                serde_json::from_value::<MatchType>(written).unwrap(),
                expected
            );
        }
        assert!(serde_json::from_value::<MatchType>(json!("SOME")).is_err());
    }
}
