//! The official Python `a2a-sdk` against our side: its client sends to and streams from our
//! server, and our client and `RemoteA2aAgent` call a minimal server written with it.

mod support;

use std::sync::Arc;

use adk_a2a::types::{
    Message, MessageSendParams, Part, Role, SendMessageResult, StreamEvent, TaskQueryParams,
    TaskState,
};
use adk_a2a::{A2aClient, ClientConfig, RemoteA2aAgent};
use adk_flow::LlmAgent;
use adk_test::ScriptedModel;
use futures::TryStreamExt as _;
use serde_json::{Value, json};
use support::{PythonServer, run, run_python, runner, serve, texts_by};

#[tokio::test(flavor = "multi_thread")]
async fn the_sdk_client_sends_and_streams_to_our_server() {
    let model = ScriptedModel::new("scripted")
        .then_text("Hello from adk-rs.")
        .then_text("Streamed from adk-rs.");
    let agent = LlmAgent::builder("greeter")
        .description("Greets.")
        .model(model)
        .build()
        .unwrap();
    let base_url = serve(runner("greeter_app", Arc::new(agent))).await;

    let sent = run_python("sdk_client.py", &[&base_url, "send", "Hi"]).await;
    assert_eq!(sent[0]["card"]["name"], "greeter");
    assert_eq!(sent[0]["card"]["url"], format!("{base_url}/"));
    let task = &sent.last().unwrap()["task"];
    assert_eq!(task["status"]["state"], "completed", "{sent:#?}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "Hello from adk-rs."
    );

    let streamed = run_python("sdk_client.py", &[&base_url, "stream", "Hi again"]).await;
    let kinds: Vec<&str> = streamed[1..]
        .iter()
        .map(|line| line["update"]["kind"].as_str().unwrap_or("task"))
        .collect();
    assert_eq!(kinds.first(), Some(&"task"), "{streamed:#?}");
    assert!(kinds.contains(&"status-update"), "{kinds:?}");
    assert!(kinds.contains(&"artifact-update"), "{kinds:?}");
    let last = streamed.last().unwrap();
    assert_eq!(last["update"]["final"], true);
    assert_eq!(last["task"]["status"]["state"], "completed");
    let artifact_texts: Vec<&Value> = last["task"]["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|artifact| &artifact["parts"][0]["text"])
        .collect();
    assert_eq!(artifact_texts, [&json!("Streamed from adk-rs.")]);
    // Both messages ran in one context each, as new tasks of new conversations.
    assert_ne!(task["contextId"], last["task"]["contextId"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_sends_streams_and_gets_tasks_of_an_sdk_server() {
    let python = PythonServer::start("sdk_server.py", &[]).await;
    let config = ClientConfig::default();
    let card = A2aClient::resolve_card(&python.base_url(), &config)
        .await
        .unwrap();
    assert_eq!(card.name, "echo");
    let client = A2aClient::from_card(&card, config).unwrap();

    let message = Message::new(Role::User, vec![Part::text("ping")]);
    let SendMessageResult::Task(task) = client
        .send_message(MessageSendParams::new(message))
        .await
        .unwrap()
    else {
        panic!("the SDK server answers with a task");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    let artifacts = task.artifacts.clone().unwrap();
    assert!(matches!(&artifacts[0].parts[0], Part::Text(text) if text.text == "echo: ping"));
    let fetched = client
        .get_task(TaskQueryParams::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(fetched.id, task.id);
    assert_eq!(fetched.status.state, TaskState::Completed);

    let message = Message::new(Role::User, vec![Part::text("pong")]);
    let events: Vec<StreamEvent> = client
        .send_message_streaming(MessageSendParams::new(message))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(
        matches!(events.first(), Some(StreamEvent::Task(_))),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::ArtifactUpdate(update)
        if matches!(&update.artifact.parts[0], Part::Text(text) if text.text == "echo: pong")))
    );
    let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("the stream ends with a status update: {events:#?}");
    };
    assert!(last.is_final);
    assert_eq!(last.status.state, TaskState::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agent_talks_to_an_agent_that_is_not_adk() {
    let python = PythonServer::start("sdk_server.py", &[]).await;
    let remote = RemoteA2aAgent::builder("echo")
        .card_url(python.base_url())
        .build()
        .unwrap();
    let runner = runner("echo_app", Arc::new(remote));
    let events = run(&runner, "s-1", "hello there").await.unwrap();
    assert_eq!(texts_by(&events, "echo"), ["echo: hello there"]);
    // The working update's text is shown as the remote agent's thought, not as its answer.
    assert!(
        events
            .iter()
            .any(|event| event.content().is_some_and(|content| content
                .parts
                .iter()
                .any(|part| part.thought && part.as_text() == Some("thinking"))))
    );
}
