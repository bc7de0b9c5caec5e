//! adk-rs and ADK Python agents hand tasks to each other over A2A: our `RemoteA2aAgent` calls an
//! ADK Python agent exposed with `to_a2a`, and ADK Python's `RemoteA2aAgent` calls our server.
//! The Python agents' Gemini model is a loopback mock; ours is the scripted model.

mod support;

use std::sync::Arc;

use adk_a2a::{CONTEXT_ID_METADATA_KEY, RemoteA2aAgent};
use adk_flow::LlmAgent;
use adk_test::{MockServer, ScriptedModel};
use serde_json::{Value, json};
use support::{PythonServer, gemini_call, gemini_text, run, run_python, runner, serve, texts_by};

fn context_ids(events: &[adk_core::Event], author: &str) -> Vec<String> {
    events
        .iter()
        .filter(|event| event.author == author)
        .filter_map(|event| {
            event
                .response
                .custom_metadata
                .as_ref()?
                .get(CONTEXT_ID_METADATA_KEY)?
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_adk_rs_agent_hands_a_task_to_an_adk_python_agent_and_the_conversation_continues() {
    let gemini = MockServer::start([
        gemini_text("Paris is the capital of France."),
        gemini_text("Lyon is its third largest city."),
    ])
    .await;
    let python = PythonServer::start("adk_agent_server.py", &[&gemini.base_url()]).await;
    let remote = RemoteA2aAgent::builder("python_agent")
        .description("Answers questions about France.")
        .card_url(python.base_url())
        .build()
        .unwrap();
    let model = ScriptedModel::new("scripted")
        .then_call("transfer_to_agent", json!({"agent_name": "python_agent"}))
        .then_call("transfer_to_agent", json!({"agent_name": "python_agent"}));
    let root = LlmAgent::builder("rust_root")
        .model(model)
        .sub_agent(remote)
        .build()
        .unwrap();
    let runner = runner("rust_app", Arc::new(root));

    let first = run(&runner, "s-1", "What is the capital of France?")
        .await
        .unwrap();
    assert_eq!(
        texts_by(&first, "python_agent"),
        ["Paris is the capital of France."]
    );
    let second = run(&runner, "s-1", "And its third city?").await.unwrap();
    assert_eq!(
        texts_by(&second, "python_agent"),
        ["Lyon is its third largest city."]
    );

    // Both turns ran in one remote conversation, so the Python agent's model saw the first one.
    let first_context = context_ids(&first, "python_agent");
    let second_context = context_ids(&second, "python_agent");
    assert!(!first_context.is_empty());
    assert!(
        first_context
            .iter()
            .chain(&second_context)
            .all(|id| id == &first_context[0])
    );
    let requests = gemini.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0].path.contains(":generateContent"),
        "{}",
        requests[0].path
    );
    let history = requests[1].json()["contents"].to_string();
    assert!(
        history.contains("What is the capital of France?"),
        "{history}"
    );
    assert!(
        history.contains("Paris is the capital of France."),
        "{history}"
    );
    assert!(history.contains("And its third city?"), "{history}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_adk_python_agent_hands_a_task_to_an_adk_rs_agent() {
    let model = ScriptedModel::new("scripted").then_text("Ownership keeps Rust memory safe.");
    let rust_agent = LlmAgent::builder("rust_agent")
        .description("Answers questions about Rust.")
        .model(model.clone())
        .build()
        .unwrap();
    let base_url = serve(runner("rust_app", Arc::new(rust_agent))).await;
    let gemini = MockServer::start([gemini_call(
        "transfer_to_agent",
        json!({"agent_name": "rust_agent"}),
    )])
    .await;

    let card_url = format!("{base_url}/.well-known/agent-card.json");
    let events = run_python(
        "adk_remote_client.py",
        &[&card_url, &gemini.base_url(), "Why is Rust memory safe?"],
    )
    .await;

    let answers: Vec<&Value> = events
        .iter()
        .filter(|event| event["author"] == "rust_agent")
        .filter(|event| {
            event["content"]["parts"].as_array().is_some_and(|parts| {
                parts.iter().any(|part| {
                    part["text"] == "Ownership keeps Rust memory safe." && part["thought"] != true
                })
            })
        })
        .collect();
    assert_eq!(answers.len(), 1, "{events:#?}");
    // Our agent's model got the Python user's question.
    let asked = model.requests()[0]
        .contents
        .iter()
        .map(|content| content.text().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(asked.contains("Why is Rust memory safe?"), "{asked}");
}
