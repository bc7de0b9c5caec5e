//! The flow driven by a scripted model: each test is a script and the event log it must produce.
//! Refresh the expected logs with `UPDATE_EXPECT=1 cargo test -p adk-flow`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Agent, Content, Error, ErrorKind, LlmResponse, Part, RunConfig, Session, SessionKey,
    StreamingMode,
};
use adk_flow::{CustomAgent, IncludeContents, LlmAgent};
use adk_test::{AgentRun, ScriptedModel};
use expect_test::{Expect, expect};
use futures::StreamExt as _;
use serde_json::{Value, json};
use support::{agent, long_running_tool, tool, weather_tool};

fn check(run: &AgentRun, expected: Expect) {
    expected.assert_eq(&run.render());
}

async fn run(agent: impl Agent, message: &str) -> AgentRun {
    AgentRun::new(agent, message).await
}

/// Runs `agent` on `message` in a new session with `config`.
async fn run_with(agent: impl Agent, message: &str, config: RunConfig) -> AgentRun {
    AgentRun::on_session(
        Arc::new(agent),
        Session::new(SessionKey::new("app", "u", "s")),
        Content::user(message),
        config,
    )
    .await
}

/// The system instruction and the contents of the model's `n`th request, as text.
fn request_log(model: &ScriptedModel, n: usize) -> String {
    let request = &model.requests()[n];
    let mut log = format!(
        "system: {}\n",
        request.system_instruction.as_deref().unwrap_or_default()
    );
    for content in request.contents.iter() {
        log.push_str(&format!(
            "{}: {}\n",
            content.role.map(|role| role.as_str()).unwrap_or("-"),
            serde_json::to_string(&content.parts).unwrap()
        ));
    }
    let tools: Vec<&str> = request
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    log.push_str(&format!("tools: {tools:?}\n"));
    log
}

#[tokio::test]
async fn a_text_answer_is_one_final_event() {
    let model = ScriptedModel::new("scripted").then_text("Hello!");
    let run = run(agent("greeter", &model).build().unwrap(), "Hi").await;
    check(
        &run,
        expect![[r#"
        greeter: "Hello!"
    "#]],
    );
    expect![[r#"
        system: You are an agent named "greeter".
        user: [{"text":"Hi"}]
        tools: []
    "#]]
    .assert_eq(&request_log(&model, 0));
    assert_eq!(model.requests()[0].model, "scripted");
}

#[tokio::test]
async fn a_tool_call_is_answered_and_the_model_called_again() {
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.");
    let weather = agent("weather", &model)
        .tool(weather_tool())
        .output_key("answer")
        .build()
        .unwrap();
    let run = run(weather, "Weather in Paris?").await;
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Paris"}
        weather: response get_weather {"city":"Paris","weather":"sunny"} [user:last_city="Paris"]
        weather: "It is sunny in Paris." [answer="It is sunny in Paris."]
    "#]],
    );
    // Client-generated call ids are stripped from what the model sees.
    expect![[r#"
        system: You are an agent named "weather".
        user: [{"text":"Weather in Paris?"}]
        model: [{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"}}]
        user: [{"functionResponse":{"name":"get_weather","response":{"city":"Paris","weather":"sunny"}}}]
        tools: ["get_weather"]
    "#]].assert_eq(&request_log(&model, 1));
    assert_eq!(run.session.state["user:last_city"], "Paris");
    assert_eq!(run.session.state["answer"], "It is sunny in Paris.");
}

#[tokio::test]
async fn parallel_calls_are_merged_into_one_response_event() {
    let model = ScriptedModel::new("scripted")
        .then_calls(&[
            ("get_weather", json!({"city": "Paris"})),
            ("get_weather", json!({"city": "Oslo"})),
        ])
        .then_text("Sunny in both.");
    let run = run(
        agent("weather", &model)
            .tool(weather_tool())
            .build()
            .unwrap(),
        "Paris and Oslo?",
    )
    .await;
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Paris"} call get_weather {"city":"Oslo"}
        weather: response get_weather {"city":"Paris","weather":"sunny"} response get_weather {"city":"Oslo","weather":"sunny"} [user:last_city="Oslo"]
        weather: "Sunny in both."
    "#]],
    );
}

#[tokio::test]
async fn tools_run_concurrently() {
    // Each call waits for the other to start: run one after the other, they would never finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let waiting = adk_test::AsyncTool::shared("wait_for_peer", move || {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(json!("done"))
        }
    });
    let model = ScriptedModel::new("scripted")
        .then_calls(&[("wait_for_peer", json!({})), ("wait_for_peer", json!({}))])
        .then_text("Both done.");
    let agent = agent("waiter", &model).tool(waiting).build().unwrap();
    // A generous guard: run one after the other the calls never finish, however fast the machine.
    let run = tokio::time::timeout(std::time::Duration::from_secs(120), run(agent, "go"))
        .await
        .expect("the two calls ran concurrently");
    assert!(run.error.is_none(), "{:?}", run.error);
}

/// Review item 22.11: one response's calls run at most `max_concurrent_tool_calls` at once.
#[tokio::test]
async fn review_22_11_concurrent_tool_calls_are_capped() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (running_in_tool, most_in_tool) = (running.clone(), most.clone());
    let busy = adk_test::AsyncTool::shared("busy", move || {
        let (running, most) = (running_in_tool.clone(), most_in_tool.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // Give every other call that may start a chance to start before this one ends.
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(json!("done"))
        }
    });
    let calls: Vec<(&str, Value)> = (0..6).map(|i| ("busy", json!({"i": i}))).collect();
    let model = ScriptedModel::new("scripted")
        .then_calls(&calls)
        .then_text("All done.");
    let agent = agent("worker", &model).tool(busy).build().unwrap();
    let run = run_with(
        agent,
        "go",
        RunConfig::default().with_max_concurrent_tool_calls(2),
    )
    .await;
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(most.load(Ordering::SeqCst), 2);
    let responses: Vec<_> = run.events[1].function_responses().collect();
    assert_eq!(responses.len(), 6, "every call is answered, in order");
    assert!(
        responses
            .iter()
            .all(|response| response.response["result"] == "done")
    );
}

/// Review item 22.11: a call whose hook fails does not discard the results of its siblings,
/// which already ran; every finished result is stored (the failed call answered with its error),
/// then the run ends with the hook's error.
#[tokio::test]
async fn review_22_11_a_failed_call_keeps_its_siblings_results() {
    let model = ScriptedModel::new("scripted").then_calls(&[
        ("get_weather", json!({"city": "Paris"})),
        ("audited", json!({})),
        ("get_weather", json!({"city": "Rome"})),
    ]);
    let agent = agent("weather", &model)
        .tool(weather_tool())
        .tool(tool("audited", |_, _| Ok(json!("ran"))))
        .after_tool_callback(|_, tool, _, _| {
            if tool.name() == "audited" {
                return Err(Error::new(ErrorKind::Tool, "the audit log is down"));
            }
            Ok(None)
        })
        .build()
        .unwrap();
    let run = run(agent, "go").await;
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Paris"} call audited {} call get_weather {"city":"Rome"}
        weather: response get_weather {"city":"Paris","weather":"sunny"} response audited {"error":"the audit log is down"} response get_weather {"city":"Rome","weather":"sunny"} [user:last_city="Rome"]
        error: tool: the audit log is down
    "#]],
    );
    assert_eq!(run.session.state["user:last_city"], "Rome");
}

/// A call of an unknown tool reaches the on-tool-error hooks, which may answer it.
#[tokio::test]
async fn an_unknown_tool_reaches_the_on_tool_error_callbacks() {
    let model = ScriptedModel::new("scripted")
        .then_call("get_wether", json!({"city": "Paris"}))
        .then_text("Sunny.");
    let agent = agent("weather", &model)
        .tool(weather_tool())
        .on_tool_error_callback(|_, tool, args, error| {
            Ok(Some(json!({
                "recovered": tool.name(),
                "city": args["city"],
                "not_found": error.message().starts_with("tool 'get_wether' not found"),
            })))
        })
        .build()
        .unwrap();
    let run = run(agent, "Paris?").await;
    check(
        &run,
        expect![[r#"
        weather: call get_wether {"city":"Paris"}
        weather: response get_wether {"city":"Paris","not_found":true,"recovered":"get_wether"}
        weather: "Sunny."
    "#]],
    );
}

#[tokio::test]
async fn an_unknown_tool_gets_a_response_listing_the_available_tools() {
    let model = ScriptedModel::new("scripted")
        .then_call("get_wether", json!({"city": "Paris"}))
        .then_text("Sorry.");
    let run = run(
        agent("weather", &model)
            .tool(weather_tool())
            .build()
            .unwrap(),
        "Paris?",
    )
    .await;
    check(
        &run,
        expect![[r#"
        weather: call get_wether {"city":"Paris"}
        weather: response get_wether {"error":"tool 'get_wether' not found. Available tools: get_weather. The name may be misspelled or made up, or the tool is not registered with this agent; call one of the available tools instead."}
        weather: "Sorry."
    "#]],
    );
}

#[tokio::test]
async fn tool_errors_and_panics_become_responses_the_model_reads() {
    let model = ScriptedModel::new("scripted")
        .then_calls(&[("fails", json!({})), ("panics", json!({}))])
        .then_text("Both tools failed.");
    let agent = agent("fragile", &model)
        .tool(tool("fails", |_, _| {
            Err(Error::new(ErrorKind::Tool, "the disk is full"))
        }))
        .tool(tool("panics", |_, _| panic!("index out of bounds")))
        .build()
        .unwrap();
    let run = run(agent, "go").await;
    check(
        &run,
        expect![[r#"
        fragile: call fails {} call panics {}
        fragile: response fails {"error":"the disk is full"} response panics {"error":"tool 'panics' panicked: index out of bounds"}
        fragile: "Both tools failed."
    "#]],
    );
}

#[tokio::test]
async fn tool_callbacks_short_circuit_replace_and_recover() {
    let model = ScriptedModel::new("scripted")
        .then_calls(&[
            ("get_weather", json!({"city": "Paris"})),
            ("get_weather", json!({"city": "Cached"})),
            ("fails", json!({})),
        ])
        .then_text("done");
    let agent = agent("weather", &model)
        .tool(weather_tool())
        .tool(tool("fails", |_, _| {
            Err(Error::new(ErrorKind::Tool, "boom"))
        }))
        .before_tool_callback(|_, tool, args| {
            if args["city"] == "Cached" {
                return Ok(Some(json!({"weather": "from cache"})));
            }
            if tool.name() == "get_weather" {
                args["city"] = json!("PARIS");
            }
            Ok(None)
        })
        .after_tool_callback(|_, _, args, result| {
            Ok((args["city"] == "PARIS")
                .then(|| json!({"weather": result["weather"], "checked": true})))
        })
        .on_tool_error_callback(|_, tool, _, error| {
            Ok(Some(
                json!({"recovered": format!("{} failed: {}", tool.name(), error.message())}),
            ))
        })
        .build()
        .unwrap();
    let run = run(agent, "go").await;
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Paris"} call get_weather {"city":"Cached"} call fails {}
        weather: response get_weather {"checked":true,"weather":"sunny"} response get_weather {"weather":"from cache"} response fails {"recovered":"fails failed: boom"} [user:last_city="PARIS"]
        weather: "done"
    "#]],
    );
}

#[tokio::test]
async fn model_callbacks_short_circuit_replace_and_recover() {
    // No model turn is scripted: the before-model callback answers instead of the model.
    let model = ScriptedModel::new("scripted");
    let short_circuit = agent("cached", &model)
        .before_model_callback(|ctx, _| {
            ctx.set_state("served_from", json!("cache"))?;
            Ok(Some(LlmResponse::new(Content::model("cached answer"))))
        })
        .build()
        .unwrap();
    check(
        &run(short_circuit, "q").await,
        expect![[r#"
        cached: "cached answer" [served_from="cache"]
    "#]],
    );
    assert!(model.requests().is_empty());

    let model = ScriptedModel::new("scripted").then_text("raw");
    let replaced = agent("polite", &model)
        .after_model_callback(|_, response| {
            let text = response
                .content
                .as_ref()
                .and_then(Content::text)
                .unwrap_or_default();
            Ok(Some(LlmResponse::new(Content::model(format!(
                "{text}, please"
            )))))
        })
        .build()
        .unwrap();
    check(
        &run(replaced, "q").await,
        expect![[r#"
        polite: "raw, please"
    "#]],
    );

    let model = ScriptedModel::new("scripted").then_fail("503 overloaded");
    let recovered = agent("resilient", &model)
        .on_model_error_callback(|_, request, error| {
            Ok(Some(LlmResponse::new(Content::model(format!(
                "fallback for {} after: {}",
                request.model,
                error.message()
            )))))
        })
        .build()
        .unwrap();
    check(
        &run(recovered, "q").await,
        expect![[r#"
        resilient: "fallback for scripted after: 503 overloaded"
    "#]],
    );

    let model = ScriptedModel::new("scripted").then_fail("503 overloaded");
    check(
        &run(agent("fragile", &model).build().unwrap(), "q").await,
        expect![[r#"
        error: model: 503 overloaded
    "#]],
    );
}

#[tokio::test]
async fn agent_callbacks_skip_the_run_or_add_an_event() {
    let model = ScriptedModel::new("scripted");
    let gated = agent("gated", &model)
        .before_agent_callback(|ctx| {
            ctx.set_state("gate", json!("closed"))?;
            Ok(Some(Content::model("The service is closed today.")))
        })
        .build()
        .unwrap();
    check(
        &run(gated, "q").await,
        expect![[r#"
        gated: "The service is closed today." [gate="closed"]
    "#]],
    );
    assert!(model.requests().is_empty());

    let model = ScriptedModel::new("scripted").then_text("answer");
    let signed = agent("signed", &model)
        .after_agent_callback(|_| Ok(Some(Content::model("-- signed"))))
        .build()
        .unwrap();
    check(
        &run(signed, "q").await,
        expect![[r#"
        signed: "answer"
        signed: "-- signed"
    "#]],
    );
}

#[tokio::test]
async fn instructions_are_templated_from_state() {
    let model = ScriptedModel::new("scripted").then_text("ok");
    let root = agent("assistant", &model)
        .description("Helps with anything.")
        .global_instruction("Be brief.")
        .instruction(
            "Greet {user:name}. Mood: {mood?}. Keep {\"json\": true} and {not a var}. Count: {count}.",
        )
        .build()
        .unwrap();
    let mut session = Session::new(SessionKey::new("app", "u", "s"));
    session
        .state
        .insert("user:name".into(), json!("Ada {mood}"));
    session.state.insert("count".into(), json!(3));
    let run = AgentRun::on_session(
        Arc::new(root),
        session,
        Content::user("hi"),
        RunConfig::default(),
    )
    .await;
    assert!(run.error.is_none(), "{:?}", run.error);
    // A substituted value is not templated again: `{mood}` inside the name stays as it is.
    expect![[r#"
        system: Be brief.

        Greet Ada {mood}. Mood: . Keep {"json": true} and {not a var}. Count: 3.

        You are an agent named "assistant". Your description: Helps with anything.
        user: [{"text":"hi"}]
        tools: []
    "#]]
    .assert_eq(&request_log(&model, 0));
}

#[tokio::test]
async fn a_missing_state_variable_is_a_clear_error() {
    let model = ScriptedModel::new("scripted").then_text("ok");
    let run = run(
        agent("assistant", &model)
            .instruction("Hello {name}")
            .build()
            .unwrap(),
        "hi",
    )
    .await;
    check(
        &run,
        expect![[r#"
        error: invalid_input: the instruction of agent 'assistant' uses state variable `name`, which is not set; set it, or write `{name?}` to make it optional
    "#]],
    );
}

#[tokio::test]
async fn an_instruction_provider_is_not_templated() {
    let model = ScriptedModel::new("scripted").then_text("ok");
    let agent = agent("assistant", &model)
        .instruction_provider(|ctx| Ok(format!("Literal {{braces}} for {}", ctx.agent_name())))
        .build()
        .unwrap();
    let run = run(agent, "hi").await;
    assert!(run.error.is_none(), "{:?}", run.error);
    expect![[r#"
        system: Literal {braces} for assistant

        You are an agent named "assistant".
        user: [{"text":"hi"}]
        tools: []
    "#]]
    .assert_eq(&request_log(&model, 0));
}

#[tokio::test]
async fn include_contents_none_sends_only_the_current_turn() {
    let model = ScriptedModel::new("scripted").then_text("second answer");
    let mut session = Session::new(SessionKey::new("app", "u", "s"));
    let earlier = AgentRun::on_session(
        Arc::new(
            agent(
                "forgetful",
                &ScriptedModel::new("m").then_text("first answer"),
            )
            .build()
            .unwrap(),
        ),
        session.clone(),
        Content::user("first question"),
        RunConfig::default(),
    )
    .await;
    session.events = earlier.session.events;
    let forgetful = agent("forgetful", &model)
        .include_contents(IncludeContents::None)
        .build()
        .unwrap();
    AgentRun::on_session(
        Arc::new(forgetful),
        session,
        Content::user("second question"),
        RunConfig::default(),
    )
    .await;
    expect![[r#"
        system: You are an agent named "forgetful".
        user: [{"text":"second question"}]
        tools: []
    "#]]
    .assert_eq(&request_log(&model, 0));
}

#[tokio::test]
async fn streaming_yields_partial_events_then_the_aggregate() {
    let model = ScriptedModel::new("scripted").then_text_stream(&["It is ", "sunny."]);
    let run = run_with(
        agent("streamer", &model).build().unwrap(),
        "weather?",
        RunConfig::default().with_streaming_mode(StreamingMode::Sse),
    )
    .await;
    check(
        &run,
        expect![[r#"
        streamer: (partial) "It is "
        streamer: (partial) "sunny."
        streamer: "It is sunny."
    "#]],
    );
    assert_eq!(run.session.events.len(), 2, "partial events are not stored");
}

#[tokio::test]
async fn a_long_running_tool_without_result_pauses_the_agent() {
    let model = ScriptedModel::new("scripted").then_call("start_job", json!({"job": "backup"}));
    let agent = agent("operator", &model)
        .tool(long_running_tool("start_job", |_, _| Ok(Value::Null)))
        .build()
        .unwrap();
    let run = run(agent, "back up").await;
    check(
        &run,
        expect![[r#"
        operator: call start_job {"job":"backup"} [long-running 1]
    "#]],
    );
    assert_eq!(
        model.requests().len(),
        1,
        "the model is not called until the job reports"
    );
}

#[tokio::test]
async fn a_late_response_of_a_long_running_call_is_placed_after_its_call() {
    let model = ScriptedModel::new("scripted")
        .then_call("start_job", json!({"job": "backup"}))
        .then_text("Started the backup.");
    let operator = agent("operator", &model)
        .tool(long_running_tool("start_job", |_, _| {
            Ok(json!({"status": "pending"}))
        }))
        .build()
        .unwrap();
    let first = run(operator, "back up").await;
    let call_id = first.events[0]
        .function_calls()
        .next()
        .unwrap()
        .id
        .clone()
        .unwrap();

    // The user reports the job's end as a response to the original call, then chats on.
    let model = ScriptedModel::new("scripted").then_text("The backup finished.");
    let operator = agent("operator", &model)
        .tool(long_running_tool("start_job", |_, _| Ok(Value::Null)))
        .build()
        .unwrap();
    let report = Content::new(
        adk_core::Role::User,
        [Part::function_response(
            adk_core::FunctionResponse::new("start_job", json!({"status": "done"}))
                .with_id(call_id),
        )],
    );
    AgentRun::on_session(
        Arc::new(operator),
        first.session,
        report,
        RunConfig::default(),
    )
    .await;
    expect![[r#"
        system: You are an agent named "operator".
        user: [{"text":"back up"}]
        model: [{"functionCall":{"args":{"job":"backup"},"name":"start_job"}}]
        user: [{"functionResponse":{"name":"start_job","response":{"status":"done"}}}]
        tools: ["start_job"]
    "#]]
    .assert_eq(&request_log(&model, 0));
}

#[tokio::test]
async fn the_llm_call_limit_ends_the_run_with_a_typed_error() {
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_call("get_weather", json!({"city": "Oslo"}));
    let run = run_with(
        agent("weather", &model)
            .tool(weather_tool())
            .build()
            .unwrap(),
        "q",
        RunConfig::default().with_max_llm_calls(1),
    )
    .await;
    assert_eq!(
        run.error.as_ref().map(Error::kind),
        Some(ErrorKind::LlmCallsLimitExceeded)
    );
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Paris"}
        weather: response get_weather {"city":"Paris","weather":"sunny"} [user:last_city="Paris"]
        error: llm_calls_limit_exceeded: the invocation exceeded its limit of 1 model calls; raise RunConfig::max_llm_calls if this is expected
    "#]],
    );
}

#[tokio::test]
async fn the_model_is_inherited_from_an_ancestor_and_required() {
    let model = ScriptedModel::new("inherited").then_text("child speaks");
    let child = LlmAgent::builder("child").build().unwrap();
    let root = agent("root", &model).sub_agent(child).build().unwrap();
    let root: Arc<dyn Agent> = Arc::new(root);
    let child = root.sub_agents()[0].clone();
    let ctx = adk_core::InvocationContext::builder(child.clone(), Session::default())
        .agent_tree(adk_core::AgentTree::new(root).unwrap())
        .build()
        .unwrap();
    let events: Vec<_> = child.run(ctx).collect().await;
    assert_eq!(
        events[0].as_ref().unwrap().text().as_deref(),
        Some("child speaks")
    );
    assert_eq!(model.requests()[0].model, "inherited");

    let orphan = LlmAgent::builder("orphan").build().unwrap();
    check(
        &run(orphan, "q").await,
        expect![[r#"
        error: config: agent 'orphan' has no model: set one with LlmAgentBuilder::model on it or an ancestor
    "#]],
    );
}

#[tokio::test]
async fn agent_names_and_tool_names_are_validated() {
    let model = ScriptedModel::new("scripted");
    let error = agent("not valid", &model).build().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
    let error = agent("twice", &model)
        .tool(weather_tool())
        .tool(weather_tool())
        .build()
        .unwrap_err();
    assert!(
        error.message().contains("two tools named 'get_weather'"),
        "{error}"
    );
    let custom = CustomAgent::builder("1st", |_| futures::stream::empty().boxed()).build();
    assert!(custom.is_err());
}

/// A `get_weather` that counts its runs in `runs`.
fn counted_weather_tool(runs: &Arc<AtomicUsize>) -> Arc<dyn adk_tool::Tool> {
    let runs = runs.clone();
    tool("get_weather", move |_, args| {
        runs.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"weather": "rainy", "city": args["city"]}))
    })
}

/// The text of the run's last event.
fn final_text(run: &AgentRun) -> String {
    assert!(run.error.is_none(), "{:?}", run.error);
    run.events
        .last()
        .and_then(|event| event.content())
        .and_then(Content::text)
        .unwrap_or_default()
}

/// A model that asks for the weather in Tokyo `times` times, then in Paris, then answers.
fn looping_model(times: usize) -> ScriptedModel {
    (0..times)
        .fold(ScriptedModel::new("scripted"), |model, _| {
            model.then_call("get_weather", json!({"city": "Tokyo"}))
        })
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("Rainy in Tokyo and Paris.")
}

#[tokio::test]
async fn a_repeated_call_gets_its_first_result_back_and_past_the_limit_ends_the_turn() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = looping_model(3);
    let guarded = agent("weather", &model)
        .tool(counted_weather_tool(&runs))
        .max_repeated_tool_calls(2)
        .build()
        .unwrap();
    // The agent's own limit wins over the run's.
    let config = RunConfig::default().with_max_repeated_tool_calls(5);
    check(
        &run_with(guarded, "Weather in Tokyo?", config).await,
        expect![[r#"
        weather: call get_weather {"city":"Tokyo"}
        weather: response get_weather {"city":"Tokyo","weather":"rainy"}
        weather: call get_weather {"city":"Tokyo"}
        weather: response get_weather {"city":"Tokyo","note":"You already called get_weather with these arguments in this turn, and this is the result it gave; the tool was not run again. Answer the user with this result now instead of calling the tool again.","weather":"rainy"}
        weather: call get_weather {"city":"Tokyo"}
        weather: response get_weather {"error":"tool 'get_weather' was not run: it was called with these arguments 3 times in this turn, more than allowed, so the turn ends here."}
        weather: "Stopped: the model called get_weather with the same arguments 3 times in this turn instead of answering. The results it got are above; ask again, or ask differently." error REPEATED_TOOL_CALLS
    "#]],
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool ran once");
    assert_eq!(
        model.remaining(),
        2,
        "the model was not called after the guard"
    );
}

#[tokio::test]
async fn the_guard_is_on_by_default_for_every_agent() {
    // Three identical calls are answered (one run, two results given back); the fourth ends
    // the turn.
    let runs = Arc::new(AtomicUsize::new(0));
    let model = looping_model(5);
    let looped = run(
        agent("weather", &model)
            .tool(counted_weather_tool(&runs))
            .build()
            .unwrap(),
        "Weather in Tokyo?",
    )
    .await;
    assert!(looped.error.is_none(), "{:?}", looped.error);
    let last = looped.events.last().unwrap();
    assert_eq!(
        last.response.error_code.as_deref(),
        Some(adk_flow::REPEATED_TOOL_CALLS)
    );
    assert!(last.is_final_response());
    assert_eq!(
        last.content().and_then(Content::text).as_deref(),
        Some(
            "Stopped: the model called get_weather with the same arguments 4 times in this turn \
             instead of answering. The results it got are above; ask again, or ask differently."
        )
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        model.remaining(),
        3,
        "the fifth call, Paris and the answer were never asked for"
    );
    assert_eq!(
        RunConfig::default().max_repeated_tool_calls,
        Some(adk_core::DEFAULT_MAX_REPEATED_TOOL_CALLS)
    );

    // A model that repeats itself less than that answers as it would without the guard, and
    // other arguments run the tool.
    let runs = Arc::new(AtomicUsize::new(0));
    let model = looping_model(3);
    let answered = run(
        agent("weather", &model)
            .tool(counted_weather_tool(&runs))
            .build()
            .unwrap(),
        "Weather in Tokyo?",
    )
    .await;
    assert_eq!(final_text(&answered), "Rainy in Tokyo and Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 2, "Tokyo once, Paris once");
}

#[tokio::test]
async fn a_limit_of_0_turns_the_guard_off() {
    let runs = Arc::new(AtomicUsize::new(0));
    let unguarded = agent("weather", &looping_model(5))
        .tool(counted_weather_tool(&runs))
        .max_repeated_tool_calls(0)
        .build()
        .unwrap();
    let unguarded = run(unguarded, "Weather in Tokyo?").await;
    assert_eq!(final_text(&unguarded), "Rainy in Tokyo and Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 6, "every call ran");

    // The run config turns it off for agents that set no limit.
    let runs = Arc::new(AtomicUsize::new(0));
    let off = run_with(
        agent("weather", &looping_model(5))
            .tool(counted_weather_tool(&runs))
            .build()
            .unwrap(),
        "Weather in Tokyo?",
        RunConfig::default().with_max_repeated_tool_calls(0),
    )
    .await;
    assert_eq!(final_text(&off), "Rainy in Tokyo and Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn identical_calls_of_one_response_all_run_and_count_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new("scripted")
        .then_calls(&[
            ("get_weather", json!({"city": "Tokyo"})),
            ("get_weather", json!({"city": "Tokyo"})),
        ])
        .then_call("get_weather", json!({"city": "Tokyo"}))
        .then_call("get_weather", json!({"city": "Tokyo"}))
        .then_text("Rainy in Tokyo.");
    let run = run_with(
        agent("weather", &model)
            .tool(counted_weather_tool(&runs))
            .build()
            .unwrap(),
        "Tokyo?",
        RunConfig::default().with_max_repeated_tool_calls(2),
    )
    .await;
    // The run config's limit guards an agent without its own: the second response is the
    // second call, given the result back; the third ends the turn.
    check(
        &run,
        expect![[r#"
        weather: call get_weather {"city":"Tokyo"} call get_weather {"city":"Tokyo"}
        weather: response get_weather {"city":"Tokyo","weather":"rainy"} response get_weather {"city":"Tokyo","weather":"rainy"}
        weather: call get_weather {"city":"Tokyo"}
        weather: response get_weather {"city":"Tokyo","note":"You already called get_weather with these arguments in this turn, and this is the result it gave; the tool was not run again. Answer the user with this result now instead of calling the tool again.","weather":"rainy"}
        weather: call get_weather {"city":"Tokyo"}
        weather: response get_weather {"error":"tool 'get_weather' was not run: it was called with these arguments 3 times in this turn, more than allowed, so the turn ends here."}
        weather: "Stopped: the model called get_weather with the same arguments 3 times in this turn instead of answering. The results it got are above; ask again, or ask differently." error REPEATED_TOOL_CALLS
    "#]],
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "both calls of the first response ran"
    );
}

#[tokio::test]
async fn a_repeat_after_another_tool_ran_runs_the_tool_again() {
    // Another call may change what the tool answers (a record deleted, say): the repeat is
    // counted but not answered from the earlier result.
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Tokyo"}))
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_call("get_weather", json!({"city": "Tokyo"}))
        .then_text("Rainy in Tokyo and Paris.");
    let run = run(
        agent("weather", &model)
            .tool(counted_weather_tool(&runs))
            .build()
            .unwrap(),
        "Tokyo and Paris?",
    )
    .await;
    assert_eq!(final_text(&run), "Rainy in Tokyo and Paris.");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        3,
        "Tokyo ran again after Paris"
    );
    assert!(
        !run.render().contains("You already called"),
        "{}",
        run.render()
    );
}
