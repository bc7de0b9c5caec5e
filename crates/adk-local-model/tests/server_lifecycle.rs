//! The real server's lifecycle end to end: prepare, start, health, chat completions, stop on drop.
//!
//! These tests use the cache directory of [`LocalModelConfig::from_env`] (`ADK_LOCAL_MODEL_DIR`,
//! else `<user cache dir>/adk-rs/local-model`). When `llama-server` is not built there yet, the
//! first test to get the lock downloads the sources with pip and builds it, which takes about 15
//! minutes on 2 cores; CI on a persistent machine keeps the directory between runs, so later runs
//! start the server in about a second.

use std::time::{Duration, Instant};

use adk_local_model::{
    Error, LocalModel, LocalModelConfig, LocalServer, ProgressEvent, ServerOptions,
};
use serde_json::{Value, json};

/// The local model, downloaded and built if missing, with progress on standard error.
async fn local_model() -> LocalModel {
    let config = LocalModelConfig::from_env().expect("a cache directory");
    let progress = |event: &ProgressEvent| eprintln!("local model: {event:?}");
    LocalModel::ensure(config, &progress)
        .await
        .expect("the local model is ready")
}

/// Whether anything answers on the server's port.
async fn answers(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_ok()
}

/// POSTs `body` to the server's chat completions and returns the JSON answer.
async fn chat(server: &LocalServer, body: Value) -> Value {
    let url = format!("{}/chat/completions", server.base_url());
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(server.api_key())
        .json(&body)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 200);
    response.json().await.expect("a JSON body")
}

#[tokio::test]
async fn the_server_answers_and_dies_with_its_handle() {
    let model = local_model().await;
    let started = Instant::now();
    let server = model.start().await.expect("the server starts");
    eprintln!(
        "healthy after {:?} on {}",
        started.elapsed(),
        server.base_url()
    );
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(server.base_url().ends_with("/v1"));

    let health = reqwest::get(format!("{}/health", server.origin()))
        .await
        .expect("GET /health");
    assert_eq!(health.status(), 200);

    let answer = chat(
        &server,
        json!({
            "model": server.model_name(),
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 16,
        }),
    )
    .await;
    let message = &answer["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert!(
        message["content"]
            .as_str()
            .is_some_and(|text| !text.is_empty()),
        "{answer}"
    );
    assert!(
        answer["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{answer}"
    );

    let port = server.port();
    let pid = server.pid().expect("a running process");
    let log = server.log_path().to_path_buf();
    assert!(log.is_file(), "the server logs to {}", log.display());
    drop(server);
    assert!(
        !log.exists(),
        "the log of a server that ran well goes with it"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while answers(port).await {
        assert!(
            Instant::now() < deadline,
            "llama-server {pid} still answers after drop"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_server_enforces_a_json_schema() {
    let model = local_model().await;
    let server = model.start().await.expect("the server starts");
    let schema = json!({
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "tool": {"const": "get_weather"},
                    "args": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                },
                "required": ["tool", "args"],
                "additionalProperties": false,
            },
            {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
                "additionalProperties": false,
            },
        ],
    });
    let answer = chat(
        &server,
        json!({
            "messages": [
                {"role": "system", "content": "You can call the tool get_weather, whose arguments are {\"city\": <string>}. Reply with one JSON object: {\"tool\": \"get_weather\", \"args\": {\"city\": ...}} to call it, or {\"answer\": ...} to answer."},
                {"role": "user", "content": "What is the weather in Paris?"},
            ],
            "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
            "max_tokens": 200,
        }),
    )
    .await;
    assert_eq!(answer["choices"][0]["finish_reason"], "stop", "{answer}");
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .expect("text content");
    let reply: Value = serde_json::from_str(content).expect("the content is JSON");
    let object = reply.as_object().expect("a JSON object");
    let is_call =
        object.len() == 2 && reply["tool"] == "get_weather" && reply["args"]["city"].is_string();
    let is_answer = object.len() == 1 && reply["answer"].is_string();
    assert!(is_call || is_answer, "{content}");
    server.stop().await.expect("the server stops");
}

#[tokio::test]
async fn two_servers_run_side_by_side_and_a_taken_port_is_refused() {
    let model = local_model().await;
    let first = model.start().await.expect("the first server starts");
    let second = model.start().await.expect("the second server starts");
    assert_ne!(first.port(), second.port());
    assert!(answers(first.port()).await && answers(second.port()).await);

    let mut taken = ServerOptions::default();
    taken.port = first.port();
    let err = model
        .start_with(&taken)
        .await
        .expect_err("the port is taken");
    assert!(
        matches!(err, Error::PortInUse { port } if port == first.port()),
        "{err}"
    );
    assert!(err.to_string().contains("already in use"), "{err}");
}

#[tokio::test]
async fn review_15_the_server_answers_only_to_its_own_key_on_the_port_it_bound() {
    let model = local_model().await;
    let first = model.start().await.expect("the server starts");
    let second = model.start().await.expect("a second server starts");
    assert_ne!(
        first.api_key(),
        second.api_key(),
        "each server has its own key"
    );
    let models = format!("{}/models", first.base_url());
    let client = reqwest::Client::new();
    // Any local process, or a web page fetching loopback, sends no key or a guessed one.
    let anonymous = client.get(&models).send().await.expect("GET /v1/models");
    assert_eq!(anonymous.status(), 401);
    let guessed = client
        .get(&models)
        .bearer_auth(second.api_key())
        .send()
        .await
        .expect("GET /v1/models");
    assert_eq!(guessed.status(), 401);
    let owner = client
        .get(&models)
        .bearer_auth(first.api_key())
        .send()
        .await
        .expect("GET /v1/models");
    assert_eq!(owner.status(), 200);
    // The key never shows in the process's command line or its Debug output.
    let pid = first.pid().expect("a running process");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&cmdline).contains(first.api_key()));
    assert!(!format!("{first:?}").contains(first.api_key()));
    // The server bound the port itself: its log names the port the handle reports.
    let log = std::fs::read_to_string(first.log_path()).unwrap();
    assert!(
        log.contains(&format!("listening on http://127.0.0.1:{}", first.port())),
        "{log}"
    );
    assert!(String::from_utf8_lossy(&cmdline).contains("--port\u{0}0\u{0}"));
}
