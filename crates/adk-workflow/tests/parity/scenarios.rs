//! The Rust form of each scenario of `tests/parity/python`, run on adk-rs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use adk_flow::{AgentMode, LlmAgent};
use adk_test::ClosureTool;
use adk_test::transcript::Transcript;
use adk_workflow::{
    Node, NodeContext, NodeError, NodeOutput, RequestInput, RetryConfig, Routes, START, Workflow,
};
use serde_json::{Value, json};

use crate::harness::{Log, answer, call, run, text, user};

/// `router.py`.
pub(crate) async fn router() -> Transcript {
    let classify = Node::function("classify", |ctx: NodeContext, text: String| async move {
        ctx.set_state("seen", &text)?;
        let route = if text.len() > 3 { "long" } else { "short" };
        Ok::<_, NodeError>(NodeOutput::value(json!({"text": text})).route(route))
    });
    let handle_long = Node::function("handle_long", |input: Value| async move {
        Ok::<_, NodeError>(format!(
            "LONG:{}",
            input["text"].as_str().unwrap_or_default()
        ))
    });
    let handle_short = Node::function("handle_short", |input: Value| async move {
        Ok::<_, NodeError>(format!(
            "SHORT:{}",
            input["text"].as_str().unwrap_or_default()
        ))
    });
    let workflow = Workflow::builder("router_wf")
        .chain((
            START,
            &classify,
            Routes::new()
                .on("long", &handle_long)
                .otherwise(&handle_short),
        ))
        .build()
        .unwrap();
    run(
        Arc::new(workflow),
        &Log::default(),
        vec![user("hello"), user("hi")],
        false,
    )
    .await
}

/// `fan_out.py`.
pub(crate) async fn fan_out() -> Transcript {
    let log = Log::default();
    let fetch_a = Node::function("fetch_a", |input: String| async move {
        Ok::<_, NodeError>(json!({"a": format!("{input}-A")}))
    });
    let fetch_b = Node::function("fetch_b", |input: String| async move {
        Ok::<_, NodeError>(json!({"b": format!("{input}-B")}))
    });
    let summarizer = LlmAgent::builder("summarizer")
        .model(log.model("summarizer-model", vec![text("summary of A and B")]))
        .instruction("Summarize.")
        .build()
        .unwrap();
    let workflow = Workflow::builder("fan_wf")
        .chain((START, [&fetch_a, &fetch_b], Node::join("join"), summarizer))
        .build()
        .unwrap();
    run(Arc::new(workflow), &log, vec![user("x")], false).await
}

/// `human_input.py`.
pub(crate) async fn human_input(resumable: bool) -> Transcript {
    let draft = Node::function("draft", |ctx: NodeContext, _: Value| async move {
        Ok::<_, NodeError>(format!("draft {}", ctx.run_id()))
    });
    let ask = Node::function("ask", |ctx: NodeContext, draft: String| async move {
        Ok::<_, NodeError>(
            RequestInput::new(format!("approve-{}", ctx.run_id()))
                .message("Approve the draft?")
                .payload(json!({"draft": draft})),
        )
    });
    let review = Node::function("review", |answer: Value| async move {
        let approved = answer["approved"] == json!(true);
        let route = if approved { "approved" } else { "rejected" };
        Ok::<_, NodeError>(NodeOutput::value(answer).route(route))
    });
    let publish = Node::function("publish", |_: Value| async move {
        Ok::<_, NodeError>("published")
    });
    let workflow = Workflow::builder("approval_wf")
        .chain((
            START,
            &draft,
            &ask,
            &review,
            Routes::new()
                .on("approved", &publish)
                .on("rejected", &draft),
        ))
        .build()
        .unwrap();
    let turns = vec![
        user("write it"),
        answer("approve-1", "adk_request_input", json!({"approved": false})),
        answer("approve-2", "adk_request_input", json!({"approved": true})),
    ];
    run(Arc::new(workflow), &Log::default(), turns, resumable).await
}

/// `nested.py`.
pub(crate) async fn nested() -> Transcript {
    let split = Node::function("split", |input: String| async move {
        Ok::<_, NodeError>(input.split(',').map(str::to_owned).collect::<Vec<_>>())
    });
    let work = Node::function("work", |item: String| async move {
        Ok::<_, NodeError>(item.to_uppercase())
    })
    .parallel();
    let suffix = Node::function("suffix", |items: Vec<String>| async move {
        Ok::<_, NodeError>(format!("{}!", items.join("+")))
    });
    let enrich = Node::function("enrich", move |ctx: NodeContext, items: Vec<String>| {
        let suffix = suffix.clone();
        async move {
            let joined = ctx.run_node(&suffix, json!(items)).await?;
            Ok::<_, NodeError>(json!({"items": items, "joined": joined}))
        }
    })
    .rerun_on_resume(true);
    let inner = Workflow::builder("inner_wf")
        .chain((START, &split, &work))
        .build()
        .unwrap();
    let outer = Workflow::builder("outer_wf")
        .chain((START, inner, &enrich))
        .build()
        .unwrap();
    run(Arc::new(outer), &Log::default(), vec![user("a,b,c")], false).await
}

/// `retries.py`.
pub(crate) async fn retries() -> Transcript {
    let attempts = Arc::new(AtomicU32::new(0));
    let flaky = Node::function("flaky", move |_: String| {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if attempt < 3 {
                return Err(NodeError::new(
                    "ValueError",
                    format!("attempt {attempt} failed"),
                ));
            }
            Ok(format!("ok after {attempt}"))
        }
    })
    .retry(
        RetryConfig::default()
            .max_attempts(3)
            .initial_delay(Duration::from_millis(10))
            .jitter(0.0),
    );
    let broken = Node::function("broken", |_: String| async move {
        Err::<String, _>(NodeError::new("RuntimeError", "always broken"))
    })
    .retry(
        RetryConfig::default()
            .max_attempts(2)
            .initial_delay(Duration::from_millis(10))
            .jitter(0.0),
    );
    let after = Node::function("after", |input: String| async move {
        Ok::<_, NodeError>(format!("after {input}"))
    });
    let retry_wf = Workflow::builder("retry_wf")
        .chain((START, &flaky, &after))
        .build()
        .unwrap();
    let failing = Workflow::builder("failing_wf")
        .chain((START, &broken, &after))
        .build()
        .unwrap();
    let mut transcript = run(Arc::new(retry_wf), &Log::default(), vec![user("go")], false).await;
    let second = run(Arc::new(failing), &Log::default(), vec![user("go")], false).await;
    for (turn, entries) in second.turns.into_iter().enumerate() {
        for entry in entries {
            transcript.push(turn, entry);
        }
    }
    transcript
}

/// `task_api.py`.
pub(crate) async fn task_api() -> Transcript {
    let log = Log::default();
    let researcher = LlmAgent::builder("researcher")
        .mode(AgentMode::Task)
        .description("Researches a topic.")
        .model(log.model(
            "researcher-model",
            vec![
                text("Which region?"),
                call("finish_task", json!({"result": "X in Europe"}), "f1"),
            ],
        ))
        .instruction("Research.")
        .build()
        .unwrap();
    let formatter = LlmAgent::builder("formatter")
        .mode(AgentMode::SingleTurn)
        .description("Formats a result.")
        .model(log.model("formatter-model", vec![text("**X in Europe**")]))
        .instruction("Format.")
        .build()
        .unwrap();
    let coordinator = LlmAgent::builder("coordinator")
        .model(log.model(
            "coordinator-model",
            vec![
                call("researcher", json!({"request": "find X"}), "t1"),
                call("formatter", json!({"request": "X in Europe"}), "s1"),
                text("Here it is: **X in Europe**"),
            ],
        ))
        .instruction("Coordinate.")
        .sub_agent(Arc::new(researcher))
        .sub_agent(Arc::new(formatter))
        .build()
        .unwrap();
    run(
        Arc::new(coordinator),
        &log,
        vec![user("research X"), user("Europe")],
        false,
    )
    .await
}

/// `chat_transfer.py`.
pub(crate) async fn chat_transfer() -> Transcript {
    let log = Log::default();
    let helper = LlmAgent::builder("helper")
        .description("Helps with details.")
        .model(log.model(
            "helper-model",
            vec![text("I can help."), text("Still here.")],
        ))
        .instruction("Help.")
        .build()
        .unwrap();
    let coordinator = LlmAgent::builder("coordinator")
        .model(log.model(
            "coordinator-model",
            vec![call(
                "transfer_to_agent",
                json!({"agent_name": "helper"}),
                "x1",
            )],
        ))
        .instruction("Route.")
        .sub_agent(Arc::new(helper))
        .build()
        .unwrap();
    run(
        Arc::new(coordinator),
        &log,
        vec![user("I need help"), user("thanks")],
        false,
    )
    .await
}

/// `root_tool.py`.
pub(crate) async fn root_tool() -> Transcript {
    let log = Log::default();
    let get_weather = ClosureTool::shared("get_weather", |_ctx, args: Value| {
        Ok(json!({"city": args["city"], "weather": "sunny"}))
    });
    let assistant = LlmAgent::builder("assistant")
        .model(log.model(
            "assistant-model",
            vec![
                call("get_weather", json!({"city": "Paris"}), "w1"),
                text("It is sunny in Paris."),
            ],
        ))
        .instruction("Answer.")
        .tool(get_weather)
        .build()
        .unwrap();
    run(
        Arc::new(assistant),
        &log,
        vec![user("weather in Paris?")],
        false,
    )
    .await
}

/// `yaml_workflow.py`: the same `yamlwf/root_agent.yaml`, its functions registered from Rust.
pub(crate) async fn yaml_workflow() -> Transcript {
    let upper = Node::function("upper", |text: String| async move {
        Ok::<_, NodeError>(text.to_uppercase())
    });
    let route = Node::function("route", |text: String| async move {
        let route = if text.starts_with('A') { "a" } else { "b" };
        Ok::<_, NodeError>(NodeOutput::value(text).route(route))
    });
    let on_a = Node::function("on_a", |text: String| async move {
        Ok::<_, NodeError>(format!("took a: {text}"))
    });
    let on_b = Node::function("on_b", |text: String| async move {
        Ok::<_, NodeError>(format!("took b: {text}"))
    });
    let file = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/parity/python/yamlwf/root_agent.yaml");
    let root = adk_config::AgentLoader::new()
        .workflow_node(upper)
        .workflow_node(route)
        .workflow_node(on_a)
        .workflow_node(on_b)
        .load(file)
        .await
        .unwrap();
    run(
        root,
        &Log::default(),
        vec![user("apple"), user("banana")],
        false,
    )
    .await
}
