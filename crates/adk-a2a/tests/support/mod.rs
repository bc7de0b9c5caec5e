//! What the A2A tests share: apps served over A2A on loopback, the Python peers run as child
//! processes, and Gemini-shaped answers for ADK Python's loopback model.

#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener as StdListener;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use adk_a2a::A2aServer;
use adk_core::{Agent, Content, Event, Result};
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use adk_test::MockResponse;
use futures::{StreamExt as _, TryStreamExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// A runner of `agent` in app `app`, with sessions in memory, created on first use.
pub fn runner(app: &str, agent: Arc<dyn Agent>) -> Runner {
    Runner::builder(app, agent, InMemorySessionService::new())
        .auto_create_session(true)
        .build()
        .unwrap()
}

/// `runner`'s app served over A2A on a free loopback port, until the test ends; its base URL.
pub async fn serve(runner: Runner) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::builder(runner).build().unwrap();
    tokio::spawn(adk_a2a::serve_listener(
        server,
        listener,
        std::future::pending(),
    ));
    base_url
}

/// Runs `message` through `runner` in session `session` of user `ada`, collecting the events, or
/// the error that ended the run.
pub async fn run(runner: &Runner, session: &str, message: &str) -> Result<Vec<Event>> {
    runner.run("ada", session, message).try_collect().await
}

/// The events of a run up to the error that ended it, and that error.
pub async fn run_until_error(
    runner: &Runner,
    session: &str,
    message: Content,
) -> (Vec<Event>, Option<adk_core::Error>) {
    let mut events = Vec::new();
    let mut stream = std::pin::pin!(runner.run("ada", session, message));
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// A file of `tests/peers`.
pub fn peer_script(name: &str) -> PathBuf {
    adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// A free loopback port.
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Python peer listening on a port; killed when dropped.
pub struct PythonServer {
    child: Child,
    pub port: u16,
}

impl PythonServer {
    /// Starts `script` with `args` (after the port) and waits until it accepts connections.
    pub async fn start(script: &str, args: &[&str]) -> Self {
        let port = free_port();
        let mut command = Command::from(adk_test::python_peers::a2a_peers().command());
        let mut child = command
            .arg(peer_script(script))
            .arg(port.to_string())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the peers' Python starts");
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    use tokio::io::AsyncReadExt as _;
                    pipe.read_to_string(&mut stderr).await.unwrap();
                }
                panic!("{script} exited with {status} before listening:\n{stderr}");
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Self { child, port }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// Runs `script` with `args` to its end and returns the JSON lines it printed; panics with its
/// error output when it fails.
pub async fn run_python(script: &str, args: &[&str]) -> Vec<Value> {
    let mut command = Command::from(adk_test::python_peers::a2a_peers().command());
    let output = command
        .arg(peer_script(script))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the peers' Python runs");
    assert!(
        output.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json_lines(&output.stdout).await
}

async fn json_lines(bytes: &[u8]) -> Vec<Value> {
    let mut lines = BufReader::new(bytes).lines();
    let mut values = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Ok(value) = serde_json::from_str::<Value>(&line) {
            values.push(value);
        }
    }
    values
}

/// A Gemini `generateContent` answer holding `parts`.
pub fn gemini(parts: Value) -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "candidates": [{
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0
            }],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-flash"
        }),
    )
}

/// A Gemini answer of one text part.
pub fn gemini_text(text: &str) -> MockResponse {
    gemini(json!([{"text": text}]))
}

/// A Gemini answer calling `name` with `args`.
pub fn gemini_call(name: &str, args: Value) -> MockResponse {
    gemini(json!([{"functionCall": {"name": name, "args": args}}]))
}

/// The texts of the non-partial events by `author`, in order.
pub fn texts_by(events: &[Event], author: &str) -> Vec<String> {
    events
        .iter()
        .filter(|event| event.author == author && !event.is_partial())
        .filter_map(|event| {
            let content = event.content()?;
            let text: String = content
                .parts
                .iter()
                .filter(|part| !part.thought)
                .filter_map(|part| part.as_text())
                .collect();
            (!text.is_empty()).then_some(text)
        })
        .collect()
}

/// A payments agent whose `transfer` tool needs the user's confirmation: its model calls the tool
/// with `{"amount": 500}`, then says `Sent 500.` once the transfer ran. The counter counts the
/// transfers that ran.
pub fn payments_agent(name: &str) -> (Arc<dyn Agent>, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Transfer {
        amount: u32,
    }
    let transfers = Arc::new(AtomicUsize::new(0));
    let counter = transfers.clone();
    let tool = adk_tool::FunctionTool::builder(
        "transfer",
        "Transfers money.",
        move |_ctx, args: Transfer| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>(json!({"sent": args.amount}))
            }
        },
    )
    .require_confirmation(true)
    .build();
    let model = adk_test::ScriptedModel::new("scripted")
        .then_call("transfer", json!({"amount": 500}))
        .then_text("Sent 500.");
    let agent = adk_flow::LlmAgent::builder(name)
        .description("Sends money.")
        .model(model)
        .tool(tool)
        .build()
        .unwrap();
    (Arc::new(agent), transfers)
}

/// A local app whose root agent hands the user's message to a [`payments_agent`] served over A2A
/// as `bank`; `allow_remote_prompts` says whether the bank may ask for confirmations in the local
/// agent's name. The counter counts the bank's transfers.
pub async fn local_app_with_remote_bank(
    allow_remote_prompts: bool,
) -> (Runner, Arc<std::sync::atomic::AtomicUsize>) {
    let (payments, transfers) = payments_agent("payments");
    let base_url = serve(runner("bank", payments)).await;
    let model = adk_test::ScriptedModel::new("local")
        .then_call("transfer_to_agent", json!({"agent_name": "bank"}));
    let bank = adk_a2a::RemoteA2aAgent::builder("bank")
        .description("A remote bank.")
        .card_url(&base_url)
        .allow_remote_prompts(allow_remote_prompts)
        .build()
        .unwrap();
    let root = adk_flow::LlmAgent::builder("root")
        .model(Arc::new(model))
        .sub_agent(Arc::new(bank))
        .build()
        .unwrap();
    (runner("local_app", Arc::new(root)), transfers)
}

/// POSTs a JSON-RPC body to `url` and returns the JSON answer.
pub async fn post_json(url: &str, body: &str) -> Value {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
