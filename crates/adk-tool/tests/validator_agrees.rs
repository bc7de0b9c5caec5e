//! adk-tool's argument validator against the `jsonschema` crate, a complete draft 2020-12
//! implementation: on generated schemas (every keyword the validator checks, nested, with `$ref`s)
//! and generated values, both give the same verdict, and the validator's problems are empty
//! exactly when it says the value is valid.

use adk_tool::ArgumentValidator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// How many schema and value pairs each property checks.
const CASES: u32 = 3000;

/// The property names schemas and values share, so that they meet often.
const KEYS: [&str; 5] = ["a", "b", "c", "x1", "xy"];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned)
}

/// Values that meet the generated schemas' bounds on both sides.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-4i64..=12).prop_map(Value::from),
        prop::sample::select(vec![0.5, 1.0, 2.5, -3.0, 7.25, 12.0]).prop_map(Value::from),
        prop::sample::select(vec!["", "a", "ab", "abc", "b1", "xyz", "é€"]).prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn type_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "null", "boolean", "object", "array", "number", "string", "integer",
    ])
}

/// Schemas without subschemas.
fn leaf_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        type_name().prop_map(|name| json!({"type": name})),
        prop::collection::btree_set(type_name(), 2..4).prop_map(|names| json!({"type": names})),
        prop::collection::vec(scalar(), 1..4).prop_map(|options| json!({"enum": options})),
        scalar().prop_map(|constant| json!({"const": constant})),
        (
            prop::sample::select(vec![
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum"
            ]),
            prop::sample::select(vec![json!(0), json!(2), json!(2.5), json!(7)]),
        )
            .prop_map(|(keyword, bound)| json!({ keyword: bound })),
        prop::sample::select(vec![2, 3, 4]).prop_map(|divisor| json!({"multipleOf": divisor})),
        (
            prop::sample::select(vec!["minLength", "maxLength"]),
            0u64..4
        )
            .prop_map(|(keyword, count)| json!({ keyword: count })),
        prop::sample::select(vec!["^a", "b$", "^[a-c]+$", "\\d", "^$", "é"])
            .prop_map(|pattern| json!({"pattern": pattern})),
        (
            prop::sample::select(vec![
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties"
            ]),
            0u64..3
        )
            .prop_map(|(keyword, count)| json!({ keyword: count })),
        Just(json!({"uniqueItems": true})),
        prop::collection::btree_set(key(), 0..3).prop_map(|names| json!({"required": names})),
        (key(), prop::collection::btree_set(key(), 1..3))
            .prop_map(|(name, needs)| json!({"dependentRequired": {name: needs}})),
        Just(json!({"format": "email", "title": "ignored", "description": "ignored"})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(3, 32, 4, |inner| {
        let list = prop::collection::vec(inner.clone(), 1..3);
        prop_oneof![
            (
                prop::collection::btree_map(key(), inner.clone(), 0..3),
                prop::collection::btree_set(key(), 0..2),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(properties, required, additional)| {
                    let mut schema = json!({"properties": properties, "required": required});
                    if let Some(additional) = additional {
                        schema["additionalProperties"] = additional;
                    }
                    schema
                }),
            inner
                .clone()
                .prop_map(|schema| json!({"patternProperties": {"^x": schema}})),
            inner
                .clone()
                .prop_map(|schema| json!({"propertyNames": schema})),
            (key(), inner.clone())
                .prop_map(|(name, schema)| json!({"dependentSchemas": {name: schema}})),
            inner.clone().prop_map(|schema| json!({"items": schema})),
            (
                prop::collection::vec(inner.clone(), 1..3),
                prop::option::of(inner.clone())
            )
                .prop_map(|(prefix, rest)| {
                    let mut schema = json!({"prefixItems": prefix});
                    if let Some(rest) = rest {
                        schema["items"] = rest;
                    }
                    schema
                }),
            (
                inner.clone(),
                prop::option::of(0u64..3),
                prop::option::of(0u64..3)
            )
                .prop_map(|(contains, min, max)| {
                    let mut schema = json!({"contains": contains});
                    if let Some(min) = min {
                        schema["minContains"] = json!(min);
                    }
                    if let Some(max) = max {
                        schema["maxContains"] = json!(max);
                    }
                    schema
                }),
            list.clone().prop_map(|all| json!({"allOf": all})),
            list.clone().prop_map(|any| json!({"anyOf": any})),
            list.clone().prop_map(|one| json!({"oneOf": one})),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(
                |(condition, then, otherwise)| {
                    json!({"if": condition, "then": then, "else": otherwise})
                }
            ),
            (list.clone(), inner.clone()).prop_map(|(all, unevaluated)| {
                json!({"allOf": all, "unevaluatedProperties": unevaluated})
            }),
            (list.clone(), inner.clone()).prop_map(|(any, unevaluated)| {
                json!({"anyOf": any, "unevaluatedItems": unevaluated})
            }),
            (list, inner.clone()).prop_map(|(prefix, unevaluated)| {
                json!({"prefixItems": prefix, "unevaluatedItems": unevaluated})
            }),
            inner.prop_map(|not| json!({"not": not})),
        ]
    })
}

/// A generated schema, or one with a definition at the root that its properties and items
/// reach through `$ref`s (definitions live at the root only: a `$ref` resolves against it).
fn root_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        schema(),
        (schema(), schema()).prop_map(|(definition, rest)| {
            json!({
                "$defs": {"it": definition},
                "properties": {"a": {"$ref": "#/$defs/it"}, "b": {"items": {"$ref": "#/$defs/it"}}},
                "allOf": [rest, {"$ref": "#/$defs/it"}]
            })
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn the_verdict_is_the_reference_implementations(schema in root_schema(), value in value()) {
        let ours = ArgumentValidator::new(&schema).expect("a generated schema compiles");
        let reference = jsonschema::validator_for(&schema).expect("the reference compiles it");
        let valid = ours.is_valid(&value);
        prop_assert_eq!(valid, reference.is_valid(&value), "schema {} value {}", schema, value);
        prop_assert_eq!(ours.problems(&value).is_empty(), valid);
    }
}

#[test]
fn a_recursive_definition_checks_nested_values() {
    let schema = json!({
        "$defs": {"tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}, "required": ["kids"]}},
        "$ref": "#/$defs/tree"
    });
    let ours = ArgumentValidator::new(&schema).unwrap();
    let good = json!({"kids": [{"kids": []}, {"kids": [{"kids": []}]}]});
    let bad = json!({"kids": [{"kids": [{}]}]});
    assert!(ours.is_valid(&good));
    assert_eq!(
        ours.problems(&bad),
        ["- `kids[0].kids[0]`: \"kids\" is a required property"]
    );
}
