//! Gemini's provider-side tools on agents, driven by scripted models: each asks for its tool in the
//! request, only on a Gemini model; ADK's rule that a built-in tool is alone on its agent, and the
//! search agent that stands in for Google Search beside other tools, with its grounding metadata
//! carried to the caller's answer.

mod support;

use std::sync::Arc;

use adk_core::{BuiltinTool, Content, ErrorKind, LlmResponse};
use adk_test::{AgentRun, ScriptedModel};
use adk_tool::builtin;
use serde_json::json;
use support::{agent, weather_tool};

/// A grounded answer, as Gemini sends one after a search.
fn grounded(text: &str, query: &str) -> LlmResponse {
    let mut response = LlmResponse::new(Content::model(text));
    response.grounding_metadata = Some(json!({
        "webSearchQueries": [query],
        "groundingChunks": [{"web": {"uri": "https://example.com/weather", "title": "example.com"}}],
    }));
    response
}

#[tokio::test]
async fn each_provider_tool_alone_asks_for_itself_and_declares_no_function() {
    for (tool, expected) in [
        (builtin::google_search(), BuiltinTool::GoogleSearch),
        (builtin::url_context(), BuiltinTool::UrlContext),
        (builtin::code_execution(), BuiltinTool::CodeExecution),
    ] {
        let model = ScriptedModel::new("gemini-2.5-flash").then_text("done");
        let searcher = agent("searcher", &model)
            .tool(Arc::new(tool))
            .build()
            .unwrap();
        let run = AgentRun::new(Arc::new(searcher), "q").await;
        assert!(run.error.is_none(), "{:?}", run.error);
        let request = &model.requests()[0];
        assert_eq!(request.builtin_tools, [expected]);
        assert!(request.tools.is_empty(), "{:?}", request.tools);
    }
}

#[tokio::test]
async fn grounding_metadata_stays_on_the_answer_event_and_in_the_session() {
    let model = ScriptedModel::new("models/gemini-2.5-flash")
        .then(grounded("Sunny in Paris.", "weather paris"));
    let searcher = agent("searcher", &model)
        .tool(Arc::new(builtin::google_search()))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(searcher), "Weather in Paris?").await;
    let answer = run.session.events.last().unwrap();
    assert_eq!(answer.text().as_deref(), Some("Sunny in Paris."));
    assert_eq!(
        answer.response.grounding_metadata.as_ref().unwrap()["webSearchQueries"],
        json!(["weather paris"])
    );
    // The stored JSON is ADK's: `groundingMetadata` beside the content.
    let stored = serde_json::to_value(answer).unwrap();
    assert!(stored["groundingMetadata"]["groundingChunks"].is_array());
}

#[tokio::test]
async fn a_provider_tool_on_another_model_is_refused_by_name() {
    let model = ScriptedModel::new("gpt-4o").then_text("unused");
    let searcher = agent("searcher", &model)
        .tool(Arc::new(builtin::url_context()))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(searcher), "q").await;
    let error = run.error.expect("the run fails");
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(
        error
            .message()
            .contains("`url_context` runs on Gemini models only")
            && error.message().contains("`gpt-4o`"),
        "{}",
        error.message()
    );
    assert_eq!(model.remaining(), 1, "the model was not called");
}

#[tokio::test]
async fn a_built_in_tool_beside_other_tools_is_refused_with_what_to_do() {
    for (tool, hint) in [
        (builtin::google_search(), true),
        (builtin::code_execution(), false),
    ] {
        let model = ScriptedModel::new("gemini-2.5-flash").then_text("unused");
        let mixed = agent("mixed", &model)
            .tool(weather_tool())
            .tool(Arc::new(tool))
            .build()
            .unwrap();
        let run = AgentRun::new(Arc::new(mixed), "q").await;
        let error = run.error.expect("the run fails");
        assert_eq!(error.kind(), ErrorKind::Config);
        let message = error.message();
        assert!(
            message.contains("agent 'mixed' has the built-in tool")
                && message.contains("as an `AgentTool`"),
            "{message}"
        );
        assert_eq!(
            message.contains("bypass_multi_tools_limit"),
            hint,
            "{message}"
        );
        assert_eq!(model.remaining(), 1, "the model was not called");
    }
}

#[tokio::test]
async fn google_search_beside_other_tools_runs_through_a_search_agent_whose_sources_reach_the_answer()
 {
    // One scripted Gemini serves both agents, in call order: the caller asks the search agent,
    // the search agent answers from its search, the caller answers the user.
    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call(
            "google_search_agent",
            json!({"request": "weather in Paris"}),
        )
        .then(grounded("It is sunny in Paris.", "weather in paris"))
        .then_text("Sunny, according to the search.");
    let assistant = agent("assistant", &model)
        .tool(weather_tool())
        .tool(Arc::new(
            builtin::google_search().bypass_multi_tools_limit(true),
        ))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(assistant), "Is it sunny in Paris?").await;
    assert!(run.error.is_none(), "{:?}", run.error);

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    // The caller declares the search agent and its function tool, and asks for no built-in.
    let declared: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(declared, ["get_weather", "google_search_agent"]);
    assert!(requests[0].builtin_tools.is_empty());
    // The search agent has Google Search alone.
    assert_eq!(requests[1].builtin_tools, [BuiltinTool::GoogleSearch]);
    assert!(requests[1].tools.is_empty());
    assert_eq!(
        requests[1].contents.last().unwrap().text().as_deref(),
        Some("weather in Paris")
    );

    let events = &run.session.events;
    let response = events
        .iter()
        .find_map(|event| event.function_responses().next().cloned())
        .expect("the search agent answered");
    assert_eq!(
        serde_json::Value::Object(response.response),
        json!({"result": "It is sunny in Paris."})
    );
    let answer = events.last().unwrap();
    assert_eq!(
        answer.text().as_deref(),
        Some("Sunny, according to the search.")
    );
    assert_eq!(
        answer.response.grounding_metadata.as_ref().unwrap()["webSearchQueries"],
        json!(["weather in paris"]),
        "the search agent's sources are on the caller's answer"
    );
    // The hand-over key is invocation state: it never reaches the stored history.
    assert!(events.iter().all(|event| {
        !event
            .actions
            .state_delta
            .keys()
            .any(|key| key.starts_with("temp:"))
    }));
}

#[tokio::test]
async fn gemini_3_takes_built_in_tools_beside_function_tools_in_one_request() {
    let model = ScriptedModel::new("gemini-3-flash-preview").then_text("done");
    let mixed = agent("mixed", &model)
        .tool(weather_tool())
        .tool(Arc::new(builtin::code_execution()))
        .tool(Arc::new(builtin::url_context()))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(mixed), "q").await;
    assert!(run.error.is_none(), "{:?}", run.error);
    let request = &model.requests()[0];
    assert_eq!(
        request.builtin_tools,
        [BuiltinTool::CodeExecution, BuiltinTool::UrlContext]
    );
    let declared: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(declared, ["get_weather"]);
}

#[tokio::test]
async fn built_in_tools_together_without_functions_are_one_request() {
    let model = ScriptedModel::new("gemini-2.5-flash").then_text("done");
    let reader = agent("reader", &model)
        .tool(Arc::new(builtin::google_search()))
        .tool(Arc::new(builtin::url_context()))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(reader), "q").await;
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(
        model.requests()[0].builtin_tools,
        [BuiltinTool::GoogleSearch, BuiltinTool::UrlContext]
    );
}

#[tokio::test]
async fn a_built_in_tool_on_an_agent_that_can_transfer_is_refused_before_gemini_3() {
    let model = ScriptedModel::new("gemini-2.5-flash").then_text("unused");
    let helper = agent("helper", &model).build().unwrap();
    let searcher = agent("searcher", &model)
        .tool(Arc::new(builtin::google_search()))
        .sub_agent(helper)
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(searcher), "q").await;
    let error = run.error.expect("the run fails");
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(
        error
            .message()
            .contains("beside agents to transfer to, and `gemini-2.5-flash` (Gemini before 3)"),
        "{}",
        error.message()
    );
    assert_eq!(model.remaining(), 1, "the model was not called");
}
