//! Property tests of argument validation: arguments that follow the schema pass, arguments that
//! break it are refused with a message naming the field, and no JSON value makes the validator or
//! a function tool panic. Each property runs `CASES` generated cases.

mod support;

use adk_tool::{ArgumentValidator, FunctionTool, Tool, ToolContext};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// How many cases each property runs.
const CASES: u32 = 2048;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "units": {"enum": ["metric", "imperial"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city", "days"],
        "additionalProperties": false,
    })
}

/// Arguments that follow [`schema`].
fn valid_args() -> impl Strategy<Value = Value> {
    (
        "[^\\p{Cc}]{1,20}",
        1..=14i64,
        prop::option::of(prop::sample::select(vec!["metric", "imperial"])),
        prop::option::of(prop::collection::vec("[a-z]{0,6}", 0..4)),
    )
        .prop_map(|(city, days, units, tags)| {
            let mut args = json!({"city": city, "days": days});
            if let Some(units) = units {
                args["units"] = json!(units);
            }
            if let Some(tags) = tags {
                args["tags"] = json!(tags);
            }
            args
        })
}

/// Any JSON value, with keys that often are the schema's fields.
fn any_json() -> impl Strategy<Value = Value> {
    adk_test::any_json(&["city", "days", "units", "tags"])
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // Read through serde only: the property is that parsing never panics.
struct Forecast {
    city: String,
    days: u8,
    units: Option<String>,
}

async fn forecast(_ctx: ToolContext, args: Forecast) -> Result<String, String> {
    Ok(format!("{} days in {}", args.days, args.city))
}

/// A tool context for calling a tool outside a flow; a plain call reads none of it.
fn context() -> ToolContext {
    support::TestToolContext::plain()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn arguments_that_follow_the_schema_pass(args in valid_args()) {
        let validator = ArgumentValidator::new(&schema()).unwrap();
        prop_assert!(validator.validate("forecast", &args).is_ok(), "{args}");
    }

    #[test]
    fn a_wrongly_typed_field_is_refused_by_name(
        args in valid_args(),
        field in prop::sample::select(vec!["city", "days", "units", "tags"]),
        wrong in prop_oneof![Just(json!(null)), Just(json!({"x": 1})), Just(json!(3.5))],
    ) {
        let mut args = args;
        args[field] = wrong;
        let error = ArgumentValidator::new(&schema())
            .unwrap()
            .validate("forecast", &args)
            .unwrap_err()
            .to_string();
        prop_assert!(error.contains(&format!("`{field}`")), "{error}");
    }

    #[test]
    fn no_json_value_makes_validation_panic(args in any_json()) {
        let validator = ArgumentValidator::new(&schema()).unwrap();
        let problems = validator.problems(&args);
        prop_assert_eq!(problems.is_empty(), validator.validate("forecast", &args).is_ok());
    }

    #[test]
    fn no_json_value_makes_a_function_tool_panic(args in any_json()) {
        let tool = FunctionTool::new("forecast", "Forecasts the weather.", forecast);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // A result or a typed error; the tool's own panic capture would turn a panic into an
        // error, so check the error is not one.
        if let Err(error) = runtime.block_on(tool.run(context(), args)) {
            prop_assert!(!error.message().contains("panicked"), "{error}");
        }
    }
}
