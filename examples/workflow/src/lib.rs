//! A trip planner as a graph workflow: a function node reads the request and routes it, a trip
//! fans out to two agents that work at the same time, a join gathers their notes, and a planner
//! writes the plan; anything else gets a short chat answer.
//!
//! ```text
//! START → intake ─ trip ──→ weather_scout ─┐
//!                │        └→ sights_scout ─┴→ gather (join) → planner
//!                └ default → small_talk
//! ```
//!
//! Run it with the `adk` command line: `cargo run -p adk-cli -- run workflow`, or `cargo run -p
//! adk-cli -- web` to see the graph drawn in the dev UI, with the running node highlighted.

use adk::Result;
use adk::core::IntoLlm;
use adk::flow::LlmAgent;
use adk::workflow::{Node, NodeContext, NodeError, NodeOutput, Routes, START, Workflow};
use serde_json::json;

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "workflow";

/// Words that make a message a trip request.
const TRIP_WORDS: [&str; 5] = ["trip", "travel", "visit", "weekend", "holiday"];

/// The route `intake` takes for `message`: `trip` when it asks about a trip, none otherwise (the
/// default route then takes it to small talk).
pub fn route_of(message: &str) -> Option<&'static str> {
    let lower = message.to_lowercase();
    TRIP_WORDS
        .iter()
        .any(|word| lower.contains(word))
        .then_some("trip")
}

/// The trip planner on `model`.
pub fn root_agent(model: impl IntoLlm) -> Result<Workflow> {
    let model = model.into_llm();
    let intake = Node::function("intake", |ctx: NodeContext, message: String| async move {
        ctx.set_state("request", &message)?;
        let output = NodeOutput::value(json!({"request": message}));
        Ok::<_, NodeError>(match route_of(&message) {
            Some(route) => output.route(route),
            None => output,
        })
    })
    .describe("Reads the request and decides whether it is about a trip.");
    let agent = |name: &str, description: &str, instruction: &str| {
        LlmAgent::builder(name)
            .description(description)
            .model(model.clone())
            .instruction(instruction)
            .build()
            .map(Node::from)
    };
    let weather = agent(
        "weather_scout",
        "Notes the weather to expect.",
        "In two short lines, say what weather to expect for this trip and what to pack for it.",
    )?;
    let sights = agent(
        "sights_scout",
        "Picks what to see.",
        "List three things worth seeing on this trip, one line each.",
    )?;
    let planner = agent(
        "planner",
        "Writes the plan from the scouts' notes.",
        "Write a short day-by-day plan from these notes: the weather scout's and the sights \
         scout's, given as JSON by node name.",
    )?;
    let small_talk = agent(
        "small_talk",
        "Answers anything that is not a trip request.",
        "Answer briefly and offer to plan a trip.",
    )?;
    let workflow = Workflow::builder("trip_planner")
        .description("Plans a trip: weather and sights at the same time, then a plan.")
        .chain((
            START,
            &intake,
            Routes::new()
                .on("trip", [&weather, &sights])
                .otherwise(&small_talk),
        ))
        .chain(([&weather, &sights], Node::join("gather"), &planner))
        .build()?;
    Ok(workflow)
}
