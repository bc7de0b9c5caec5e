//! Cancelling a run by its invocation's id (`POST .../sessions/{session}/cancel`): on the server
//! running it, and from another replica sharing its PostgreSQL (sessions and session locks). The
//! run's tool waits until cancelled; afterwards the stream has ended with the cancellation and the
//! stored session is consistent: the call answered as cancelled, a last event saying so, nothing
//! half-stored.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_core::{InvocationId, Session};
use adk_flow::LlmAgent;
use adk_runner::{CANCELLED_ERROR_CODE, Runner};
use adk_server::ServerConfig;
use adk_session::PostgresSettings;
use adk_test::ScriptedModel;
use serde_json::{Value, json};
use support::{APP, BlockingTool, TestServer, USER, eventually, run_body, sse_events};
use tokio::sync::Notify;

/// The cancel route of session `session`.
fn cancel_path(session: &str) -> String {
    format!("/apps/{APP}/users/{USER}/sessions/{session}/cancel")
}

/// A model that calls `wait_forever`, then would answer (it never gets to).
fn waiting_model() -> ScriptedModel {
    ScriptedModel::new("scripted")
        .then_call("wait_forever", json!({}))
        .then_text("never sent")
}

/// The stored session after a cancelled run: the user's message, the call, its answer as
/// cancelled, and the event that ends the invocation; returns the invocation.
fn assert_ended_cancelled(stored: &Session) -> InvocationId {
    let events = &stored.events;
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(events[0].author, "user");
    let call = events[1].function_calls().next().expect("the model's call");
    let answer = events[2]
        .function_responses()
        .next()
        .expect("the call answered");
    assert_eq!(answer.id, call.id);
    assert!(
        answer.response["error"]
            .as_str()
            .unwrap()
            .starts_with("cancelled"),
        "{answer:?}"
    );
    assert_eq!(
        events[3].response.error_code.as_deref(),
        Some(CANCELLED_ERROR_CODE)
    );
    assert_eq!(events[3].actions.end_of_agent, Some(true));
    assert!(events.iter().all(|event| !event.is_partial()));
    assert!(
        events
            .iter()
            .all(|event| event.invocation_id == events[0].invocation_id),
        "one invocation"
    );
    events[0].invocation_id.clone()
}

#[tokio::test]
async fn a_run_cancelled_by_id_ends_its_stream_and_leaves_the_session_consistent() {
    let server = TestServer::start(waiting_model()).await;
    server.create_session("s").await;
    let response = server
        .client
        .post(server.url("/run_sse"))
        .json(&run_body("s", "wait"))
        .send()
        .await
        .unwrap();
    eventually(server.tool_started.notified(), "the tool starting").await;
    let invocation = server.stored("s").await.events[0].invocation_id.clone();

    let (status, answer) = server
        .post(&cancel_path("s"), json!({"invocationId": invocation}))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["invocationId"], json!(invocation));
    assert_eq!(answer["cancelled"], true);
    eventually(server.tool_cancelled.notified(), "the tool's cancellation").await;

    // The stream ends: the call, its cancelled answer, the ending event, then an error frame.
    let body = tokio::time::timeout(Duration::from_secs(60), response.text())
        .await
        .expect("the stream ends")
        .unwrap();
    let frames = sse_events(&body);
    assert_eq!(frames.len(), 4, "{body}");
    assert_eq!(frames[2]["errorCode"], CANCELLED_ERROR_CODE);
    assert!(
        frames[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("Cancelled:"),
        "{body}"
    );
    let stored = server.stored("s").await;
    assert_eq!(assert_ended_cancelled(&stored), invocation);
    assert_eq!(
        server.model.remaining(),
        1,
        "the model was not called again"
    );

    // Cancelling again changes nothing; an unknown invocation is a 404; the session goes on.
    let (status, again) = server.post(&cancel_path("s"), json!({})).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["cancelled"], true);
    assert_eq!(server.stored("s").await.events.len(), 4);
    let (status, _) = server
        .post(&cancel_path("s"), json!({"invocationId": "e-nope"}))
        .await;
    assert_eq!(status, 404);
    let (status, events) = server.post("/run", run_body("s", "hello")).await;
    assert_eq!(status, 200, "{events}");
    assert_eq!(events[0]["content"]["parts"][0]["text"], "never sent");
}

#[tokio::test]
async fn an_invocation_that_ended_is_not_cancelled() {
    let server = TestServer::start(ScriptedModel::new("scripted").then_text("It is sunny")).await;
    server.create_session("s").await;
    let (status, _) = server.post("/run", run_body("s", "weather?")).await;
    assert_eq!(status, 200);
    let (status, answer) = server.post(&cancel_path("s"), Value::Null).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["cancelled"], false);
    assert_eq!(answer["events"], json!([]));
    assert_eq!(server.stored("s").await.events.len(), 2, "nothing stored");
}

/// A replica of app `weather` on PostgreSQL: sessions and session locks shared with the others.
async fn replica(url: &str, model: &ScriptedModel) -> TestServer {
    let settings = PostgresSettings::new(url);
    let sessions = settings.connect_sessions().await.unwrap();
    let locks = settings
        .connect_locks(8, Duration::from_secs(60))
        .await
        .unwrap();
    let agent = LlmAgent::builder("weather_agent")
        .model(model.clone())
        .tool(BlockingTool {
            started: Arc::new(Notify::new()),
            cancelled: Arc::new(Notify::new()),
        })
        .build()
        .unwrap();
    let runner = Runner::builder(APP, agent, sessions)
        .auto_create_session(true)
        .build()
        .unwrap();
    TestServer::start_app(
        runner,
        model.clone(),
        ServerConfig::default().session_locks(Arc::new(locks)),
    )
    .await
}

#[tokio::test]
async fn a_run_is_cancelled_through_another_replica_on_postgres() {
    let Some(url) = adk_test::postgres_url() else {
        return;
    };
    let model = waiting_model();
    let running = replica(&url, &model).await;
    let other = replica(&url, &model).await;
    let session = format!("cancel-{}", uuid_like());
    let run = {
        let request = running
            .client
            .post(running.url("/run"))
            .json(&run_body(&session, "wait"))
            .send();
        tokio::spawn(request)
    };
    // The call is stored once the tool runs: wait for it in the shared store.
    let invocation = loop {
        if let Some(stored) = running
            .runner
            .session(USER, session.as_str())
            .await
            .unwrap()
            .filter(|stored| stored.events.len() == 2)
        {
            break stored.events[0].invocation_id.clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let (status, answer) = tokio::time::timeout(
        Duration::from_secs(60),
        other.post(&cancel_path(&session), json!({"invocationId": invocation})),
    )
    .await
    .expect("the cancel is answered");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["cancelled"], true);

    // The replica running it stopped, ended the invocation and answered its events.
    let response = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run ends")
        .unwrap()
        .unwrap();
    let (status, events) = support::status_and_json(response).await;
    assert_eq!(status, 200, "{events}");
    let events = events.as_array().unwrap();
    assert_eq!(
        events.last().unwrap()["errorCode"],
        CANCELLED_ERROR_CODE,
        "{events:?}"
    );
    let stored = other
        .runner
        .session(USER, session.as_str())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(assert_ended_cancelled(&stored), invocation);
    assert_eq!(model.remaining(), 1, "the model was not called again");
}

/// A session id no other run of the test database has.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{nanos:x}-{}", std::process::id())
}
