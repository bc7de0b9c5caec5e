//! The orchestrator example: a `FlexibleOrchestrator` plans a trip briefing and runs it.
//!
//! Ask it something like "I am going to Paris and Tokyo next week; what should I pack?". The
//! analyzer breaks the request into tasks in XML; the orchestrator runs them phase by phase with
//! three kinds of processor:
//!
//! - `weather`: a tool processor calling the quickstart's `get_weather` (a fixed table), once
//!   per city, the cities' lookups at the same time;
//! - `packing`: a closure that turns the weather it depends on into a packing list;
//! - `writer`: an agent processor running a `RunLoopAgent` that writes the note from its task.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run orchestrator`.
//!
//! The analyzer gets one demonstration: a weather lookup for Tokyo, then a note. With a hosted
//! model (Gemini, OpenAI) it is meant to plan any such request from it: a lookup per city, then
//! the packing list, then the note. The local SmolLM2-135M model is too small to plan: asked "What is the weather in Paris? Write
//! me a note.", it answers with the demonstrated plan, which then runs in two phases; asked other
//! things, its plans are often not plans, and the run says so after three attempts.

use adk::Result;
use adk::core::{GenerateContentConfig, IntoLlm};
use adk::orchestrator::{
    AgentProcessor, AnalyzerConfig, FlexibleOrchestrator, FnProcessor, LoopConfig,
    OrchestrationConfig, RetryConfig, RunLoopAgent, TaskInput, ToolProcessor,
};
use quickstart::get_weather;
use serde_json::{Value, json};

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "orchestrator";

/// A demonstration for the analyzer: a request and the plan it should get.
const EXAMPLE_REQUEST: &str = "What is the weather in Tokyo? Write me a note.";

/// The plan of [`EXAMPLE_REQUEST`]: a lookup, then a note that builds on it.
const EXAMPLE_PLAN: &str = r#"<tasks>
  <task id="weather_tokyo" type="lookup" processor="weather" priority="1">
    <description>Look up the weather in Tokyo.</description>
    <metadata><item key="city">Tokyo</item></metadata>
  </task>
  <task id="note" type="write" processor="writer" priority="2">
    <description>Write a short note.</description>
    <dependencies><dep>weather_tokyo</dep></dependencies>
  </task>
</tasks>"#;

/// What to pack for the weather reports among `input`'s dependency outputs.
pub fn packing_list(input: &TaskInput) -> Value {
    let mut items = vec!["passport".to_owned(), "phone charger".to_owned()];
    for report in input.dependency_outputs.values() {
        let sky = report["sky"].as_str().unwrap_or_default();
        let celsius = report["celsius"].as_f64().unwrap_or(15.0);
        let city = report["city"].as_str().unwrap_or("the trip");
        let mut add = |item: String| {
            if !items.contains(&item) {
                items.push(item);
            }
        };
        match sky {
            "rainy" => add(format!("umbrella (for {city})")),
            "sunny" => add(format!("sunglasses (for {city})")),
            "windy" => add(format!("windbreaker (for {city})")),
            _ => {}
        }
        if celsius < 10.0 {
            add(format!("warm coat (for {city})"));
        } else if celsius > 20.0 {
            add(format!("light clothes (for {city})"));
        }
    }
    json!(items)
}

/// The orchestrator on `model`: the analyzer, and the writer's run loop, use it.
pub fn root_agent(model: impl IntoLlm) -> Result<FlexibleOrchestrator> {
    let model = model.into_llm();
    let weather = ToolProcessor::new(get_weather).with_description(
        "Looks up the sky and the temperature in one city. Give its arguments as metadata \
         items: city.",
    );
    let packing = FnProcessor::new(
        "Makes a packing list from the weather tasks it depends on.",
        |input| async move { Ok(packing_list(&input)) },
    );
    let mut quiet = GenerateContentConfig::default();
    quiet.temperature = Some(0.0);
    quiet.max_output_tokens = Some(200);
    let writer = RunLoopAgent::builder("writer")
        .description("Writes a short travel note from the results of the tasks it depends on.")
        .model(model.clone())
        .instruction(
            "You write a short travel note, three sentences at most, from the task below and the \
             results it lists. Mention the weather and what to pack.",
        )
        .generate_config(quiet.clone())
        .config(
            LoopConfig::default()
                .with_max_iterations(2)
                .with_token_budget(8_000)
                // The writer needs only its task, the last message on its branch.
                .with_transform_context(|history| async move {
                    Ok(Vec::from_iter(history.last().cloned()).into())
                }),
        )
        .build()?;
    let mut planning = quiet;
    planning.max_output_tokens = Some(600);
    FlexibleOrchestrator::builder("trip_planner")
        .description("Plans a trip briefing: weather per city, a packing list, and a note.")
        .model(model)
        .analyzer(
            AnalyzerConfig::default()
                .with_example(EXAMPLE_REQUEST, EXAMPLE_PLAN)
                .with_generate_config(planning),
        )
        .processor("weather", weather)
        .processor("packing", packing)
        .processor("writer", AgentProcessor::new(writer))
        .config(
            OrchestrationConfig::default()
                .with_max_concurrent(4)
                .with_retry(RetryConfig::new(2)),
        )
        .build()
}
