//! `RemoteA2aAgent` against our own server: as a sub-agent and as a tool, answering
//! `input-required` through the confirmation flow, cancelling the remote task when the run is
//! dropped, a remote agent that dies mid-stream, and the client's authentication, size limit and
//! retries.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use adk_a2a::types::{AgentCard, Message, MessageSendParams, Part, Role};
use adk_a2a::{A2aClient, A2aError, A2aServer, ClientConfig, RemoteA2aAgent};
use adk_core::{Content, FunctionResponse, GetSessionRequest, SessionKey};
use adk_flow::{AgentTool, LlmAgent};
use adk_runner::RunRequest;
use adk_test::{MockResponse, MockServer, ScriptedModel};
use futures::StreamExt as _;
use serde_json::{Value, json};
use support::{
    free_port, local_app_with_remote_bank, run, run_until_error, runner, serve, texts_by,
};

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

fn remote(name: &str, base_url: &str) -> Arc<RemoteA2aAgent> {
    Arc::new(
        RemoteA2aAgent::builder(name)
            .description("A remote agent.")
            .card_url(base_url)
            .build()
            .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agent_works_as_a_tool() {
    let model = ScriptedModel::new("remote").then_text("42");
    let answerer = LlmAgent::builder("answerer").model(model).build().unwrap();
    let base_url = serve(runner("remote_app", Arc::new(answerer))).await;

    let tool = AgentTool::new(remote("oracle", &base_url));
    let model = ScriptedModel::new("local")
        .then_call("oracle", json!({"request": "What is the answer?"}))
        .then_text("The oracle says 42.");
    let root = LlmAgent::builder("root")
        .model(model.clone())
        .tool(tool)
        .build()
        .unwrap();
    let runner = runner("local_app", Arc::new(root));
    let events = run(&runner, "s-1", "Ask the oracle").await.unwrap();

    let responses: Vec<Value> = events
        .iter()
        .flat_map(|event| event.function_responses())
        .map(|response| Value::Object(response.response.clone()))
        .collect();
    assert_eq!(responses, [json!({"result": "42"})]);
    assert_eq!(texts_by(&events, "root"), ["The oracle says 42."]);
}

#[tokio::test(flavor = "multi_thread")]
async fn input_required_is_answered_through_the_confirmation_flow() {
    // This bank is trusted to ask for confirmations in the local agent's name.
    let (runner, transfers) = local_app_with_remote_bank(true).await;

    let paused = run(&runner, "s-1", "Send 500 to Bob").await.unwrap();
    let request = paused
        .iter()
        .filter(|event| event.author == "bank")
        .find(|event| {
            event
                .long_running_tool_ids
                .as_ref()
                .is_some_and(|ids| !ids.is_empty())
        })
        .expect("the remote pause is a long-running call of the remote agent");
    let call = request
        .function_calls()
        .find(|call| call.name == "adk_request_confirmation")
        .expect("the remote agent asks for a confirmation");
    assert_eq!(
        call.args["originalFunctionCall"]["args"],
        json!({"amount": 500})
    );
    assert_eq!(transfers.load(Ordering::SeqCst), 0);

    let answer = FunctionResponse::new("adk_request_confirmation", json!({"confirmed": true}))
        .with_id(call.id.clone().unwrap());
    let done: Vec<_> = runner
        .run_request(RunRequest::new("ada", "s-1").function_responses([answer]))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(texts_by(&done, "bank"), ["Sent 500."]);
    assert_eq!(transfers.load(Ordering::SeqCst), 1);
    // The answer went to the same remote task.
    let task_of = |event: &adk_core::Event| {
        event
            .response
            .custom_metadata
            .as_ref()
            .map(|m| m["a2a:task_id"].clone())
    };
    assert_eq!(task_of(request), task_of(done.last().unwrap()));
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_run_cancels_the_remote_task() {
    let stopped = Arc::new(tokio::sync::Notify::new());
    let stopped_in_tool = stopped.clone();
    let slow = adk_tool::FunctionTool::new(
        "slow",
        "Takes forever.",
        move |_ctx: adk_tool::ToolContext, _args: Value| {
            let stopped = stopped_in_tool.clone();
            async move {
                let _stopped = NotifyOnDrop(stopped);
                std::future::pending::<()>().await;
                Ok::<_, String>(json!("never"))
            }
        },
    );
    let model = ScriptedModel::new("remote").then_call("slow", json!({}));
    let worker = LlmAgent::builder("worker")
        .model(model)
        .tool(slow)
        .build()
        .unwrap();
    let base_url = serve(runner("remote_app", Arc::new(worker))).await;

    let runner = runner("local_app", remote("worker", &base_url));
    let mut events = Box::pin(runner.run("ada", "s-1", "work"));
    // The remote agent's call of its tool arrives as a thought: the remote task is running.
    loop {
        let event = tokio::time::timeout(PATIENCE, events.next())
            .await
            .expect("the remote task reports its tool call")
            .unwrap()
            .unwrap();
        if event.function_calls().any(|call| call.name == "slow") {
            break;
        }
    }
    drop(events);
    // The remote tool is stopped only because the remote task was cancelled.
    tokio::time::timeout(PATIENCE, stopped.notified())
        .await
        .expect("the remote task is cancelled");
}

/// Notifies when dropped.
struct NotifyOnDrop(Arc<tokio::sync::Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

fn frame(result: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"jsonrpc": "2.0", "id": "r", "result": result})
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agent_that_dies_mid_stream_ends_the_run_with_a_typed_error_and_keeps_the_events()
{
    let body = [
        frame(json!({"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "submitted"}})),
        frame(json!({"kind": "status-update", "taskId": "t-1", "contextId": "c-1", "final": false,
            "status": {"state": "working", "message": {"kind": "message", "role": "agent", "messageId": "m-1",
                "parts": [{"kind": "text", "text": "Looking it up"}]}}})),
    ]
    .concat();
    let mock = MockServer::start([MockResponse::sse(&body)]).await;
    let card = AgentCard::new("flaky", "Dies.", mock.base_url());
    let flaky = RemoteA2aAgent::builder("flaky").card(card).build().unwrap();
    let runner = runner("local_app", Arc::new(flaky));

    // The stream ends cleanly but before the task finished.
    let (events, error) = run_until_error(&runner, "s-1", Content::user("look it up")).await;
    let error = error.expect("the run fails");
    assert!(
        matches!(error.downcast_source::<A2aError>(), Some(A2aError::StreamEnded { task, .. }) if task == "t-1"),
        "{error}"
    );
    assert_eq!(events.len(), 1);
    let session = runner
        .session_service()
        .get_session(GetSessionRequest::new(SessionKey::new(
            "local_app",
            "ada",
            "s-1",
        )))
        .await
        .unwrap()
        .unwrap();
    let kept: Vec<&str> = session
        .events
        .iter()
        .map(|event| event.author.as_str())
        .collect();
    assert_eq!(kept, ["user", "flaky"]);
    assert_eq!(
        session.events[1].content().unwrap().parts[0].as_text(),
        Some("Looking it up")
    );

    // The connection is cut mid-body.
    let cutting = MockServer::start([MockResponse::sse(&body).cut()]).await;
    let card = AgentCard::new("flaky", "Dies.", cutting.base_url());
    let flaky = RemoteA2aAgent::builder("flaky").card(card).build().unwrap();
    let runner = support::runner("local_app", Arc::new(flaky));
    let (_, error) = run_until_error(&runner, "s-2", Content::user("again")).await;
    let error = error.expect("the run fails");
    assert!(
        matches!(
            error.downcast_source::<A2aError>(),
            Some(A2aError::Transport { .. })
        ),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bearer_tokens_and_custom_headers_are_sent() {
    use axum::extract::Request;
    use axum::middleware::Next;
    use axum::response::IntoResponse as _;

    let model = ScriptedModel::new("remote").then_text("Welcome.");
    let vault = LlmAgent::builder("vault").model(model).build().unwrap();
    let server = A2aServer::builder(runner("vault_app", Arc::new(vault)))
        .build()
        .unwrap();
    let router = server.router().layer(axum::middleware::from_fn(
        |request: Request, next: Next| async move {
            let headers = request.headers();
            if headers
                .get("authorization")
                .is_some_and(|value| value == "Bearer s3cret")
                && headers.get("x-tenant").is_some_and(|value| value == "acme")
            {
                next.run(request).await
            } else {
                http::StatusCode::UNAUTHORIZED.into_response()
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let refused = A2aClient::resolve_card(&base_url, &ClientConfig::default())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, A2aError::Http { status: 401, .. }),
        "{refused}"
    );

    let config = ClientConfig::default()
        .bearer_token("s3cret")
        .header("x-tenant", "acme");
    let agent = RemoteA2aAgent::builder("vault")
        .card_url(&base_url)
        .client_config(config)
        .build()
        .unwrap();
    let runner = runner("local_app", Arc::new(agent));
    let events = run(&runner, "s-1", "Open").await.unwrap();
    assert_eq!(texts_by(&events, "vault"), ["Welcome."]);
}

#[tokio::test(flavor = "multi_thread")]
async fn responses_over_the_size_limit_are_refused() {
    let model = ScriptedModel::new("remote").then_text(&"long answer ".repeat(100));
    let talker = LlmAgent::builder("talker").model(model).build().unwrap();
    let base_url = serve(runner("app", Arc::new(talker))).await;
    let small = ClientConfig::default().max_response_bytes(200);
    let error = A2aClient::resolve_card(&base_url, &small)
        .await
        .unwrap_err();
    assert!(
        matches!(error, A2aError::ResponseTooLarge { limit: 200, .. }),
        "{error}"
    );

    let card = A2aClient::resolve_card(&base_url, &ClientConfig::default())
        .await
        .unwrap();
    let client =
        A2aClient::from_card(&card, ClientConfig::default().max_response_bytes(600)).unwrap();
    let message = Message::new(Role::User, vec![Part::text("talk")]);
    let mut events = client
        .send_message_streaming(MessageSendParams::new(message))
        .await
        .unwrap();
    let mut failure = None;
    while let Some(item) = events.next().await {
        if let Err(error) = item {
            failure = Some(error);
            break;
        }
    }
    assert!(
        matches!(failure, Some(A2aError::ResponseTooLarge { limit: 600, .. })),
        "{failure:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn only_connect_errors_are_retried() {
    let nobody = format!("http://127.0.0.1:{}/", free_port());
    let config = ClientConfig::default()
        .connect_retries(2)
        .retry_backoff(Duration::from_millis(1));
    let client = A2aClient::new(&nobody, config.clone()).unwrap();
    let message = || MessageSendParams::new(Message::new(Role::User, vec![Part::text("hi")]));
    let error = client.send_message(message()).await.unwrap_err();
    assert!(
        matches!(error, A2aError::Connect { attempts: 3, .. }),
        "{error}"
    );

    // Once the server took the request, a failure is not retried: it may have acted on it.
    let mock = MockServer::start([
        MockResponse::new(200, "{").cut(),
        MockResponse::new(200, "{}"),
    ])
    .await;
    let client = A2aClient::new(mock.base_url(), config).unwrap();
    let error = client.send_message(message()).await.unwrap_err();
    assert!(matches!(error, A2aError::Transport { .. }), "{error}");
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(mock.remaining(), 1);
}

#[tokio::test]
async fn cards_without_a_url_or_of_another_version_are_typed_errors() {
    let error = RemoteA2aAgent::builder("remote")
        .card(AgentCard::new("remote", "", " "))
        .build()
        .unwrap_err();
    assert!(matches!(error, A2aError::CardWithoutUrl { .. }), "{error}");
    let mut card = AgentCard::new("remote", "", "http://127.0.0.1:1/");
    card.protocol_version = "1.0".to_owned();
    let error = RemoteA2aAgent::builder("remote")
        .card(card)
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("\"1.0\""), "{error}");
    let error = RemoteA2aAgent::builder("not a name")
        .card_url("http://x")
        .build()
        .unwrap_err();
    assert!(matches!(error, A2aError::Config(_)), "{error}");

    // A card URL that serves a card without a URL fails the run with the same typed error.
    let mock = MockServer::start([MockResponse::json(
        200,
        &serde_json::to_value(AgentCard::new("remote", "", "")).unwrap(),
    )])
    .await;
    let runner = runner("app", remote("remote", &mock.base_url()));
    let (_, error) = run_until_error(&runner, "s-1", Content::user("hi")).await;
    let error = error.expect("the run fails");
    assert_eq!(error.kind(), adk_core::ErrorKind::Config);
    assert!(
        matches!(
            error.downcast_source::<A2aError>(),
            Some(A2aError::CardWithoutUrl { .. })
        ),
        "{error}"
    );
}
