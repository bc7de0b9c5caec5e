//! Invocations through adk-rs against the loopback Gemini mock: each a new in-memory session, two
//! model calls (a `get_weather` call, then the answer) and one tool call. See the crate docs.

use std::sync::Arc;
use std::time::Instant;

use adk::flow::LlmAgent;
use adk::model::GeminiModel;
use adk::runner::Runner;
use adk::session::InMemorySessionService;
use adk::tool::FunctionTool;
use adk::{Content, RunConfig, StreamingMode};
use adk_perf::{ClientArgs, MODEL, QUESTION, report, weather};
use futures::StreamExt as _;
use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of `get_weather`.
#[derive(Deserialize, JsonSchema)]
struct City {
    /// The city to report on.
    city: String,
}

async fn get_weather(args: City) -> Result<serde_json::Value, String> {
    Ok(weather(&args.city))
}

#[tokio::main]
async fn main() {
    let started = Instant::now();
    let args = ClientArgs::from_env();
    let model = GeminiModel::builder(MODEL)
        .api_key("perf-key")
        .base_url(&args.url)
        .build()
        .expect("a Gemini model");
    let agent = LlmAgent::builder("weather_agent")
        .model(Arc::new(model))
        .instruction("You answer questions about the weather.")
        .tool(Arc::new(FunctionTool::new(
            "get_weather",
            "Returns the weather in a city.",
            get_weather,
        )))
        .build()
        .expect("an agent");
    let runner = Runner::builder("perf", Arc::new(agent))
        .session_service(Arc::new(InMemorySessionService::new()))
        .auto_create_session(true)
        .build()
        .expect("a runner");
    let config = RunConfig::default().with_streaming_mode(if args.sse {
        StreamingMode::Sse
    } else {
        StreamingMode::None
    });
    futures::stream::iter(0..args.invocations)
        .for_each_concurrent(args.concurrency, |index| {
            let runner = &runner;
            let config = config.clone();
            async move {
                let events =
                    runner.run("user", format!("s{index}"), Content::user(QUESTION), config);
                let mut events = std::pin::pin!(events);
                let mut answered = false;
                while let Some(event) = events.next().await {
                    let event = event.expect("the invocation succeeds");
                    answered |= event.is_final_response();
                }
                assert!(answered, "the invocation ends with the model's answer");
            }
        })
        .await;
    report(started);
}
