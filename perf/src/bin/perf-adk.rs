//! Invocations through adk-rs against the loopback Gemini mock: each a new in-memory session, two
//! model calls (a `get_weather` call, then the answer) and one tool call. See the crate docs.

use std::time::Instant;

use adk::prelude::*;
use adk_perf::{ClientArgs, MODEL, QUESTION, report, weather};
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
    let model = Gemini::builder(MODEL)
        .api_key("perf-key")
        .base_url(&args.url)
        .build()
        .expect("a Gemini model");
    let agent = LlmAgent::builder("weather_agent")
        .model(model)
        .instruction("You answer questions about the weather.")
        .tool(FunctionTool::new(
            "get_weather",
            "Returns the weather in a city.",
            get_weather,
        ))
        .build()
        .expect("an agent");
    let runner = Runner::in_memory("perf", agent).expect("a runner");
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
                let request = RunRequest::new("user", format!("s{index}"))
                    .message(QUESTION)
                    .run_config(config);
                let mut events = runner.run_request(request);
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
