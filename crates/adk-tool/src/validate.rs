//! Checks a model's arguments against a tool's JSON schema before the tool runs, and words each
//! problem so that the model can fix its call.

use std::fmt::Write as _;

use jsonschema::Validator;
use serde_json::Value;

use crate::{ToolError, ToolErrorKind};

/// A compiled JSON Schema that checks a model's arguments (or any value the model wrote, such as
/// a structured answer) and words each problem so that the model can fix it.
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
pub struct ArgumentValidator {
    validator: Validator,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator").finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// Compiles `schema`; fails when it is not a valid JSON Schema.
    pub fn new(schema: &Value) -> Result<Self, ToolError> {
        let validator = jsonschema::validator_for(schema).map_err(|error| {
            ToolError::new(
                ToolErrorKind::Serialization,
                format!("the tool's argument schema is not a valid JSON Schema: {error}"),
            )
        })?;
        Ok(Self { validator })
    }

    /// Every way `value` breaks the schema, one line each (`- `field.path`: problem`); empty when
    /// it is valid.
    pub fn problems(&self, value: &Value) -> Vec<String> {
        self.validator
            .iter_errors(value)
            .map(|error| {
                let path = field_path(error.instance_path().as_str());
                format!("- {path}: {error}")
            })
            .collect()
    }

    /// Checks `args` for tool `tool_name`; the error lists every invalid field with its path.
    pub fn validate(&self, tool_name: &str, args: &Value) -> Result<(), ToolError> {
        let problems = self.problems(args);
        if problems.is_empty() {
            return Ok(());
        }
        let mut message =
            format!("Invalid arguments for tool `{tool_name}`; fix these and call it again:");
        for problem in problems {
            let _ = write!(message, "\n{problem}");
        }
        Err(ToolError::new(ToolErrorKind::InvalidArguments, message))
    }
}

/// A JSON pointer (`/place/tags/0`) written as a field path (`place.tags[0]`).
fn field_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "arguments".to_owned();
    }
    let mut path = String::new();
    for segment in pointer.trim_start_matches('/').split('/') {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.parse::<usize>().is_ok() {
            let _ = write!(path, "[{segment}]");
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&segment);
        }
    }
    format!("`{path}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_field_paths() {
        assert_eq!(field_path(""), "arguments");
        assert_eq!(field_path("/place/tags/0"), "`place.tags[0]`");
        assert_eq!(field_path("/a~1b"), "`a/b`");
    }
}
