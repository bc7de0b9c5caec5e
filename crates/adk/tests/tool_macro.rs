//! `#[adk::tool]`: the tool a function becomes, as the model and the flow see it.

use adk::core::{Content, FunctionCall, Part, Role};
use adk::prelude::*;
use adk_core::testing::ScriptedModel;
use serde_json::{Value, json};

/// Returns the sky and the temperature in a city.
#[adk::tool]
async fn get_weather(
    /// The city to report on, for example "Paris".
    city: String,
    /// Degrees in Fahrenheit instead of Celsius.
    fahrenheit: Option<bool>,
) -> Value {
    let temp = if fahrenheit == Some(true) { 70 } else { 21 };
    json!({ "city": city, "sky": "sunny", "temp": temp })
}

/// Remembers the user's favourite city.
#[adk::tool]
async fn remember_city(ctx: ToolContext, city: String) -> adk::Result<String> {
    ctx.set_state("user:favourite_city", &city)?;
    Ok(format!("I will remember {city}."))
}

/// Looks up the exchange rate between two currencies.
#[adk::tool(effect = "read_only")]
async fn exchange_rate(from: String, to: String) -> String {
    format!("1 {from} = 1.1 {to}")
}

/// Books a seat, once per idempotency key.
#[adk::tool(effect = "idempotent")]
async fn book_seat(ctx: ToolContext, seat: String) -> String {
    format!(
        "{seat} booked under {}",
        ctx.idempotency_key().unwrap_or_default()
    )
}

/// Divides two numbers.
#[adk::tool]
pub(crate) async fn divide(dividend: f64, divisor: f64) -> Result<f64, String> {
    if divisor == 0.0 {
        return Err("cannot divide by zero; ask for another divisor".to_owned());
    }
    Ok(dividend / divisor)
}

#[test]
fn the_doc_comments_and_parameters_make_the_declaration() {
    let declaration = get_weather.declaration().unwrap();
    assert_eq!(declaration.name, "get_weather");
    assert_eq!(
        declaration.description,
        "Returns the sky and the temperature in a city."
    );
    let parameters = declaration.parameters.unwrap();
    assert_eq!(
        parameters["properties"]["city"]["description"],
        "The city to report on, for example \"Paris\"."
    );
    assert_eq!(
        parameters["properties"]["fahrenheit"]["description"],
        "Degrees in Fahrenheit instead of Celsius."
    );
    assert_eq!(parameters["required"], json!(["city"]));
    let context_free = remember_city.declaration().unwrap().parameters.unwrap();
    assert_eq!(
        context_free["properties"].as_object().unwrap().len(),
        1,
        "the context is not an argument: {context_free}"
    );
}

#[test]
fn the_effect_option_declares_the_tool_effect() {
    assert_eq!(exchange_rate.effect(), adk::tool::ToolEffect::ReadOnly);
    assert_eq!(book_seat.effect(), adk::tool::ToolEffect::Idempotent);
    // Without the option a tool is assumed to act: the safe default.
    assert_eq!(divide.effect(), adk::tool::ToolEffect::Effectful);
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(get_weather::call("Oslo".into(), None).await["sky"], "sunny");
    assert_eq!(divide::call(1.0, 4.0).await, Ok(0.25));
}

/// Runs `calls` through an agent with the three tools and returns the function responses the
/// session stored, and the session's state.
async fn run_calls(calls: &[(&str, Value)]) -> (Vec<Value>, serde_json::Map<String, Value>) {
    let parts = calls
        .iter()
        .map(|(name, args)| Part::function_call(FunctionCall::new(*name, args.clone())));
    let model = ScriptedModel::new("scripted")
        .then(adk::core::LlmResponse::new(Content::new(
            Role::Model,
            parts,
        )))
        .then_text("Done.");
    let agent = LlmAgent::builder("assistant")
        .model(model)
        .tool(get_weather)
        .tool(remember_city)
        .tool(divide)
        .build()
        .unwrap();
    let runner = Runner::in_memory("app", agent).unwrap();
    assert_eq!(
        runner.run("ada", "s1", "Go.").final_text().await.unwrap(),
        "Done."
    );
    let session = runner.session("ada", "s1").await.unwrap().unwrap();
    let responses = session
        .events
        .iter()
        .flat_map(Event::function_responses)
        .map(|response| Value::Object(response.response.clone()))
        .collect();
    (responses, session.state)
}

#[tokio::test]
async fn a_model_calls_the_tools_through_an_agent() {
    let (responses, state) = run_calls(&[
        ("get_weather", json!({"city": "Paris", "fahrenheit": true})),
        ("remember_city", json!({"city": "Lyon"})),
        ("divide", json!({"dividend": 3, "divisor": 2})),
    ])
    .await;
    assert_eq!(
        responses,
        [
            json!({"city": "Paris", "sky": "sunny", "temp": 70}),
            json!({"result": "I will remember Lyon."}),
            json!({"result": 1.5}),
        ]
    );
    assert_eq!(state["user:favourite_city"], "Lyon");
}

#[tokio::test]
async fn errors_and_bad_arguments_become_error_results_the_model_reads() {
    let (responses, _) = run_calls(&[
        ("divide", json!({"dividend": 3, "divisor": 0})),
        ("get_weather", json!({"town": "Paris"})),
    ])
    .await;
    assert_eq!(
        responses[0],
        json!({"error": "cannot divide by zero; ask for another divisor"})
    );
    let invalid = responses[1]["error"].as_str().unwrap();
    assert!(invalid.contains("city"), "{invalid}");
}
