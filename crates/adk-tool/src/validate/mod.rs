//! Checks a model's arguments against a tool's JSON schema before the tool runs, and words each
//! problem so that the model can fix its call.
//!
//! The validator is adk-rs's own (`compile.rs` builds a tree of the schema's keywords, `check/`
//! walks it), covering JSON Schema draft 2020-12's assertions and applicators with draft 7's and
//! OpenAPI's spellings: building one costs microseconds, with no meta-schema to compile first,
//! and links no regex engine beyond `regex-lite` for `pattern`. Its verdicts are tested against
//! the `jsonschema` crate's on generated schemas and values (`tests/validator_agrees.rs`).

mod check;
mod compile;
mod json;

use std::fmt::Write as _;

use serde_json::Value;

use crate::{ToolError, ToolErrorKind};

/// A compiled JSON Schema that checks a model's arguments (or any value the model wrote, such as
/// a structured answer) and words each problem so that the model can fix it.
///
/// What it checks: `type`, `enum`, `const`, the numeric bounds and `multipleOf`, string lengths
/// and `pattern`, array items (`items`, `prefixItems`, `contains`, sizes, `uniqueItems`), object
/// properties (`properties`, `patternProperties`, `additionalProperties`, `required`,
/// `propertyNames`, sizes, dependencies), `allOf`/`anyOf`/`oneOf`/`not`/`if`, the `unevaluated*`
/// keywords, and `$ref`s within the schema. `format` is an annotation, as in draft 2020-12.
/// Building fails, saying where, on a malformed keyword, a `$ref` outside the schema, or a
/// `pattern` with lookaround or backreferences.
///
/// ```
/// use adk_tool::ArgumentValidator;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
/// let validator = ArgumentValidator::new(&schema).unwrap();
/// assert!(validator.validate("get_weather", &json!({"city": "Paris"})).is_ok());
/// assert_eq!(validator.problems(&json!({"city": 7})), ["- `city`: 7 is not of type \"string\""]);
/// ```
#[derive(Debug)]
pub struct ArgumentValidator {
    schema: compile::Compiled,
}

impl ArgumentValidator {
    /// Compiles `schema`; fails when it is not a JSON Schema this validator can check.
    pub fn new(schema: &Value) -> Result<Self, ToolError> {
        let schema = compile::compile(schema).map_err(|error| {
            ToolError::new(
                ToolErrorKind::Serialization,
                format!("the tool's argument schema is not a valid JSON Schema: {error}"),
            )
        })?;
        Ok(Self { schema })
    }

    /// Whether `value` follows the schema; stops at the first problem.
    pub fn is_valid(&self, value: &Value) -> bool {
        check::is_valid(&self.schema, value)
    }

    /// Every way `value` breaks the schema, one line each (`- `field.path`: problem`); empty when
    /// it is valid.
    pub fn problems(&self, value: &Value) -> Vec<String> {
        check::problems(&self.schema, value)
            .into_iter()
            .map(|problem| format!("- {}: {}", problem.path, problem.message))
            .collect()
    }

    /// Checks `args` for tool `tool_name`; the error lists every invalid field with its path.
    pub fn validate(&self, tool_name: &str, args: &Value) -> Result<(), ToolError> {
        if self.is_valid(args) {
            return Ok(());
        }
        let mut message =
            format!("Invalid arguments for tool `{tool_name}`; fix these and call it again:");
        for problem in self.problems(args) {
            let _ = write!(message, "\n{problem}");
        }
        Err(ToolError::new(ToolErrorKind::InvalidArguments, message))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        ArgumentValidator::new(&schema).unwrap().problems(&value)
    }

    #[test]
    fn each_problem_names_its_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "days": {"type": "integer", "maximum": 7},
                "place": {"type": "object", "required": ["city"], "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
                "unit": {"enum": ["celsius", "fahrenheit"]}
            },
            "additionalProperties": false
        });
        assert_eq!(
            problems(
                schema,
                json!({"days": 9, "place": {"tags": ["a", 2]}, "unit": "kelvin", "x": 1, "y": 2})
            ),
            [
                "- `days`: 9 is greater than the maximum of 7",
                "- `place`: \"city\" is a required property",
                "- `place.tags[1]`: 2 is not of type \"string\"",
                "- `unit`: \"kelvin\" is not one of \"celsius\" or \"fahrenheit\"",
                "- arguments: Additional properties are not allowed (\"x\", \"y\" were unexpected)",
            ]
        );
    }

    #[test]
    fn combinators_and_conditions_word_what_failed() {
        let schema = json!({
            "anyOf": [{"type": "string"}, {"type": "integer"}],
            "not": {"const": 3}
        });
        assert_eq!(
            problems(schema, json!(3)),
            ["- arguments: 3 must not match the schema under 'not'"]
        );
        let schema = json!({"if": {"properties": {"kind": {"const": "city"}}}, "then": {"required": ["city"]}, "else": {"required": ["region"]}});
        assert_eq!(
            problems(schema.clone(), json!({"kind": "city"})),
            ["- arguments: \"city\" is a required property"]
        );
        assert_eq!(
            problems(schema, json!({"kind": "sea"})),
            ["- arguments: \"region\" is a required property"]
        );
    }

    #[test]
    fn unevaluated_properties_see_through_all_of_and_refs() {
        let schema = json!({
            "$defs": {"named": {"properties": {"name": {"type": "string"}}}},
            "allOf": [{"$ref": "#/$defs/named"}],
            "properties": {"age": {"type": "integer"}},
            "unevaluatedProperties": false
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        assert!(validator.is_valid(&json!({"name": "Ada", "age": 36})));
        assert_eq!(
            validator.problems(&json!({"name": "Ada", "nick": "A"})),
            ["- arguments: Unevaluated properties are not allowed (\"nick\" was unexpected)"]
        );
    }

    #[test]
    fn a_reference_to_itself_is_cut_off_not_a_stack_overflow() {
        let validator = ArgumentValidator::new(&json!({"$ref": "#"})).unwrap();
        assert!(!validator.is_valid(&json!(1)));
        assert!(validator.problems(&json!(1))[0].contains("nest too deeply"));
    }

    #[test]
    fn a_broken_schema_is_a_serialization_error_that_says_where() {
        let error =
            ArgumentValidator::new(&json!({"properties": {"a": {"type": "text"}}})).unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Serialization);
        assert!(error.message().contains("`#/properties/a`"), "{error}");
    }
}
