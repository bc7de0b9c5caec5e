//! proptest strategies that the property tests of several crates share.

use proptest::prelude::*;
use serde_json::Value;

/// Any JSON value, nested up to four levels, whose object keys are drawn from `keys` half of the
/// time (so that readers meet the fields they know, in unexpected shapes) and are anything short
/// the other half. Numbers are finite: JSON has no NaN or infinity.
///
/// ```
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let value = adk_test::any_json(&["city"])
///     .new_tree(&mut TestRunner::default())
///     .unwrap()
///     .current();
/// assert!(serde_json::to_string(&value).is_ok());
/// ```
pub fn any_json(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |x| x.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    let key = prop_oneof![
        prop::sample::select(keys).prop_map(str::to_owned),
        "[a-zA-Z_:]{0,10}",
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}
