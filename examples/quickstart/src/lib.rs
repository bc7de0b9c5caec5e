//! The quickstart agent: one `LlmAgent` with one tool, `get_weather`.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run quickstart`.

pub mod eval;

use adk::core::IntoLlm;
use adk::prelude::*;
use serde::Serialize;

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "quickstart";

/// What `get_weather` reports.
#[derive(Debug, Serialize)]
pub struct WeatherReport {
    /// The city, as asked.
    pub city: String,
    /// The sky, in a word.
    pub sky: &'static str,
    /// The temperature as people read it, in degrees Celsius: "19 °C", "16.5 °C".
    pub temperature: String,
}

/// Returns the sky and the temperature in a city.
#[adk::tool]
pub async fn get_weather(
    ctx: ToolContext,
    /// The city to report on, for example "Paris".
    city: String,
) -> Result<WeatherReport, String> {
    // A fixed table: the example is about the agent, not about a weather service.
    let (sky, celsius) = match city.to_lowercase().as_str() {
        "paris" => ("sunny", 21.0),
        "london" => ("cloudy", 16.5),
        "tokyo" => ("rainy", 19.0),
        "new york" => ("windy", 12.0),
        _ => {
            return Err(format!(
                "no weather data for {city}; try Paris, London, Tokyo or New York"
            ));
        }
    };
    // The instruction shows the last city to the model, from the user's state.
    ctx.set_state("user:last_city", &city)
        .map_err(|error| error.to_string())?;
    Ok(WeatherReport {
        city,
        sky,
        temperature: format!("{celsius} °C"),
    })
}

/// The weather agent on `model`.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<LlmAgent> {
    LlmAgent::builder("weather_agent")
        .description("Answers questions about the weather in a city.")
        .model(model)
        .instruction(
            "You answer questions about the weather. Call get_weather for the city the user asks \
             about, then answer in one short sentence. The user last asked about: {user:last_city?}.",
        )
        .tool(get_weather)
        .build()
}
