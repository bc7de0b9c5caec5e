//! The run loop on scripted models: each of the six stop reasons, a budget overrun, tool calls
//! under each policy with their timeout, the context transform and hook, streaming, and a context
//! overflow answered by trimming the history, on the scripted model and on the OpenAI adapter
//! against the loopback server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use adk_core::{
    Content, ErrorKind, Event, FunctionDeclaration, InvocationContext, LlmResponse, Result,
    RunConfig, Session, SessionKey, StreamingMode, USER_AUTHOR, UsageMetadata,
};
use adk_orchestrator::{
    DefaultStrategy, LoopConfig, LoopEvent, LoopResult, RunLoopAgent, StopReason, ToolUsePolicy,
};
use adk_test::{AgentRun, ClosureTool, MockResponse, MockServer, ScriptedModel};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use futures::StreamExt as _;
use parking_lot::Mutex;
use serde_json::{Value, json};

fn agent(model: &ScriptedModel, config: LoopConfig) -> adk_orchestrator::RunLoopAgentBuilder {
    RunLoopAgent::builder("assistant")
        .model(model.clone())
        .instruction("Help.")
        .config(config)
}

fn result_of(run: &AgentRun) -> LoopResult {
    assert!(run.error.is_none(), "{}", run.render());
    LoopResult::from_event(run.events.last().unwrap())
        .unwrap_or_else(|| panic!("no result on the last event: {}", run.render()))
}

fn with_usage(mut response: LlmResponse, total: u32) -> LlmResponse {
    response.usage_metadata = Some(UsageMetadata::new(total - 10, 10));
    response
}

fn text(text: &str) -> LlmResponse {
    LlmResponse::new(Content::model(text))
}

fn call(name: &str, args: Value) -> LlmResponse {
    LlmResponse::new(Content::new(
        adk_core::Role::Model,
        [adk_core::Part::function_call(adk_core::FunctionCall::new(
            name, args,
        ))],
    ))
}

fn weather() -> Arc<dyn Tool> {
    ClosureTool::shared("weather", |_ctx, args| {
        Ok(json!({"city": args["city"], "sky": "sunny"}))
    })
}

#[tokio::test]
async fn finish_after_a_tool_call_with_usage_output_and_hook() {
    let model = ScriptedModel::new("m")
        .then(with_usage(call("weather", json!({"city": "Paris"})), 30))
        .then(with_usage(text("It is sunny in Paris."), 40));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = seen.clone();
    let config = LoopConfig::default().with_event_hook(move |event| {
        let name = match event {
            LoopEvent::IterationStarted { iteration } => format!("start {iteration}"),
            LoopEvent::ModelResponded { tool_calls, .. } => format!("model {tool_calls}"),
            LoopEvent::ToolsFinished { tools, .. } => format!("tools {}", tools.join(",")),
            LoopEvent::Stopped(result) => format!("stopped {}", result.stop_reason),
            other => format!("{other:?}"),
        };
        hook_seen.lock().push(name);
    });
    let agent = agent(&model, config)
        .tool(weather())
        .output_key("answer")
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Weather in Paris?").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Finish);
    assert_eq!(result.iterations, 2);
    assert_eq!(result.usage.total_tokens, 70);
    assert_eq!(result.output.as_deref(), Some("It is sunny in Paris."));
    assert_eq!(run.session.state["answer"], json!("It is sunny in Paris."));
    assert_eq!(
        *seen.lock(),
        [
            "start 1",
            "model 1",
            "tools weather",
            "start 2",
            "model 0",
            "stopped finish"
        ]
    );
    let log = run.render();
    assert!(
        log.contains(r#"assistant: call weather {"city":"Paris"}"#),
        "{log}"
    );
    assert!(
        log.contains(r#"assistant: response weather {"city":"Paris","sky":"sunny"}"#),
        "{log}"
    );
    assert!(
        log.ends_with("assistant: \"It is sunny in Paris.\" [answer=\"It is sunny in Paris.\"]\n"),
        "{log}"
    );

    // The second request holds the question, the call and its response; tools were declared.
    let requests = model.requests();
    assert_eq!(requests[1].contents.len(), 3);
    assert_eq!(requests[0].tools[0].name, "weather");
    assert_eq!(requests[0].system_instruction.as_deref(), Some("Help."));
}

#[tokio::test]
async fn max_iterations_stops_a_model_that_keeps_calling_tools() {
    let model = ScriptedModel::new("m")
        .then(call("weather", json!({"city": "A"})))
        .then(call("weather", json!({"city": "B"})))
        .then(call("weather", json!({"city": "C"})));
    let agent = agent(&model, LoopConfig::default().with_max_iterations(2))
        .tool(weather())
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Loop.").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::MaxIterations);
    assert_eq!(result.iterations, 2);
    assert_eq!(model.remaining(), 1);
    let last = run.events.last().unwrap();
    assert_eq!(last.response.error_code.as_deref(), Some("MAX_ITERATIONS"));
    assert_eq!(
        last.text().as_deref(),
        Some("Stopped after 2 iterations without a final answer.")
    );
    // Every call got its response before the loop stopped.
    let responses = run
        .events
        .iter()
        .filter(|event| event.function_responses().next().is_some());
    assert_eq!(responses.count(), 2);
}

#[tokio::test]
async fn a_model_error_stops_with_error() {
    let model = ScriptedModel::new("m").then_fail("the provider is down");
    let agent = agent(&model, LoopConfig::default()).build().unwrap();
    let run = AgentRun::new(agent, "Hi.").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(result.error.as_deref(), Some("model: the provider is down"));
    assert_eq!(result.output, None);
    assert_eq!(
        run.events.last().unwrap().response.error_code.as_deref(),
        Some("ERROR")
    );
}

#[tokio::test]
async fn the_model_call_limit_is_an_error_stop() {
    let model = ScriptedModel::new("m")
        .then(call("weather", json!({"city": "A"})))
        .then(text("never"));
    let agent = agent(&model, LoopConfig::default())
        .tool(weather())
        .build()
        .unwrap();
    let session = Session::new(SessionKey::new("app", "u", "s"));
    let config = RunConfig::default().with_max_llm_calls(1);
    let run = AgentRun::on_session(Arc::new(agent), session, Content::user("Hi."), config).await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Error);
    assert!(result.error.unwrap().contains("limit of 1 model calls"));
}

#[tokio::test]
async fn cancelling_the_invocation_aborts_the_loop() {
    let model = ScriptedModel::new("m")
        .then(call("stop_everything", json!({})))
        .then(text("never"));
    let canceller = ClosureTool::shared("stop_everything", |ctx, _args| {
        ctx.cancellation().cancel();
        Ok(json!("cancelled"))
    });
    let agent = agent(&model, LoopConfig::default())
        .tool(canceller)
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Go.").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Aborted);
    assert_eq!(result.iterations, 1);
    assert_eq!(model.remaining(), 1, "no model call after the cancellation");
    assert_eq!(
        run.events.last().unwrap().response.error_code.as_deref(),
        Some("ABORTED")
    );
}

#[tokio::test]
async fn a_spent_budget_stops_before_the_next_call() {
    let model = ScriptedModel::new("m")
        .then(with_usage(call("weather", json!({"city": "A"})), 60))
        .then(with_usage(call("weather", json!({"city": "B"})), 60))
        .then(text("never"));
    let agent = agent(&model, LoopConfig::default().with_token_budget(100))
        .tool(weather())
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Go.").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::BudgetExhausted);
    assert_eq!(result.usage.total_tokens, 120);
    assert_eq!(result.iterations, 2);
    assert_eq!(model.remaining(), 1);
    // The call that went over the budget still got its response.
    let responses = run
        .events
        .iter()
        .filter(|event| event.function_responses().next().is_some());
    assert_eq!(responses.count(), 2);
    let last = run.events.last().unwrap();
    assert_eq!(
        last.response.error_code.as_deref(),
        Some("BUDGET_EXHAUSTED")
    );
    assert!(
        last.text().unwrap().contains("120 used"),
        "{:?}",
        last.text()
    );
}

#[tokio::test]
async fn a_final_answer_over_the_budget_is_finish_over_budget() {
    let model = ScriptedModel::new("m").then(with_usage(text("A long answer."), 150));
    let agent = agent(&model, LoopConfig::default().with_token_budget(100))
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Go.").await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::FinishOverBudget);
    assert_eq!(result.output.as_deref(), Some("A long answer."));
    // The answer is the last event itself, with no error.
    let last = run.events.last().unwrap();
    assert_eq!(last.text().as_deref(), Some("A long answer."));
    assert_eq!(last.response.error_code, None);
}

/// A tool that waits until `needed` calls run at once, recording the most seen; with
/// `needed == 0` it never answers.
struct Gathering {
    needed: usize,
    running: AtomicUsize,
    most: AtomicUsize,
}

#[async_trait]
impl Tool for Gathering {
    fn name(&self) -> &str {
        "gather"
    }

    fn description(&self) -> &str {
        "Waits for company."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new("gather", "Waits for company."))
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        if self.needed == 0 {
            futures::future::pending::<()>().await;
        }
        while self.most.load(Ordering::SeqCst) < self.needed {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(json!("gathered"))
    }
}

fn gathering(needed: usize) -> Arc<Gathering> {
    Arc::new(Gathering {
        needed,
        running: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    })
}

fn three_calls() -> ScriptedModel {
    ScriptedModel::new("m")
        .then_calls(&[
            ("gather", json!({})),
            ("gather", json!({})),
            ("gather", json!({})),
        ])
        .then_text("done")
}

#[tokio::test]
async fn tool_calls_run_in_parallel_up_to_the_limit_or_one_by_one() {
    for (strategy, limit, expected) in [
        (DefaultStrategy::new(), 2, 2),
        (DefaultStrategy::new(), 3, 3),
        (
            DefaultStrategy::new().with_tool_use_policy(ToolUsePolicy::Sequential),
            3,
            1,
        ),
    ] {
        let tool = gathering(expected);
        let model = three_calls();
        let agent = agent(
            &model,
            LoopConfig::default().with_max_tool_concurrency(limit),
        )
        .strategy(strategy)
        .tool(tool.clone())
        .build()
        .unwrap();
        let run = AgentRun::new(agent, "Gather.").await;
        assert_eq!(result_of(&run).stop_reason, StopReason::Finish);
        assert_eq!(tool.most.load(Ordering::SeqCst), expected, "limit {limit}");
    }
}

#[tokio::test]
async fn with_tools_disabled_none_is_offered_and_a_call_gets_an_error() {
    let tool = gathering(1);
    let model = ScriptedModel::new("m")
        .then_call("gather", json!({}))
        .then_text("ok");
    let agent = agent(&model, LoopConfig::default())
        .strategy(DefaultStrategy::new().with_tool_use_policy(ToolUsePolicy::Disabled))
        .tool(tool.clone())
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Gather.").await;
    assert_eq!(result_of(&run).stop_reason, StopReason::Finish);
    assert!(model.requests()[0].tools.is_empty());
    assert_eq!(tool.most.load(Ordering::SeqCst), 0);
    assert!(
        run.render().contains(
            r#"response gather {"error":"tool 'gather' not found. Available tools: none."#
        ),
        "{}",
        run.render()
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_over_its_timeout_is_answered_with_an_error() {
    let model = ScriptedModel::new("m")
        .then_call("gather", json!({}))
        .then_text("gave up");
    let agent = agent(
        &model,
        LoopConfig::default().with_tool_timeout(Duration::from_secs(5)),
    )
    .tool(gathering(0))
    .build()
    .unwrap();
    let run = AgentRun::new(agent, "Wait.").await;
    assert_eq!(result_of(&run).stop_reason, StopReason::Finish);
    assert!(
        run.render().contains(
            r#"response gather {"error":"tool 'gather' did not answer within 5s and was stopped"#
        ),
        "{}",
        run.render()
    );
}

/// A session holding `turns` earlier exchanges of the user and the agent.
fn session_with_turns(turns: usize) -> Session {
    let mut session = Session::new(SessionKey::new("app", "u", "s"));
    for turn in 0..turns {
        for (author, content) in [
            (USER_AUTHOR, Content::user(format!("question {turn}"))),
            ("assistant", Content::model(format!("answer {turn}"))),
        ] {
            let event = Event::new("e-0".into(), author).with_content(content);
            let revision = session.revision + 1;
            session.apply_event(event, revision);
        }
    }
    session
}

#[tokio::test]
async fn a_context_overflow_trims_the_history_and_retries_once() {
    let model = ScriptedModel::new("m")
        .then_fail_with(ErrorKind::ContextOverflow, "too many tokens")
        .then_text("short answer");
    let trimmed = Arc::new(Mutex::new(None));
    let seen = trimmed.clone();
    let config = LoopConfig::default().with_event_hook(move |event| {
        if let LoopEvent::ContextTrimmed { from, to } = event {
            *seen.lock() = Some((*from, *to));
        }
    });
    let agent = agent(&model, config).build().unwrap();
    let run = AgentRun::on_session(
        Arc::new(agent),
        session_with_turns(4),
        Content::user("last question"),
        RunConfig::default(),
    )
    .await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Finish);
    assert_eq!(result.iterations, 1, "the retry is not an iteration");
    let requests = model.requests();
    assert_eq!(requests[0].contents.len(), 9);
    // The first message and the newer half are kept.
    let kept: Vec<String> = requests[1]
        .contents
        .iter()
        .filter_map(Content::text)
        .collect();
    assert_eq!(
        kept,
        [
            "question 0",
            "question 2",
            "answer 2",
            "question 3",
            "answer 3",
            "last question"
        ]
    );
    assert_eq!(*trimmed.lock(), Some((9, 6)));
}

#[tokio::test]
async fn a_second_overflow_in_one_iteration_is_an_error_stop() {
    let model = ScriptedModel::new("m")
        .then_fail_with(ErrorKind::ContextOverflow, "too many tokens")
        .then_fail_with(ErrorKind::ContextOverflow, "still too many tokens");
    let agent = agent(&model, LoopConfig::default()).build().unwrap();
    let run = AgentRun::on_session(
        Arc::new(agent),
        session_with_turns(2),
        Content::user("q"),
        RunConfig::default(),
    )
    .await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Error);
    assert_eq!(
        result.error.as_deref(),
        Some("context_overflow: still too many tokens")
    );
}

#[tokio::test]
async fn llama_cpp_overflow_through_the_openai_adapter_is_trimmed_and_retried() {
    let overflow = MockResponse::json(
        400,
        &json!({"error": {"code": 400, "message": "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}),
    );
    let completion = MockResponse::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "fits now"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 900, "completion_tokens": 3, "total_tokens": 903}}),
    );
    let server = MockServer::start([overflow, completion]).await;
    let model = adk_model::OpenAi::builder("local")
        .api_key("unused")
        .base_url(format!("{}/v1", server.base_url()))
        .build()
        .unwrap();
    let agent = RunLoopAgent::builder("assistant")
        .model(model)
        .build()
        .unwrap();
    let run = AgentRun::on_session(
        Arc::new(agent),
        session_with_turns(3),
        Content::user("q"),
        RunConfig::default(),
    )
    .await;
    let result = result_of(&run);
    assert_eq!(result.stop_reason, StopReason::Finish);
    assert_eq!(result.output.as_deref(), Some("fits now"));
    assert_eq!(result.usage.total_tokens, 903);
    let requests = server.requests();
    let sent = |index: usize| requests[index].json()["messages"].as_array().unwrap().len();
    assert!(sent(1) < sent(0), "{} then {}", sent(0), sent(1));
}

#[tokio::test]
async fn the_context_transform_shapes_what_the_model_sees() {
    let model = ScriptedModel::new("m").then_text("ok");
    let config =
        LoopConfig::default().with_transform_context(|history: Arc<Vec<Content>>| async move {
            Ok(Arc::new(
                history.last().cloned().into_iter().collect::<Vec<_>>(),
            ))
        });
    let agent = agent(&model, config).build().unwrap();
    let run = AgentRun::on_session(
        Arc::new(agent),
        session_with_turns(3),
        Content::user("only this"),
        RunConfig::default(),
    )
    .await;
    assert_eq!(result_of(&run).stop_reason, StopReason::Finish);
    let contents: Vec<String> = model.requests()[0]
        .contents
        .iter()
        .filter_map(Content::text)
        .collect();
    assert_eq!(contents, ["only this"]);
}

#[tokio::test]
async fn streaming_yields_partial_events_before_the_answer() {
    let model = ScriptedModel::new("m").then_text_stream(&["Hel", "lo"]);
    let agent = agent(&model, LoopConfig::default()).build().unwrap();
    let config = RunConfig::default().with_streaming_mode(StreamingMode::Sse);
    let run = AgentRun::on_session(
        Arc::new(agent),
        Session::new(SessionKey::new("app", "u", "s")),
        Content::user("Hi"),
        config,
    )
    .await;
    assert_eq!(
        run.render(),
        "assistant: (partial) \"Hel\"\nassistant: (partial) \"lo\"\nassistant: \"Hello\"\n"
    );
    assert_eq!(result_of(&run).stop_reason, StopReason::Finish);
}

/// A tool that says when it starts, never answers, and records when its call is dropped.
#[derive(Default)]
struct Stuck {
    started: tokio::sync::Notify,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

/// Sets its flag when dropped.
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Stuck {
    fn name(&self) -> &str {
        "stuck"
    }

    fn description(&self) -> &str {
        "Never answers."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new("stuck", "Never answers."))
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        let _flag = DropFlag(self.dropped.clone());
        self.started.notify_one();
        futures::future::pending::<()>().await;
        Ok(Value::Null)
    }
}

#[tokio::test]
async fn dropping_the_stream_stops_a_running_tool() {
    let tool = Arc::new(Stuck::default());
    let model = ScriptedModel::new("m").then_call("stuck", json!({}));
    let agent: Arc<dyn adk_core::Agent> = Arc::new(
        agent(&model, LoopConfig::default())
            .tool(tool.clone())
            .build()
            .unwrap(),
    );
    let ctx =
        InvocationContext::builder(agent.clone(), Session::new(SessionKey::new("a", "u", "s")))
            .user_content(Content::user("Go."))
            .build()
            .unwrap();
    let mut events = agent.run(ctx);
    let call = events.next().await.unwrap().unwrap();
    assert_eq!(call.function_calls().count(), 1);
    // Polling on starts the tool; once it has started, the stream is dropped.
    tokio::select! {
        next = events.next() => panic!("the tool never answers, yet the loop yielded {next:?}"),
        () = tool.started.notified() => {}
    }
    assert!(!tool.dropped.load(Ordering::SeqCst));
    drop(events);
    assert!(
        tool.dropped.load(Ordering::SeqCst),
        "the tool's call was dropped with the stream"
    );
}

#[test]
fn building_needs_a_model_and_unique_tool_names() {
    assert!(RunLoopAgent::builder("a").build().is_err());
    let error = RunLoopAgent::builder("a")
        .model(ScriptedModel::new("m"))
        .tool(weather())
        .tool(weather())
        .build()
        .err()
        .unwrap();
    assert!(
        error.message().contains("two tools named 'weather'"),
        "{error}"
    );
}
