//! Invocations through adk-rs against the loopback Gemini mock: each a new in-memory session, two
//! model calls (a `get_weather` call, then the answer) and one tool call. See the crate docs.
//!
//! Two settings from the environment measure the effect journal's share of an invocation (see
//! `docs/durability.md`): `ADK_PERF_SQLITE=<path>` keeps the sessions in a SQLite database at
//! that path instead of in memory, and `ADK_PERF_TOOL_EFFECT=read_only|idempotent|effectful`
//! declares the tool's effect (effectful when unset, as a function tool's default; a read-only
//! tool records nothing in the journal).

use std::time::Instant;

use adk::prelude::*;
use adk::tool::ToolEffect;
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

/// The runner of `agent`, on the sessions `ADK_PERF_SQLITE` names (in memory when unset).
async fn runner(agent: LlmAgent) -> Runner {
    match std::env::var_os("ADK_PERF_SQLITE") {
        None => Runner::in_memory("perf", agent).expect("a runner"),
        Some(path) => {
            let sessions = adk::session::SqliteSessionService::open(path)
                .await
                .expect("the SQLite database opens");
            Runner::builder("perf", agent, sessions)
                .auto_create_session(true)
                .build()
                .expect("a runner")
        }
    }
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
    let effect = std::env::var("ADK_PERF_TOOL_EFFECT").map_or(ToolEffect::Effectful, |effect| {
        effect
            .parse()
            .expect("ADK_PERF_TOOL_EFFECT names an effect")
    });
    let agent = LlmAgent::builder("weather_agent")
        .model(model)
        .instruction("You answer questions about the weather.")
        .tool(
            FunctionTool::builder("get_weather", "Returns the weather in a city.", get_weather)
                .effect(effect)
                .build(),
        )
        .build()
        .expect("an agent");
    let runner = runner(agent).await;
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
