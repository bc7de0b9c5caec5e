//! A writing pipeline: two researchers work in parallel, then a writer and a critic take turns in a
//! loop until the critic is satisfied.
//!
//! Run it interactively with the `adk` command line: `cargo run -p adk-cli -- run pipeline`.

use adk::core::IntoLlm;
use adk::prelude::*;
use adk::tool::builtin::exit_loop;

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "pipeline";

/// The pipeline on `model`.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<SequentialAgent> {
    // One model for every agent of the pipeline, shared.
    let model = model.into_llm();
    let facts = LlmAgent::builder("fact_finder")
        .model(model.clone())
        .instruction("List three facts about the user's topic, one line each.")
        .output_key("facts")
        .build()?;
    let angles = LlmAgent::builder("angle_finder")
        .model(model.clone())
        .instruction("Suggest one surprising angle on the user's topic, in one sentence.")
        .output_key("angle")
        .build()?;
    let research = ParallelAgent::builder("research")
        .description("Finds facts and an angle at the same time.")
        .sub_agent(facts)
        .sub_agent(angles)
        .build()?;
    let writer = LlmAgent::builder("writer")
        .model(model.clone())
        .instruction(
            "Write a short paragraph on the user's topic from these facts:\n{facts}\nand this angle: \
             {angle}\nIf there is a critique, address it: {critique?}",
        )
        .output_key("draft")
        .build()?;
    let critic = LlmAgent::builder("critic")
        .model(model)
        .instruction(
            "Critique this draft in one sentence:\n{draft}\nIf it is good enough, call exit_loop \
             instead of writing a critique.",
        )
        .tool(exit_loop())
        .output_key("critique")
        .build()?;
    let refine = LoopAgent::builder("refine")
        .description("Writes and critiques until the critic is satisfied, three rounds at most.")
        .sub_agent(writer)
        .sub_agent(critic)
        .max_iterations(3)
        .build()?;
    SequentialAgent::builder("writing_pipeline")
        .description("Researches a topic, then writes about it.")
        .sub_agent(research)
        .sub_agent(refine)
        .build()
}
