//! End to end against the real local server: the OpenAI adapter with prompted tool calling, alone
//! and under the real runner with in-memory and SQLite sessions; and the Anthropic and Responses
//! adapters on the same server's `/v1/messages` and `/v1/responses`.
//!
//! SmolLM2-135M is tiny, so these tests assert structure (events, tool-call names, arguments that
//! are JSON objects, what the session stored), never wording, and cap model calls with
//! `RunConfig::max_llm_calls`. Generation is greedy (temperature 0) on a fixed server seed, so a
//! run repeats. Like `server_lifecycle.rs`, the first run on a machine builds `llama-server`
//! (about 15 minutes on 2 cores) into the user cache directory, which later runs reuse.

use std::collections::BTreeSet;
use std::sync::Arc;

use adk_core::{
    Agent, Content, Event, FunctionCallingConfig, FunctionCallingMode, FunctionDeclaration,
    FunctionResponse, GenerateContentConfig, GetSessionRequest, Llm, LlmRequest, LlmResponse, Part,
    Role, RunConfig, SessionKey, SessionService, StreamingMode, ToolConfig,
};
use adk_flow::LlmAgent;
use adk_local_model::{LocalModel, LocalModelConfig, LocalServer, ProgressEvent};
use adk_model::{Anthropic, OpenAi, OpenAiResponses};
use adk_runner::{RunRequest, Runner};
use adk_session::{InMemorySessionService, SqliteSessionService};
use adk_tool::{FunctionTool, ToolContext};
use futures::{StreamExt as _, TryStreamExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The most model calls one run may make: a 135M model may keep calling tools.
const MAX_LLM_CALLS: u32 = 4;

/// Starts the local server (building it first if it is missing).
async fn server() -> LocalServer {
    let config = LocalModelConfig::from_env().expect("a cache directory");
    let progress = |event: &ProgressEvent| eprintln!("local model: {event:?}");
    let model = LocalModel::ensure(config, &progress)
        .await
        .expect("the local model is ready");
    model.start().await.expect("the server starts")
}

/// The OpenAI adapter on `server`, prompted tool calling on.
fn model(server: &LocalServer) -> Arc<OpenAi> {
    let model = OpenAi::builder(server.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .prompted_tools(true)
        .build()
        .expect("the adapter builds");
    Arc::new(model)
}

/// Greedy decoding with a cap on the answer's length.
fn greedy() -> GenerateContentConfig {
    let mut config = GenerateContentConfig::default();
    config.temperature = Some(0.0);
    config.max_output_tokens = Some(200);
    config
}

/// The arguments of `get_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherRequest {
    /// The city, for example "Paris".
    city: String,
}

/// Reports a fixed weather for any city.
async fn get_weather(_ctx: ToolContext, request: WeatherRequest) -> Result<Value, String> {
    Ok(json!({"city": request.city, "sky": "sunny", "celsius": 21}))
}

/// The declaration `get_weather` has in the runner tests, for the adapter tests.
fn weather_declaration() -> FunctionDeclaration {
    FunctionDeclaration::new("get_weather", "Returns the sky and the temperature in a city.")
        .with_parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city, for example \"Paris\"."}},
            "required": ["city"],
        }))
}

/// A request that asks about the weather with `get_weather` on offer, calling in `mode`.
fn weather_request(mode: FunctionCallingMode) -> LlmRequest {
    let mut request = LlmRequest::new("", vec![Content::user("What is the weather in Paris?")]);
    request.append_instructions(["You answer questions about the weather."]);
    request.append_tools([weather_declaration()]);
    let mut tool_config = ToolConfig::default();
    tool_config.function_calling_config = Some(FunctionCallingConfig::new(mode));
    request.config = greedy();
    request.config.tool_config = Some(tool_config);
    request
}

/// Every response of one `generate` call.
async fn generate(model: &dyn Llm, request: LlmRequest, stream: bool) -> Vec<LlmResponse> {
    model
        .generate(request, mode(stream))
        .try_collect()
        .await
        .expect("the model answers")
}

/// Asserts that `response` is what the flow expects of an answer: text that is not protocol JSON,
/// or calls of declared tools with object arguments.
fn assert_ordinary(response: &LlmResponse, tools: &[&str]) {
    let content = response.content.as_ref().expect("content");
    assert_eq!(content.role, Some(Role::Model));
    for part in &content.parts {
        if let Some(call) = part.as_function_call() {
            assert!(
                tools.contains(&call.name.as_str()),
                "undeclared tool {}",
                call.name
            );
        } else if let Some(text) = part.as_text() {
            let json: Option<Value> = serde_json::from_str(text).ok();
            let protocol =
                json.is_some_and(|json| json.get("tool").is_some() || json.get("answer").is_some());
            assert!(!protocol, "protocol JSON leaked into the text: {text}");
        } else {
            panic!("unexpected part {part:?}");
        }
    }
}

#[tokio::test]
async fn the_adapter_turns_prompted_json_into_a_call_and_reads_the_result_back() {
    let server = server().await;
    let model = model(&server);

    let responses = generate(
        model.as_ref(),
        weather_request(FunctionCallingMode::Any),
        false,
    )
    .await;
    assert_eq!(responses.len(), 1);
    let content = responses[0].content.as_ref().expect("content");
    assert_eq!(content.parts.len(), 1, "{content:?}");
    let call = content
        .function_calls()
        .next()
        .expect("a function call")
        .clone();
    assert_eq!(call.name, "get_weather");
    assert!(
        call.args.get("city").is_some_and(Value::is_string),
        "{call:?}"
    );
    assert!(
        call.id.is_none(),
        "the flow, not the adapter, gives calls ids"
    );

    let mut request = weather_request(FunctionCallingMode::Auto);
    let contents = Arc::make_mut(&mut request.contents);
    contents.push(Content::new(
        Role::Model,
        [Part::function_call(call.with_id("adk-1"))],
    ));
    let result = json!({"city": "Paris", "sky": "sunny", "celsius": 21});
    contents.push(Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new("get_weather", result).with_id("adk-1"),
        )],
    ));
    let responses = generate(model.as_ref(), request, false).await;
    assert_ordinary(&responses[0], &["get_weather"]);
}

#[tokio::test]
async fn a_streamed_prompted_answer_streams_its_text_only() {
    let server = server().await;
    let model = model(&server);
    let mut request = weather_request(FunctionCallingMode::Auto);
    request.contents = Arc::new(vec![Content::user("Say hello to me.")]);
    let responses = generate(model.as_ref(), request, true).await;
    let (partials, last) = responses.split_at(responses.len() - 1);
    let last = &last[0];
    assert_eq!(last.partial, Some(false));
    assert_ordinary(last, &["get_weather"]);
    let streamed: String = partials
        .iter()
        .inspect(|partial| assert_eq!(partial.partial, Some(true)))
        .filter_map(|partial| partial.content.as_ref()?.text())
        .collect();
    let content = last.content.as_ref().expect("content");
    match content.function_calls().next() {
        Some(_) => assert!(partials.is_empty(), "a call streams nothing"),
        None => assert_eq!(
            Some(streamed),
            content.text(),
            "the partials add up to the answer"
        ),
    }
}

/// A runner for `agent` over `sessions`, creating sessions on first use.
fn runner(agent: Arc<dyn Agent>, sessions: Arc<dyn SessionService>) -> Runner {
    Runner::builder("e2e", agent, sessions)
        .auto_create_session(true)
        .build()
        .expect("the runner builds")
}

/// Runs `message` in session `session` and collects the events; an error ends the test, showing
/// the events before it (a run that hit the model-call cap did not finish its turn).
async fn run(runner: &Runner, session: &str, message: &str, config: RunConfig) -> Vec<Event> {
    let mut events = Vec::new();
    let mut stream = std::pin::pin!(
        runner.run_request(
            RunRequest::new("user", session)
                .message(message)
                .run_config(config)
        )
    );
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => events.push(event),
            Err(error) => panic!(
                "the run failed: {error}\nafter these events:\n{}",
                adk_test::render_events(&events)
            ),
        }
    }
    events
}

/// The session as stored, with its events.
async fn stored(sessions: &dyn SessionService, session: &str) -> adk_core::Session {
    let key = SessionKey::new("e2e", "user", session);
    sessions
        .get_session(GetSessionRequest::new(key))
        .await
        .expect("readable")
        .expect("stored")
}

/// The capped run config.
fn capped() -> RunConfig {
    RunConfig::default().with_max_llm_calls(MAX_LLM_CALLS)
}

#[tokio::test]
async fn the_runner_gets_a_plain_answer_and_stores_it() {
    let server = server().await;
    let agent = LlmAgent::builder("greeter")
        .model(model(&server))
        .instruction("You greet the user in one short sentence.")
        .generate_content_config(greedy())
        .build()
        .expect("the agent builds");
    let sessions = Arc::new(InMemorySessionService::new());
    let runner = runner(Arc::new(agent), sessions.clone());
    let events = run(&runner, "plain", "Hello!", capped()).await;
    let last = events.last().expect("an event");
    assert_eq!(last.author, "greeter");
    assert!(last.is_final_response());
    assert_ordinary(&last.response, &[]);
    assert!(
        last.text().is_some_and(|text| !text.trim().is_empty()),
        "{last:?}"
    );

    let session = stored(sessions.as_ref(), "plain").await;
    assert_eq!(
        session.events.len(),
        events.len() + 1,
        "the user's message and every event"
    );
    assert_eq!(session.events[0].author, "user");
    assert_eq!(session.events.last().map(|event| &event.id), Some(&last.id));
}

#[tokio::test]
async fn the_runner_streams_an_answer_and_stores_only_the_whole_one() {
    let server = server().await;
    let agent = LlmAgent::builder("storyteller")
        .model(model(&server))
        .instruction("You answer in two sentences.")
        .generate_content_config(greedy())
        .build()
        .expect("the agent builds");
    let sessions = Arc::new(InMemorySessionService::new());
    let runner = runner(Arc::new(agent), sessions.clone());
    let config = capped().with_streaming_mode(StreamingMode::Sse);
    let events = run(&runner, "streamed", "Tell me about the sea.", config).await;
    let partials: Vec<&Event> = events.iter().filter(|event| event.is_partial()).collect();
    assert!(
        !partials.is_empty(),
        "partial events arrive as the answer streams"
    );
    let last = events.last().expect("an event");
    assert!(!last.is_partial() && last.is_final_response());
    let streamed: String = partials.iter().filter_map(|event| event.text()).collect();
    assert_eq!(
        Some(streamed),
        last.text(),
        "the partials add up to the answer"
    );

    let session = stored(sessions.as_ref(), "streamed").await;
    assert!(session.events.iter().all(|event| !event.is_partial()));
    assert_eq!(session.events.len(), events.len() - partials.len() + 1);
}

#[tokio::test]
async fn the_runner_calls_a_tool_then_answers_with_a_sqlite_session() {
    let server = server().await;
    let agent = LlmAgent::builder("weather_agent")
        .model(model(&server))
        .instruction("You answer questions about the weather. Call get_weather for the city the user asks about, then answer in one short sentence.")
        .tool(FunctionTool::new(
            "get_weather",
            "Returns the sky and the temperature in a city.",
            get_weather,
        ))
        .generate_content_config(greedy())
        .build()
        .expect("the agent builds");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sessions = Arc::new(
        SqliteSessionService::open(dir.path().join("sessions.db"))
            .await
            .expect("SQLite opens"),
    );
    let runner = runner(Arc::new(agent), sessions.clone());
    let events = run(&runner, "tool", "What is the weather in Paris?", capped()).await;

    let call_at = events
        .iter()
        .position(|event| event.function_calls().next().is_some())
        .expect("the model calls a tool");
    let call = events[call_at]
        .function_calls()
        .next()
        .expect("a call")
        .clone();
    assert_eq!(call.name, "get_weather");
    assert!(
        call.args.get("city").is_some_and(Value::is_string),
        "{call:?}"
    );
    let id = call.id.clone().expect("the flow gave the call an id");
    let response = events[call_at + 1]
        .function_responses()
        .next()
        .expect("the tool's response");
    assert_eq!(
        (response.name.as_str(), response.id.as_ref()),
        ("get_weather", Some(&id))
    );
    let answer = events.last().expect("an event");
    assert!(
        answer.is_final_response(),
        "the run ends with an answer: {answer:?}"
    );
    assert_ordinary(&answer.response, &["get_weather"]);
    assert!(
        answer.text().is_some_and(|text| !text.trim().is_empty()),
        "{answer:?}"
    );

    let session = stored(sessions.as_ref(), "tool").await;
    let ids: Vec<_> = session
        .events
        .iter()
        .map(|event| event.id.clone())
        .collect();
    let expected: Vec<_> = events.iter().map(|event| event.id.clone()).collect();
    assert_eq!(
        &ids[1..],
        &expected[..],
        "SQLite holds every event in order"
    );
    let stored_call = session.events[call_at + 1]
        .function_calls()
        .next()
        .expect("the stored call");
    assert_eq!(stored_call.args, call.args);
}

/// The arguments of `lookup_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
struct InvoiceRequest {
    /// The invoice number, for example "INV-1001".
    invoice: String,
}

/// Looks an invoice up in a fixed table.
async fn lookup_invoice(_ctx: ToolContext, request: InvoiceRequest) -> Result<Value, String> {
    Ok(json!({"invoice": request.invoice, "amount_eur": 49.0, "status": "paid"}))
}

#[tokio::test]
async fn the_runner_transfers_to_a_specialist() {
    let server = server().await;
    let billing = LlmAgent::builder("billing")
        .description("Answers questions about invoices and payments.")
        .instruction("You handle invoices. Look invoices up with lookup_invoice, then answer.")
        .tool(FunctionTool::new(
            "lookup_invoice",
            "Returns the amount and status of an invoice.",
            lookup_invoice,
        ))
        .generate_content_config(greedy())
        .build()
        .expect("billing builds");
    let support = LlmAgent::builder("support")
        .description("Helps when something does not work.")
        .instruction("You fix problems.")
        .generate_content_config(greedy())
        .build()
        .expect("support builds");
    // A router that must call a tool: left to choose, SmolLM2-135M answers "no" itself.
    let mut routing = greedy();
    let mut tool_config = ToolConfig::default();
    tool_config.function_calling_config =
        Some(FunctionCallingConfig::new(FunctionCallingMode::Any));
    routing.tool_config = Some(tool_config);
    let coordinator = LlmAgent::builder("help_desk")
        .description("Routes each question to the right specialist.")
        .model(model(&server))
        .instruction("You never answer yourself: you hand every question over. Invoices and payments go to billing, problems go to support.")
        .sub_agent(billing).sub_agent(support)
        .generate_content_config(routing)
        .build()
        .expect("the coordinator builds");
    let sessions = Arc::new(InMemorySessionService::new());
    let runner = runner(Arc::new(coordinator), sessions.clone());
    let events = run(
        &runner,
        "transfer",
        "Is my invoice INV-1001 paid?",
        capped(),
    )
    .await;

    let specialists = BTreeSet::from(["billing", "support"]);
    let transfer = events
        .iter()
        .find(|event| event.actions.transfer_to_agent.is_some())
        .expect("the coordinator transfers");
    let target = transfer
        .actions
        .transfer_to_agent
        .clone()
        .expect("a target");
    assert!(
        specialists.contains(target.as_str()),
        "transferred to {target}"
    );
    let call = events
        .iter()
        .flat_map(Event::function_calls)
        .find(|call| call.name == "transfer_to_agent")
        .expect("a transfer_to_agent call");
    assert_eq!(call.args.get("agent_name"), Some(&json!(target)));
    assert_eq!(events[0].author, "help_desk");
    assert!(
        events.iter().any(|event| event.author == target),
        "{target} takes the turn: {:?}",
        events.iter().map(|event| &event.author).collect::<Vec<_>>()
    );

    let session = stored(sessions.as_ref(), "transfer").await;
    assert_eq!(session.events.len(), events.len() + 1);
}

/// The streaming mode a test's `stream` flag asks for.
fn mode(stream: bool) -> adk_core::StreamingMode {
    if stream {
        adk_core::StreamingMode::Sse
    } else {
        adk_core::StreamingMode::None
    }
}

// The Anthropic and Responses adapters. SmolLM2-135M makes no native tool calls on these
// endpoints (asked with a forced tool choice, even with a tool-aware chat template, it answers in
// prose, and neither endpoint turns `output_config` or `text.format` into a grammar), so these
// tests prove the wires' round trips on the real server: the weather agent, its tool declared,
// whole and streamed under the runner, and a turn whose history holds a `get_weather` call and its
// result (`tool_use`/`tool_result` blocks, `function_call`/`function_call_output` items).

/// The weather agent of the runner tests on `model`, with short answers.
fn weather_agent(model: Arc<dyn Llm>) -> Arc<dyn Agent> {
    let mut config = greedy();
    config.max_output_tokens = Some(48);
    Arc::new(
        LlmAgent::builder("weather_agent")
            .model(model)
            .instruction("You answer questions about the weather. Call get_weather for the city the user asks about, then answer in one short sentence.")
            .tool(Arc::new(FunctionTool::new(
                "get_weather",
                "Returns the sky and the temperature in a city.",
                get_weather,
            )))
            .generate_content_config(config)
            .build()
            .expect("the agent builds"),
    )
}

/// Asks the weather agent on `model` about Paris, whole and streamed, and checks each run ends
/// with an answer (the streamed one's partials adding up to it); then sends a turn after a call
/// of `get_weather`, whole and streamed, and checks the answers and their usage.
///
/// The adapters keep their default retries, as the other tests here do: llama.cpp's server may
/// close a keep-alive connection after a streamed answer just as the next request goes out on it,
/// which on a loaded machine happens often enough to fail a run that does not retry.
async fn check_wire(model: Arc<dyn Llm>) {
    let runner = runner(
        weather_agent(model.clone()),
        Arc::new(InMemorySessionService::new()),
    );
    for (session, config) in [
        ("whole", capped()),
        ("streamed", capped().with_streaming_mode(StreamingMode::Sse)),
    ] {
        let events = run(&runner, session, "What is the weather in Paris?", config).await;
        let last = events.last().expect("an event");
        assert!(last.is_final_response(), "{last:?}");
        assert!(
            last.text().is_some_and(|text| !text.trim().is_empty()),
            "{last:?}"
        );
        let streamed: String = events
            .iter()
            .filter(|event| event.is_partial())
            .filter_map(|event| event.text())
            .collect();
        if session == "streamed" {
            assert_eq!(
                Some(streamed),
                last.text(),
                "the partials add up to the answer"
            );
        }
    }
    let mut request = weather_request(FunctionCallingMode::Auto);
    request.config.max_output_tokens = Some(48);
    let contents = Arc::make_mut(&mut request.contents);
    contents.push(Content::new(
        Role::Model,
        [Part::function_call(
            adk_core::FunctionCall::new("get_weather", json!({"city": "Paris"})).with_id("call_1"),
        )],
    ));
    contents.push(Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new(
                "get_weather",
                json!({"city": "Paris", "sky": "sunny", "celsius": 21}),
            )
            .with_id("call_1"),
        )],
    ));
    for stream in [false, true] {
        let responses = generate(model.as_ref(), request.clone(), stream).await;
        let last = responses.last().expect("a response");
        assert!(!last.is_partial());
        assert!(
            last.content.as_ref().and_then(Content::text).is_some(),
            "{last:?}"
        );
        let usage = last.usage_metadata.expect("usage");
        assert!(
            usage.prompt_token_count.is_some_and(|tokens| tokens > 0),
            "{usage:?}"
        );
    }
}

#[tokio::test]
async fn the_anthropic_adapter_speaks_to_the_local_server() {
    let server = server().await;
    let model = Anthropic::builder(server.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .build()
        .expect("the adapter builds");
    check_wire(Arc::new(model)).await;
}

#[tokio::test]
async fn the_responses_adapter_speaks_to_the_local_server() {
    let server = server().await;
    let model = OpenAiResponses::builder(server.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .build()
        .expect("the adapter builds");
    check_wire(Arc::new(model)).await;
}
