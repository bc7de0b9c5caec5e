//! Inbound A2A behind the gate: a web page cannot make the agent run (no simple cross-site
//! request is read), a task belongs to the user that started it, and a reader that stops reading
//! holds neither the task nor its cancellation.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_a2a::A2aServer;
use adk_flow::LlmAgent;
use adk_test::{ClosureTool, EndlessModel, ScriptedModel};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

fn send_body(text: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }},
    })
}

fn greeter(model: &ScriptedModel) -> adk_runner::Runner {
    let agent = LlmAgent::builder("greeter")
        .description("Greets.")
        .model(Arc::new(model.clone()))
        .build()
        .unwrap();
    support::runner("greeter", Arc::new(agent))
}

#[tokio::test]
async fn security_inbound_a2a_a_cross_site_simple_request_runs_no_agent() {
    let model = ScriptedModel::new("scripted").then_text("Hello from the agent");
    let base = support::serve(greeter(&model)).await;
    let client = reqwest::Client::new();

    // What a page on another origin can send without a CORS preflight: text/plain, with its
    // Origin.
    let cross_site = client
        .post(format!("{base}/"))
        .header("origin", "https://evil.example")
        .header("content-type", "text/plain")
        .body(send_body("run for the page").to_string())
        .send()
        .await
        .unwrap();
    let status = cross_site.status().as_u16();
    let text = cross_site.text().await.unwrap();
    assert!(
        status == 403 || status == 415,
        "a cross-site simple request is refused: {status} {text}"
    );
    assert!(!text.contains("Hello from the agent"), "{text}");

    // Same-site but not JSON: still not read.
    let plain = client
        .post(format!("{base}/"))
        .header("content-type", "text/plain")
        .body(send_body("run").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 415);
    // A foreign origin sending JSON (after a preflight nobody answered yes to) is refused too.
    let foreign_json = client
        .post(format!("{base}/"))
        .header("origin", "https://evil.example")
        .json(&send_body("run"))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign_json.status(), 403);
    assert!(model.requests().is_empty(), "no agent ran");

    // The agent's own clients still get through.
    let answer: Value = client
        .post(format!("{base}/"))
        .json(&send_body("hello"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"]["status"]["state"], "completed", "{answer}");
}

/// Reads from `stream` until `needle` has been seen, returning what was read.
async fn read_until(stream: &mut tokio::net::TcpStream, needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut buffer))
            .await
            .expect("the server answers")
            .unwrap();
        assert!(read > 0, "the connection closed before {needle:?}");
        seen.extend_from_slice(&buffer[..read]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

// Two workers, so that the server answers while the endless run keeps one busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_inbound_a2a_tasks_cancel_does_not_wait_for_a_task_blocked_on_a_slow_reader() {
    // An agent that works forever, each step sending a large event (the model's call carries
    // 32 KiB), so that the buffers between the run and a reader that stopped fill quickly.
    let model = EndlessModel::calling("fetch", 32 * 1024);
    let agent = LlmAgent::builder("worker")
        .description("Works forever.")
        // Each step sees only its own turn, so that steps stay cheap however long the run is.
        .include_contents(adk_flow::IncludeContents::None)
        .model(Arc::new(model.clone()))
        .tool(ClosureTool::shared("fetch", |_ctx, args| {
            Ok(json!({"n": args["n"]}))
        }))
        .build()
        .unwrap();
    // The default limit of 500 model calls is far more than the buffers hold.
    let base = support::serve(support::runner("worker", Arc::new(agent))).await;
    let address = base.trim_start_matches("http://").to_owned();

    // A stream whose reader takes the first event (to learn the task) and then reads no more,
    // with a small receive buffer so that little fills it.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut reader = socket.connect(address.parse().unwrap()).await.unwrap();
    let mut body = send_body("work");
    body["method"] = json!("message/stream");
    let body = body.to_string();
    let request = format!(
        "POST / HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    reader.write_all(request.as_bytes()).await.unwrap();
    // The first event is the task.
    let first = read_until(&mut reader, "}\n\n").await;
    let frame = first
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an SSE frame");
    let event: Value = serde_json::from_str(frame).unwrap();
    assert_eq!(event["result"]["kind"], "task", "{event}");
    let task_id = event["result"]["id"].as_str().unwrap().to_owned();

    // The run fills every buffer between it and the reader, then waits: the model is called no
    // more.
    let mut last = model.calls();
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = model.calls();
            if now == last && now > 0 {
                break;
            }
            last = now;
        }
    })
    .await;
    waited.expect("the run waits for its reader");

    let cancel =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"id": task_id}});
    let answer = tokio::time::timeout(
        PATIENCE,
        reqwest::Client::new()
            .post(format!("{base}/"))
            .json(&cancel)
            .send(),
    )
    .await
    .expect("tasks/cancel answers though the task's reader reads nothing")
    .unwrap();
    let answer: Value = answer.json().await.unwrap();
    assert_eq!(answer["result"]["status"]["state"], "canceled", "{answer}");
    drop(reader);
}

#[tokio::test]
async fn a_server_built_alone_answers_only_its_loopback_names() {
    let model = ScriptedModel::new("scripted");
    let server = A2aServer::builder(greeter(&model)).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(adk_a2a::serve_listener(
        server,
        listener,
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let card = format!("{base}/.well-known/agent-card.json");
    assert_eq!(client.get(&card).send().await.unwrap().status(), 200);
    let rebound = client
        .get(&card)
        .header("host", "evil.test:8001")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
}
