//! Snapshots of the schemas generated for tool arguments: nested structs, enums, options, vectors,
//! maps and recursive types, in the simplified shape sent to models.

use std::collections::BTreeMap;

use adk_tool::{parameters_schema, simplify_schema};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A point on the map.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Location {
    /// Degrees north.
    latitude: f64,
    /// Degrees east.
    longitude: f64,
}

/// The unit of temperatures.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Where to report on.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Place {
    /// A named city.
    City {
        name: String,
        country: Option<String>,
    },
    /// Coordinates.
    Point { location: Location },
}

/// The arguments of a weather forecast.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Forecast {
    /// Where.
    place: Place,
    /// The unit; Celsius when absent.
    unit: Option<Unit>,
    /// How many days ahead, 1 to 7.
    #[schemars(range(min = 1, max = 7))]
    days: u8,
    /// Extra places to compare with.
    #[serde(default)]
    compare_with: Vec<Location>,
    /// Free-form labels.
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

/// A tree of tasks.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Task {
    title: String,
    subtasks: Vec<Task>,
}

#[test]
fn nested_structs_enums_options_and_vectors() {
    insta::assert_json_snapshot!(parameters_schema::<Forecast>());
}

#[test]
fn recursive_types_are_cut_below_the_first_level() {
    let schema = parameters_schema::<Task>();
    assert!(!schema.to_string().contains("$ref"));
    insta::assert_json_snapshot!(schema);
}

#[test]
fn simplified_schemas_have_no_references_or_definitions() {
    let schema = parameters_schema::<Forecast>().to_string();
    for keyword in [
        "$ref",
        "$defs",
        "definitions",
        "$schema",
        "oneOf",
        "additionalProperties",
    ] {
        assert!(!schema.contains(keyword), "{keyword} in {schema}");
    }
}

#[test]
fn foreign_schemas_are_simplified_too() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "mode": {"const": "fast"},
            "path": {"allOf": [{"$ref": "#/definitions/Path"}], "description": "Where."},
            "tags": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "many": {"type": ["string", "integer"]}
        },
        "definitions": {"Path": {"type": "string", "format": "path"}}
    });
    insta::assert_json_snapshot!(simplify_schema(schema));
}
