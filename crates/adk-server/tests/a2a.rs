//! With the `a2a` feature, the server mounts each app's A2A server at `/a2a/{app}`, behind the
//! same authorizer as every other route.

use adk_a2a::types::{Message, MessageSendParams, Part, Role, SendMessageResult, TaskState};
use adk_a2a::{A2aClient, A2aError, ClientConfig};
use adk_flow::LlmAgent;
use adk_runner::Runner;
use adk_server::{Server, ServerConfig};
use adk_session::InMemorySessionService;
use adk_test::ScriptedModel;

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
    let server = Server::builder()
        .app(runner)
        .config(ServerConfig::default().bearer_token("s3cret"))
        .a2a(true)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });

    let refused =
        A2aClient::resolve_card(&format!("{base_url}/a2a/french"), &ClientConfig::default())
            .await
            .unwrap_err();
    assert!(
        matches!(refused, A2aError::Http { status: 401, .. }),
        "{refused}"
    );

    let config = ClientConfig::default().bearer_token("s3cret");
    let card = A2aClient::resolve_card(&format!("{base_url}/a2a/french"), &config)
        .await
        .unwrap();
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
