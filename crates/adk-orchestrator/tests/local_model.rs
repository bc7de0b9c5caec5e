//! End to end on the real local model (SmolLM2-135M served by llama.cpp, through the OpenAI
//! adapter): the orchestrator plans and runs a request under the real runner, the run loop
//! answers with a tool, and a real context overflow from llama.cpp is trimmed and retried.
//!
//! The model is tiny, so these tests assert structure (which events, which statuses, what the
//! session stored), never wording. Decoding is greedy on a fixed seed, so runs repeat. The first
//! run on a machine builds `llama-server` (about 15 minutes on 2 cores) into the user cache
//! directory; later runs reuse it.

mod support;

use std::sync::Arc;

use adk_core::{
    Agent, Content, Error, ErrorKind, Event, GenerateContentConfig, GetSessionRequest, Llm,
    LlmRequest, RunConfig, SessionKey, SessionService,
};
use adk_local_model::{LocalModel, LocalModelConfig, LocalServer, ServerOptions};
use adk_model::OpenAi;
use adk_orchestrator::{
    AgentProcessor, AnalyzerConfig, DEFAULT_RESULT_KEY, FlexibleOrchestrator, FnProcessor,
    LoopConfig, LoopEvent, LoopResult, OrchestratorResult, RunLoopAgent, StopReason, ToolProcessor,
};
use adk_runner::{RunRequest, Runner};
use adk_session::InMemorySessionService;
use adk_test::ClosureTool;
use futures::TryStreamExt as _;
use parking_lot::Mutex;
use serde_json::json;
use support::statuses;

/// Starts the local server with `ctx_size` tokens of context (building it first if needed).
async fn server(ctx_size: u32) -> LocalServer {
    let mut options = ServerOptions::default();
    options.ctx_size = ctx_size;
    let config = LocalModelConfig::from_env()
        .expect("a cache directory")
        .with_server(options);
    let progress = |event: &adk_local_model::ProgressEvent| eprintln!("local model: {event:?}");
    let model = LocalModel::ensure(config, &progress)
        .await
        .expect("the local model is ready");
    model.start().await.expect("the server starts")
}

fn model(server: &LocalServer) -> Arc<dyn Llm> {
    let model = OpenAi::builder(server.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .prompted_tools(true)
        .build()
        .expect("the adapter builds");
    Arc::new(model)
}

fn greedy(max_output_tokens: u32) -> GenerateContentConfig {
    let mut config = GenerateContentConfig::default();
    config.temperature = Some(0.0);
    config.max_output_tokens = Some(max_output_tokens);
    config
}

/// Runs `agent` once under the runner on `message`; returns its events and the stored session's
/// state.
async fn run(
    agent: Arc<dyn Agent>,
    message: &str,
) -> (Vec<Event>, serde_json::Map<String, serde_json::Value>) {
    let sessions = Arc::new(InMemorySessionService::new());
    let runner = Runner::builder("e2e", agent, sessions.clone())
        .auto_create_session(true)
        .build()
        .expect("the runner builds");
    let config = RunConfig::default().with_max_llm_calls(8);
    let events: Vec<Event> = runner
        .run_request(
            RunRequest::new("user", "s1")
                .message(message)
                .run_config(config),
        )
        .try_collect()
        .await
        .expect("the run succeeds");
    let session = sessions
        .get_session(GetSessionRequest::new(SessionKey::new("e2e", "user", "s1")))
        .await
        .expect("the session loads")
        .expect("the session exists");
    (events, session.state.into_iter().collect())
}

#[tokio::test]
async fn the_orchestrator_plans_and_runs_a_request_on_the_local_model() {
    let server = server(4096).await;
    let model = model(&server);
    let weather = ClosureTool::shared("get_weather", |_ctx, args| {
        Ok(json!({"city": args["city"], "sky": "sunny", "celsius": 21}))
    });
    let writer = RunLoopAgent::builder("writer")
        .description("Writes a short note from the results it is given.")
        .model(model.clone())
        .instruction("Write one short sentence from the task below.")
        .generate_config(greedy(60))
        .config(
            LoopConfig::default()
                .with_max_iterations(2)
                .with_transform_context(|history| async move {
                    Ok(Arc::new(history.last().cloned().into_iter().collect()))
                }),
        )
        .build()
        .unwrap();
    // A 135M model ignores a described format but follows a demonstrated plan.
    let example_plan = r#"<tasks>
  <task id="weather_tokyo" type="lookup" processor="weather" priority="1">
    <description>Look up the weather in Tokyo.</description>
    <metadata><item key="city">Tokyo</item></metadata>
  </task>
  <task id="note" type="write" processor="writer" priority="2">
    <description>Write a short note.</description>
    <dependencies><dep>weather_tokyo</dep></dependencies>
  </task>
</tasks>"#;
    let orchestrator = FlexibleOrchestrator::builder("planner")
        .model(model)
        .analyzer(
            AnalyzerConfig::default()
                .with_example(
                    "What is the weather in Tokyo? Write me a note.",
                    example_plan,
                )
                .with_generate_config(greedy(400)),
        )
        .processor("weather", ToolProcessor::new(weather))
        .processor("writer", AgentProcessor::new(writer))
        .processor(
            "echo",
            FnProcessor::new("Repeats its task.", |input| async move {
                Ok(json!(input.task.description))
            }),
        )
        .build()
        .unwrap();

    let (events, state) = run(
        Arc::new(orchestrator),
        "What is the weather in Paris? Write me a note.",
    )
    .await;
    let seen = statuses(&events);
    eprintln!("statuses: {seen:?}");
    assert!(seen.contains(&"planned".to_owned()), "{seen:?}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("finished"),
        "{seen:?}"
    );
    // Every task that started ended, one way or the other.
    for status in seen
        .iter()
        .filter(|status| status.starts_with("task_started "))
    {
        let task = status.trim_start_matches("task_started ");
        assert!(
            seen.contains(&format!("task_completed {task}"))
                || seen.contains(&format!("task_failed {task}")),
            "{task} never ended: {seen:?}"
        );
    }
    let result =
        OrchestratorResult::from_value(&state[DEFAULT_RESULT_KEY]).expect("the result is stored");
    assert!(!result.phases.is_empty());
    assert_eq!(
        result.completed_tasks.len() + result.failed_tasks.len(),
        result.phases.iter().map(Vec::len).sum::<usize>()
    );
    // Task events are stored on their tasks' branches.
    assert!(events.iter().any(|event| {
        event
            .branch
            .as_deref()
            .is_some_and(|branch| branch.starts_with("planner."))
    }));
}

#[tokio::test]
async fn the_run_loop_answers_with_a_tool_on_the_local_model() {
    let server = server(4096).await;
    let weather = ClosureTool::shared("get_weather", |_ctx, args| {
        Ok(json!({"city": args["city"], "sky": "sunny", "celsius": 21}))
    });
    let agent = RunLoopAgent::builder("assistant")
        .model(model(&server))
        .instruction("You answer questions about the weather. Call get_weather for the city.")
        .tool(weather)
        .generate_config(greedy(120))
        .config(LoopConfig::default().with_max_iterations(3))
        .build()
        .unwrap();
    let (events, _) = run(Arc::new(agent), "What is the weather in Paris?").await;
    let result = LoopResult::from_event(events.last().unwrap()).expect("the loop's result");
    eprintln!("result: {result:?}");
    assert!(
        matches!(
            result.stop_reason,
            StopReason::Finish | StopReason::MaxIterations
        ),
        "{result:?}"
    );
    assert!(result.iterations >= 1);
    assert!(result.usage.total_tokens > 0, "the server reports usage");
    if result.stop_reason == StopReason::Finish {
        assert!(result.output.is_some());
    }
}

#[tokio::test]
async fn a_real_context_overflow_is_typed_and_trimmed() {
    let server = server(512).await;
    let model = model(&server);

    // Past the context, llama.cpp's answer becomes a typed context overflow.
    let long = "The weather is a topic of endless conversation. ".repeat(80);
    let request = LlmRequest::new("", vec![Content::user(long.clone())]);
    let error: Error = model
        .generate(request, adk_core::StreamingMode::None)
        .try_collect::<Vec<_>>()
        .await
        .expect_err("the request is too long");
    assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error}");

    // A history that overflows until its older half is dropped: the loop trims and finishes.
    let trimmed = Arc::new(Mutex::new(Vec::new()));
    let seen = trimmed.clone();
    let agent = RunLoopAgent::builder("assistant")
        .model(model)
        .generate_config(greedy(20))
        .config(
            LoopConfig::default()
                .with_max_iterations(1)
                .with_event_hook(move |event| {
                    if let LoopEvent::ContextTrimmed { from, to } = event {
                        seen.lock().push((*from, *to));
                    }
                }),
        )
        .build()
        .unwrap();
    let sessions = Arc::new(InMemorySessionService::new());
    let runner = Runner::builder("e2e", Arc::new(agent) as Arc<dyn Agent>, sessions)
        .auto_create_session(true)
        .build()
        .unwrap();
    let chunk = "The weather is a topic of endless conversation. ".repeat(12);
    // Earlier turns, each well within the context but together past it.
    for turn in 0..4 {
        let message = format!("Note {turn}: {chunk}");
        let _: Vec<Event> = runner
            .run("user", "s1", message)
            .try_collect()
            .await
            .expect("an earlier turn runs");
    }
    let trims_before = trimmed.lock().len();
    assert!(
        trims_before >= 1,
        "the history overflowed on an earlier turn"
    );
    let events: Vec<Event> = runner
        .run("user", "s1", "Say hi.")
        .try_collect()
        .await
        .expect("the last turn runs");
    let result = LoopResult::from_event(events.last().unwrap()).expect("the loop's result");
    eprintln!("trims: {:?}, result: {result:?}", trimmed.lock());
    assert_eq!(result.stop_reason, StopReason::Finish, "{result:?}");
    assert!(
        trimmed.lock().len() > trims_before,
        "the last turn was trimmed too"
    );
}
