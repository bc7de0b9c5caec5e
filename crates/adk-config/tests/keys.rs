//! Every supported key, loaded from YAML fixtures and seen at work: the agents are run under the
//! `Runner` with scripted models, and what the models were asked shows each key's effect.

mod support;

use adk_config::AgentLoader;
use adk_test::ScriptedModel;
use expect_test::expect;
use serde_json::json;
use support::{
    ScriptedResolver, fixture, load_on_local, render_requests, render_tree, run, runner,
    weather_tool,
};

#[tokio::test]
async fn every_key_of_an_llm_agent_reaches_the_agent() {
    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.")
        .then_call("transfer_to_agent", json!({"agent_name": "forecaster"}))
        .then_text("Rain tomorrow.");
    let resolver = ScriptedResolver::new().serve("gemini-2.5-flash", model.clone());
    let root = AgentLoader::new()
        .function_tool(weather_tool())
        .model_resolver(resolver.clone())
        .load(fixture("keys/llm_agent"))
        .await
        .unwrap();

    expect![[r#"
        weather_agent (LlmAgent): "Answers questions about the weather." tools [get_weather, load_memory]
          forecaster (LlmAgent): "Forecasts the next days." tools []
          historian (LlmAgent): "Knows the weather of past years." tools [load_artifacts, preload_memory, get_user_choice]
    "#]]
    .assert_eq(&render_tree(&root));
    // The sub-agents name no model: they use weather_agent's, and no other is made ready.
    assert_eq!(resolver.asked(), ["gemini-2.5-flash"]);

    let runner = runner(root);
    // The root declares its function and built-in tools, settings and instruction, and may
    // transfer to both sub-agents; the forecaster sees only the current turn
    // (`include_contents: none`) and may transfer nowhere (`disallow_transfer_to_*`).
    let first = run(&runner, "How is the weather in Paris?").await;
    let second = run(&runner, "And the next days?").await;
    expect![[r#"
        weather_agent: call get_weather {"city":"Paris"}
        weather_agent: response get_weather {"result":"Sunny in Paris."}
        weather_agent: "It is sunny in Paris." [last_answer="It is sunny in Paris."]
        ==
        weather_agent: call transfer_to_agent {"agent_name":"forecaster"}
        weather_agent: response transfer_to_agent {"result":null} [transfer forecaster]
        forecaster: "Rain tomorrow."
    "#]]
    .assert_eq(&(first.render() + "==\n" + &second.render()));
    expect![[r#"
        instruction: Some("You answer questions about the weather in .\n\nYou are an agent named \"weather_agent\". Your description: Answers questions about the weather.\n\nYou have a memory of earlier conversations with this user. When a question needs it, call the `load_memory` function with a search query.\n\nYou can hand the conversation over to these agents:\n\nAgent name: forecaster\nAgent description: Forecasts the next days.\n\nAgent name: historian\nAgent description: Knows the weather of past years.\n\nAnswer yourself when your own description fits the question best. When another agent fits it better, call `transfer_to_agent` with that agent's name and write nothing else.")
        tools: get_weather, load_memory, transfer_to_agent["forecaster","historian"]
        config: {"temperature":0.2,"topP":0.9,"topK":40,"maxOutputTokens":256,"stopSequences":["END"],"candidateCount":1,"seed":7,"presencePenalty":0.1,"frequencyPenalty":0.2,"responseMimeType":"text/plain","thinkingConfig":{"includeThoughts":false,"thinkingBudget":128,"thinkingLevel":"LOW"},"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_ONLY_HIGH"}]}
        contents: 1
        --
        instruction: Some("You answer questions about the weather in .\n\nYou are an agent named \"weather_agent\". Your description: Answers questions about the weather.\n\nYou have a memory of earlier conversations with this user. When a question needs it, call the `load_memory` function with a search query.\n\nYou can hand the conversation over to these agents:\n\nAgent name: forecaster\nAgent description: Forecasts the next days.\n\nAgent name: historian\nAgent description: Knows the weather of past years.\n\nAnswer yourself when your own description fits the question best. When another agent fits it better, call `transfer_to_agent` with that agent's name and write nothing else.")
        tools: get_weather, load_memory, transfer_to_agent["forecaster","historian"]
        config: {"temperature":0.2,"topP":0.9,"topK":40,"maxOutputTokens":256,"stopSequences":["END"],"candidateCount":1,"seed":7,"presencePenalty":0.1,"frequencyPenalty":0.2,"responseMimeType":"text/plain","thinkingConfig":{"includeThoughts":false,"thinkingBudget":128,"thinkingLevel":"LOW"},"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_ONLY_HIGH"}]}
        contents: 3
        --
        instruction: Some("You answer questions about the weather in .\n\nYou are an agent named \"weather_agent\". Your description: Answers questions about the weather.\n\nYou have a memory of earlier conversations with this user. When a question needs it, call the `load_memory` function with a search query.\n\nYou can hand the conversation over to these agents:\n\nAgent name: forecaster\nAgent description: Forecasts the next days.\n\nAgent name: historian\nAgent description: Knows the weather of past years.\n\nAnswer yourself when your own description fits the question best. When another agent fits it better, call `transfer_to_agent` with that agent's name and write nothing else.")
        tools: get_weather, load_memory, transfer_to_agent["forecaster","historian"]
        config: {"temperature":0.2,"topP":0.9,"topK":40,"maxOutputTokens":256,"stopSequences":["END"],"candidateCount":1,"seed":7,"presencePenalty":0.1,"frequencyPenalty":0.2,"responseMimeType":"text/plain","thinkingConfig":{"includeThoughts":false,"thinkingBudget":128,"thinkingLevel":"LOW"},"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_ONLY_HIGH"}]}
        contents: 5
        --
        instruction: Some("You forecast the weather of the next three days.\n\nYou are an agent named \"forecaster\". Your description: Forecasts the next days.")
        tools: 
        config: {}
        contents: 1
        --
    "#]].assert_eq(&render_requests(&model.requests()));
}

#[tokio::test]
async fn workflow_agents_run_their_sub_agents_from_other_files() {
    let local = ScriptedModel::new("local")
        .then_text("Waves fold on the shore.")
        .then_text("Les vagues se replient.");
    let reviewer = ScriptedModel::new("gpt-4o-mini")
        .then_text("It needs a rhyme.")
        .then_call("exit_loop", json!({}));
    let english = ScriptedModel::new("gemini-2.5-flash").then_text("Waves fold on the shore.");
    let resolver = ScriptedResolver::new()
        .serve("local", local.clone())
        .serve("openai/gpt-4o-mini", reviewer.clone())
        .serve("gemini-2.5-flash", english.clone());
    let root = AgentLoader::new()
        .model_resolver(resolver.clone())
        .load(fixture("keys/workflows/root_agent.yaml"))
        .await
        .unwrap();

    expect![[r#"
        pipeline (SequentialAgent): "Drafts, reviews and translates a short text."
          writer (LlmAgent): "Writes the first draft." tools []
          review_loop (LoopAgent): "Reviews the draft until it is good."
            reviewer (LlmAgent): "Reviews the draft and ends the loop when it is good." tools [exit_loop]
          translations (ParallelAgent): "Translates the draft into English and French at once."
            english (LlmAgent): "" tools []
            french (LlmAgent): "" tools []
    "#]].assert_eq(&render_tree(&root));
    // In the order the tree first needs them: the default for the writer, then the reviewer's
    // and the English translator's; the French translator shares the default.
    assert_eq!(
        resolver.asked(),
        ["local", "openai/gpt-4o-mini", "gemini-2.5-flash"]
    );

    let runner = runner(root);
    let outcome = run(&runner, "Go.").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    let authors: Vec<&str> = outcome
        .events
        .iter()
        .map(|event| event.author.as_str())
        .collect();
    // The reviewer ran twice: the loop ended on its `exit_loop` (a call and its response)
    // before a third round; then both translators ran, in either order.
    assert_eq!(
        authors[..4],
        ["writer", "reviewer", "reviewer", "reviewer"][..]
    );
    let mut translators = authors[4..].to_vec();
    translators.sort_unstable();
    assert_eq!(translators, ["english", "french"]);
    assert_eq!(
        outcome.state_set("draft"),
        Some(&json!("Waves fold on the shore."))
    );
    assert_eq!(
        outcome.state_set("french"),
        Some(&json!("Les vagues se replient."))
    );
    assert_eq!(
        local.remaining() + reviewer.remaining() + english.remaining(),
        0
    );
}

#[tokio::test]
async fn max_iterations_bounds_the_rounds_and_0_is_no_limit() {
    let bounded = ScriptedModel::new("local")
        .then_text("Better.")
        .then_text("Better still.")
        .then_text("A third round would be one too many.");
    let root = load_on_local(&bounded, fixture("keys/loop_limit")).await;
    let outcome = run(&runner(root), "The sea is big.").await;
    expect![[r#"
        polish: "Better."
        polish: "Better still."
    "#]]
    .assert_eq(&outcome.render());
    assert_eq!(bounded.remaining(), 1, "the loop ran more than two rounds");

    let unlimited = ScriptedModel::new("local")
        .then_text("Better.")
        .then_text("Better still.")
        .then_text("Nearly there.")
        .then_call("exit_loop", json!({}));
    let root = load_on_local(&unlimited, fixture("keys/loop_limit/unlimited.yaml")).await;
    let outcome = run(&runner(root), "The sea is big.").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    assert_eq!(unlimited.remaining(), 0, "{}", outcome.render());
}

#[tokio::test]
async fn max_repeated_tool_calls_sets_the_loop_guard_and_0_turns_it_off() {
    let looping = || {
        ScriptedModel::new("local")
            .then_call("get_weather", json!({"city": "Tokyo"}))
            .then_call("get_weather", json!({"city": "Tokyo"}))
            .then_call("get_weather", json!({"city": "Tokyo"}))
            .then_text("Sunny in Tokyo.")
    };
    let load = |model: ScriptedModel, path: &'static str| async move {
        AgentLoader::new()
            .function_tool(weather_tool())
            .model_resolver(ScriptedResolver::new().serve("local", model))
            .load(fixture(path))
            .await
            .unwrap_or_else(|error| panic!("{error}"))
    };

    let strict = looping();
    let root = load(strict.clone(), "keys/repeated_calls").await;
    let outcome = run(&runner(root), "Weather in Tokyo?").await;
    expect![[r#"
        weather_agent: call get_weather {"city":"Tokyo"}
        weather_agent: response get_weather {"result":"Sunny in Tokyo."}
        weather_agent: call get_weather {"city":"Tokyo"}
        weather_agent: response get_weather {"error":"tool 'get_weather' was not run: it was called with these arguments 2 times in this turn, more than allowed, so the turn ends here."}
        weather_agent: "Stopped: the model called get_weather with the same arguments 2 times in this turn instead of answering. The results it got are above; ask again, or ask differently." error REPEATED_TOOL_CALLS
    "#]]
    .assert_eq(&outcome.render());
    assert_eq!(strict.remaining(), 2, "the turn went on after the guard");

    let unguarded = looping();
    let root = load(unguarded.clone(), "keys/repeated_calls/unguarded.yaml").await;
    let outcome = run(&runner(root), "Weather in Tokyo?").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    assert_eq!(unguarded.remaining(), 0, "{}", outcome.render());
    assert_eq!(
        outcome.render().matches("Sunny in Tokyo.").count(),
        4,
        "three runs of the tool and the answer: {}",
        outcome.render()
    );
}
