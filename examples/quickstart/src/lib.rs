//! The quickstart agent: one `LlmAgent` with one tool, `get_weather`.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run quickstart`.

pub mod eval;

use std::sync::Arc;

use adk::flow::LlmAgent;
use adk::tool::{FunctionTool, ToolContext};
use adk::{Agent, Llm, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "quickstart";

/// The arguments of `get_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherRequest {
    /// The city to report on, for example "Paris".
    pub city: String,
}

/// What `get_weather` reports.
#[derive(Debug, Serialize)]
pub struct WeatherReport {
    /// The city, as asked.
    pub city: String,
    /// The sky, in a word.
    pub sky: &'static str,
    /// The temperature in degrees Celsius.
    pub celsius: f64,
}

/// Reports the weather of a few cities from a fixed table, and remembers the last city asked.
pub async fn get_weather(
    ctx: Arc<dyn ToolContext>,
    request: WeatherRequest,
) -> std::result::Result<WeatherReport, String> {
    let (sky, celsius) = match request.city.to_lowercase().as_str() {
        "paris" => ("sunny", 21.0),
        "london" => ("cloudy", 16.5),
        "tokyo" => ("rainy", 19.0),
        "new york" => ("windy", 12.0),
        _ => {
            return Err(format!(
                "no weather data for {}; try Paris, London, Tokyo or New York",
                request.city
            ));
        }
    };
    ctx.set_state("user:last_city", serde_json::json!(request.city));
    Ok(WeatherReport {
        city: request.city,
        sky,
        celsius,
    })
}

/// The weather agent on `model`.
pub fn root_agent(model: Arc<dyn Llm>) -> Result<Arc<dyn Agent>> {
    let agent = LlmAgent::builder("weather_agent")
        .description("Answers questions about the weather in a city.")
        .model(model)
        .instruction(
            "You answer questions about the weather. Call get_weather for the city the user asks \
             about, then answer in one short sentence. The user last asked about: {user:last_city?}.",
        )
        .tool(Arc::new(FunctionTool::new(
            "get_weather",
            "Returns the sky and the temperature in a city.",
            get_weather,
        )))
        .build()?;
    Ok(Arc::new(agent))
}
