//! What the server's tests share: a server on loopback serving a weather agent on the scripted
//! model with SQLite sessions, in-memory artifacts and memory, and small HTTP helpers.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use adk_core::{FunctionDeclaration, GetSessionRequest, Part, Session, SessionKey};
use adk_flow::LlmAgent;
use adk_runner::Runner;
use adk_server::{Server, ServerConfig};
use adk_session::{
    InMemoryArtifactService, InMemoryMemoryService, InMemorySessionService, SqliteSessionService,
};
use adk_telemetry::span_store::SpanStore;
use adk_test::{ClosureTool, ScriptedModel};
use adk_tool::{Tool, ToolContext};
use adk_workflow::{Node, NodeError, NodeOutput, Routes, START, Workflow};
use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

pub(crate) const APP: &str = "weather";
pub(crate) const USER: &str = "ada";

/// One span store for the whole test binary, behind the global subscriber (tracing allows one).
pub(crate) fn span_store() -> SpanStore {
    static STORE: OnceLock<SpanStore> = OnceLock::new();
    STORE
        .get_or_init(|| {
            use tracing_subscriber::layer::SubscriberExt as _;
            let store = SpanStore::new(10_000);
            let subscriber = tracing_subscriber::registry().with(store.layer());
            tracing::subscriber::set_global_default(subscriber)
                .expect("no other global subscriber in this test binary");
            store
        })
        .clone()
}

/// A tool that waits until its run is cancelled, telling the test when it started and when the
/// cancellation reached it: its token fired or its future was dropped.
pub(crate) struct BlockingTool {
    pub(crate) started: Arc<Notify>,
    pub(crate) cancelled: Arc<Notify>,
}

#[async_trait]
impl Tool for BlockingTool {
    fn name(&self) -> &str {
        "wait_forever"
    }

    fn description(&self) -> &str {
        "Waits until cancelled."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new(
            "wait_forever",
            "Waits until cancelled.",
        ))
    }

    async fn run(&self, ctx: ToolContext, _args: Value) -> adk_core::Result<Value> {
        self.started.notify_one();
        let _on_drop = NotifyOnDrop(self.cancelled.clone());
        ctx.cancellation().cancelled().await;
        Ok(json!({"status": "cancelled"}))
    }
}

/// Notifies when dropped: at the end of the tool's run, or when its future is dropped with the run.
struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A tool that saves a text artifact named after its `name` argument.
struct SaveReportTool;

#[async_trait]
impl Tool for SaveReportTool {
    fn name(&self) -> &str {
        "save_report"
    }

    fn description(&self) -> &str {
        "Saves a report."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new("save_report", "Saves a report."))
    }

    async fn run(&self, ctx: ToolContext, _args: Value) -> adk_core::Result<Value> {
        let version = ctx
            .save_artifact("report.txt", Part::text("all sunny"))
            .await?;
        Ok(json!({"saved": "report.txt", "version": version}))
    }
}

/// A running server and what the tests look at.
pub(crate) struct TestServer {
    pub(crate) base: String,
    pub(crate) model: ScriptedModel,
    pub(crate) runner: Runner,
    pub(crate) server: Server,
    pub(crate) tool_started: Arc<Notify>,
    pub(crate) tool_cancelled: Arc<Notify>,
    pub(crate) client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<Result<(), adk_server::ServerError>>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    /// A server with the default settings.
    pub(crate) async fn start(model: ScriptedModel) -> Self {
        Self::start_with(model, ServerConfig::default()).await
    }

    /// A server on `model` with `config`: app `weather`, whose root agent has the tools
    /// `get_weather`, `save_report` and `wait_forever`, on SQLite sessions created on first use.
    pub(crate) async fn start_with(model: ScriptedModel, config: ServerConfig) -> Self {
        Self::start_serving(model, config, false).await
    }

    /// Like [`start_with`](Self::start_with), also serving the app over A2A when the `a2a` feature
    /// is on.
    pub(crate) async fn start_with_a2a(model: ScriptedModel, config: ServerConfig) -> Self {
        Self::start_serving(model, config, true).await
    }

    async fn start_serving(model: ScriptedModel, config: ServerConfig, a2a: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let sessions = SqliteSessionService::open(dir.path().join("sessions.db"))
            .await
            .unwrap();
        let started = Arc::new(Notify::new());
        let cancelled = Arc::new(Notify::new());
        let agent = LlmAgent::builder("weather_agent")
            .description("Answers questions about the weather.")
            .instruction("Answer about the weather in {user:city?}.")
            .model(model.clone())
            .tool(ClosureTool::shared("get_weather", |ctx, args| {
                ctx.set_state("user:last_city", args["city"].clone())?;
                Ok(json!({"sky": "sunny", "city": args["city"]}))
            }))
            .tool(SaveReportTool)
            .tool(ClosureTool::long_running("ask_approval", |_ctx, _args| {
                Ok(Value::Null)
            }))
            .tool(BlockingTool {
                started: started.clone(),
                cancelled: cancelled.clone(),
            })
            .output_key("answer")
            .build()
            .unwrap();
        let runner = Runner::builder(APP, agent, sessions)
            .artifact_service(InMemoryArtifactService::new())
            .memory_service(InMemoryMemoryService::new())
            .build()
            .unwrap();
        Self::serve(runner, model, config, a2a, dir, started, cancelled).await
    }

    /// App `weather` as a workflow: `classify` routes long messages to two fetchers joined by
    /// `gather` and a writer agent with a tool, anything else to the nested workflow `inner_wf`.
    pub(crate) async fn start_workflow(model: ScriptedModel, config: ServerConfig) -> Self {
        let classify = Node::function("classify", |text: String| async move {
            let output = NodeOutput::value(text.clone());
            Ok::<_, NodeError>(if text.len() > 5 {
                output.route("long")
            } else {
                output
            })
        });
        let fetch_a = Node::function("fetch_a", |text: String| async move {
            Ok::<_, NodeError>(format!("{text}-A"))
        });
        let fetch_b = Node::function("fetch_b", |text: String| async move {
            Ok::<_, NodeError>(format!("{text}-B"))
        });
        let writer = LlmAgent::builder("writer")
            .model(Arc::new(model.clone()))
            .instruction("Write it up.")
            .tool(ClosureTool::shared("lookup", |_ctx, _args| {
                Ok(json!({"found": true}))
            }))
            .build()
            .unwrap();
        let echo = Node::function("echo", |text: String| async move {
            Ok::<_, NodeError>(format!("short: {text}"))
        });
        let inner = Workflow::builder("inner_wf")
            .chain((START, &echo))
            .build()
            .unwrap();
        let root = Workflow::builder("router_wf")
            .description("Routes by length.")
            .chain((
                START,
                &classify,
                Routes::new()
                    .on("long", [&fetch_a, &fetch_b])
                    .otherwise(inner),
            ))
            .chain(([&fetch_a, &fetch_b], Node::join("gather"), writer))
            .build()
            .unwrap();
        let runner = Runner::builder(APP, Arc::new(root), InMemorySessionService::new())
            .build()
            .unwrap();
        Self::start_app(runner, model, config).await
    }

    /// A server with `config` on `runner`, an app of the test's own (`model` is what its agents
    /// call).
    pub(crate) async fn start_app(
        runner: Runner,
        model: ScriptedModel,
        config: ServerConfig,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (started, cancelled) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        Self::serve(runner, model, config, false, dir, started, cancelled).await
    }

    /// Serves `runner` on a loopback port until shut down.
    async fn serve(
        runner: Runner,
        model: ScriptedModel,
        config: ServerConfig,
        a2a: bool,
        dir: tempfile::TempDir,
        started: Arc<Notify>,
        cancelled: Arc<Notify>,
    ) -> Self {
        // Eval sets and results go to the test's own folder, never the working directory; the
        // scripted model also plays the user of scenario cases.
        let builder = Server::builder()
            .app(runner.clone())
            .eval_user_simulator(model.clone())
            .span_store(span_store())
            .config(config.eval_storage(dir.path().join("evals")));
        #[cfg(feature = "a2a")]
        let builder = builder.a2a(a2a);
        #[cfg(not(feature = "a2a"))]
        let _ = a2a;
        let server = builder.build().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, signal) = oneshot::channel::<()>();
        let serving = server.clone();
        let served = tokio::spawn(async move {
            serving
                .serve(listener, async {
                    let _ = signal.await;
                })
                .await
        });
        Self {
            base,
            model,
            runner,
            server,
            tool_started: started,
            tool_cancelled: cancelled,
            client: reqwest::Client::new(),
            shutdown: Some(shutdown),
            served: Some(served),
            _dir: dir,
        }
    }

    /// The folder of the server's eval sets and results.
    pub(crate) fn eval_dir(&self) -> std::path::PathBuf {
        self._dir.path().join("evals")
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET path` as JSON, with its status.
    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.client.get(self.url(path)).send().await.unwrap();
        status_and_json(response).await
    }

    /// `method path` with a JSON body, with the status and the JSON answer.
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> (u16, Value) {
        let response = self
            .client
            .request(method, self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        status_and_json(response).await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, body).await
    }

    /// Creates session `id` of the test user.
    pub(crate) async fn create_session(&self, id: &str) {
        let (status, _) = self
            .post(
                &format!("/apps/{APP}/users/{USER}/sessions"),
                json!({"sessionId": id}),
            )
            .await;
        assert_eq!(status, 200);
    }

    /// The stored session, read from the service (not over HTTP).
    pub(crate) async fn stored(&self, id: &str) -> Session {
        self.runner
            .session_service()
            .get_session(GetSessionRequest::new(SessionKey::new(APP, USER, id)))
            .await
            .unwrap()
            .unwrap()
    }

    /// The raw text of `POST /run_sse` with `body`.
    pub(crate) async fn run_sse_text(&self, body: Value) -> (u16, String) {
        let response = self
            .client
            .post(self.url("/run_sse"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    /// Signals shutdown without waiting for `serve` to return.
    pub(crate) fn signal_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }

    /// Signals shutdown and waits for `serve` to return.
    pub(crate) async fn shut_down(&mut self) -> Result<(), adk_server::ServerError> {
        self.signal_shutdown();
        let served = self.served.take().expect("served once");
        tokio::time::timeout(Duration::from_secs(60), served)
            .await
            .expect("the server shuts down")
            .unwrap()
    }
}

/// Waits for `notified` without bounding how long a healthy run may take on a loaded machine: the
/// limit only turns a hang into a failure.
pub(crate) async fn eventually(notified: impl std::future::Future<Output = ()>, what: &str) {
    tokio::time::timeout(Duration::from_secs(120), notified)
        .await
        .unwrap_or_else(|_| panic!("{what} never happened"));
}

/// A run request body.
pub(crate) fn run_body(session: &str, text: &str) -> Value {
    json!({
        "appName": APP,
        "userId": USER,
        "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": text}]},
    })
}

pub(crate) async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let json = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, json)
}

/// The JSON values of the `data:` frames of an SSE body, checking the framing on the way: every
/// frame is exactly one `data: <json>` line followed by a blank line.
pub(crate) fn sse_events(body: &str) -> Vec<Value> {
    assert!(
        body.ends_with("\n\n"),
        "an SSE body ends with a blank line: {body:?}"
    );
    body.split_terminator("\n\n")
        .map(|frame| {
            let data = frame
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("a frame is one data line: {frame:?}"));
            assert!(!data.contains('\n'), "one line per frame: {frame:?}");
            serde_json::from_str(data).unwrap()
        })
        .collect()
}
