//! With the `a2a` feature, the server mounts each app's A2A server at `/a2a/{app}`, behind the
//! same gate as every other route, its runs counted against the server's run limit and taking the
//! session locks `/run` takes.

use std::sync::Arc;
use std::time::Duration;

use adk_a2a::types::{Message, MessageSendParams, Part, Role, SendMessageResult, TaskState};
use adk_a2a::{A2aClient, A2aError, ClientConfig};
use adk_flow::LlmAgent;
use adk_runner::Runner;
use adk_server::gate::{ApiKeys, Authentication, Principal};
use adk_server::{Server, ServerConfig};
use adk_session::InMemorySessionService;
use adk_test::ScriptedModel;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Serves `runner` with `config` and A2A on; the server's base URL.
async fn serve(runner: Runner, config: ServerConfig) -> String {
    let server = Server::builder()
        .app(runner)
        .config(config)
        .a2a(true)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    base_url
}

#[tokio::test]
async fn apps_are_served_over_a2a_under_their_name() {
    let model = ScriptedModel::new("scripted").then_text("Bonjour !");
    let agent = LlmAgent::builder("greeter")
        .description("Greets in French.")
        .model(model)
        .build()
        .unwrap();
    let runner = Runner::builder("french", agent, InMemorySessionService::new())
        .build()
        .unwrap();
    let keys = ApiKeys::new().key("s3cret-key-of-ada", Principal::new("ada"));
    let base_url = serve(
        runner,
        ServerConfig::default().authentication(Authentication::new().api_keys(keys)),
    )
    .await;

    // The card is public, as A2A wants; sending a message needs credentials.
    let card = A2aClient::resolve_card(&format!("{base_url}/a2a/french"), &ClientConfig::default())
        .await
        .unwrap();
    let anonymous = A2aClient::from_card(&card, ClientConfig::default()).unwrap();
    let refused = anonymous
        .send_message(MessageSendParams::new(Message::new(
            Role::User,
            vec![Part::text("Hello")],
        )))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, A2aError::Http { status: 401, .. }),
        "{refused}"
    );

    let config = ClientConfig::default().bearer_token("s3cret-key-of-ada");
    assert_eq!(card.name, "greeter");
    assert_eq!(card.url, format!("{base_url}/a2a/french"));
    let client = A2aClient::from_card(&card, config).unwrap();
    let message = Message::new(Role::User, vec![Part::text("Hello")]);
    let SendMessageResult::Task(task) = client
        .send_message(MessageSendParams::new(message))
        .await
        .unwrap()
    else {
        panic!("a task");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    let artifact = &task.artifacts.unwrap()[0];
    assert!(matches!(&artifact.parts[0], Part::Text(text) if text.text == "Bonjour !"));
}

/// An app whose agent first calls `hold` (which waits until released), on the scripted model.
fn holding_app(started: Arc<Notify>, release: Arc<Notify>) -> Runner {
    let model = ScriptedModel::new("scripted")
        .then_call("hold", json!({}))
        .then_text("done")
        .then_text("second");
    let agent = LlmAgent::builder("holder")
        .description("Holds.")
        .model(Arc::new(model))
        .tool(adk_test::AsyncTool::shared("hold", move || {
            let (started, release) = (started.clone(), release.clone());
            async move {
                started.notify_one();
                release.notified().await;
                Ok(json!({"held": true}))
            }
        }))
        .build()
        .unwrap();
    Runner::builder("holder", Arc::new(agent), InMemorySessionService::new())
        .auto_create_session(true)
        .build()
        .unwrap()
}

fn a2a_send(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }}})
}

#[tokio::test]
async fn security_inbound_a2a_runs_count_against_the_servers_run_limit() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let base = serve(
        holding_app(started.clone(), release.clone()),
        ServerConfig::default().max_concurrent_runs(1),
    )
    .await;
    let client = reqwest::Client::new();
    // One run takes the server's only place.
    let held = tokio::spawn({
        let client = client.clone();
        let base = base.clone();
        async move {
            client
                .post(format!("{base}/run"))
                .json(
                    &json!({"appName": "holder", "userId": "ada", "sessionId": "s",
                    "newMessage": {"role": "user", "parts": [{"text": "hold"}]}}),
                )
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    tokio::time::timeout(Duration::from_secs(120), started.notified())
        .await
        .expect("the first run holds");

    let answer = client
        .post(format!("{base}/a2a/holder"))
        .json(&a2a_send("one more"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 503, "{:?}", answer.text().await);

    release.notify_one();
    assert_eq!(held.await.unwrap(), 200);
    let answer: Value = client
        .post(format!("{base}/a2a/holder"))
        .json(&a2a_send("now"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"]["status"]["state"], "completed", "{answer}");
}
