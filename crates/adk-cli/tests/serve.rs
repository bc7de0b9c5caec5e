//! `adk api_server` and `adk web`: the bundled agents served over HTTP by the real binary, a run
//! through the API against a loopback model, and a graceful stop on SIGTERM.

mod support;

use std::time::Duration;

use adk_test::MockServer;
use serde_json::{Value, json};
use support::{completion, json_answer, serve};
use tokio::process::Command;

/// `adk` with `args` against the loopback `model`.
fn adk_on(model: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .args(args)
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_MODEL", "mock-model");
    command
}

#[tokio::test]
async fn api_server_serves_every_bundled_agent_and_stops_on_sigterm() {
    let model = MockServer::start([
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "get_weather",
                "arguments": "{\"city\":\"Paris\"}"}}]}),
            "tool_calls",
        ),
        completion(
            json!({"role": "assistant", "content": "It is sunny in Paris."}),
            "stop",
        ),
    ])
    .await;
    let served = serve(adk_on(&model, &["api_server"]), Duration::from_secs(120)).await;
    assert!(
        served
            .banner
            .contains("quickstart, multi_agent, pipeline, confirmation"),
        "{}",
        served.banner
    );
    let client = reqwest::Client::new();
    let apps: Value = json_answer(client.get(format!("{}/list-apps", served.base))).await;
    assert_eq!(
        apps,
        json!([
            "confirmation",
            "multi_agent",
            "oauth_mail",
            "orchestrator",
            "pipeline",
            "quickstart",
            "workflow"
        ])
    );
    // Without the UI, `/` is not served.
    let root = client
        .get(format!("{}/", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), 404);

    let created = client
        .post(format!(
            "{}/apps/quickstart/users/ada/sessions",
            served.base
        ))
        .json(&json!({"sessionId": "s1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    let events: Vec<Value> =
        json_answer(client.post(format!("{}/run", served.base)).json(&json!({
            "appName": "quickstart", "userId": "ada", "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        })))
        .await;
    let summary: Vec<String> = events
        .iter()
        .map(|event| event["content"]["parts"][0].to_string())
        .collect();
    assert_eq!(events.len(), 3, "{summary:#?}");
    assert_eq!(
        events[0]["content"]["parts"][0]["functionCall"]["name"],
        "get_weather"
    );
    assert_eq!(
        events[1]["content"]["parts"][0]["functionResponse"]["response"]["sky"],
        "sunny"
    );
    assert_eq!(
        events[2]["content"]["parts"][0]["text"],
        "It is sunny in Paris."
    );
    // The plain root agent's events carry its node path, as ADK 2.x's do.
    for event in &events {
        assert_eq!(event["nodeInfo"]["path"], "weather_agent@1", "{event}");
    }

    // The workflow example's graph, as the dev UI asks for it: nodes, edges and a DOT drawing.
    let graph: Value =
        json_answer(client.get(format!("{}/dev/apps/workflow/build_graph", served.base))).await;
    let root = &graph["root_agent"];
    assert_eq!(root["type"], "workflow");
    let nodes: Vec<&str> = root["graph"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        nodes,
        [
            "__START__",
            "intake",
            "weather_scout",
            "sights_scout",
            "small_talk",
            "gather",
            "planner"
        ]
    );
    let images: Value = json_answer(client.get(format!(
        "{}/dev/apps/workflow/build_graph_image?dark_mode=true",
        served.base
    )))
    .await;
    let dot = images[""]["dotSrc"].as_str().unwrap();
    assert!(
        dot.contains("intake -> weather_scout [label=\"  trip\"]"),
        "{dot}"
    );
    assert!(dot.contains("gather -> planner"), "{dot}");

    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
    assert!(rest.contains("adk: stopped"), "{rest}");
}

#[tokio::test]
async fn an_unknown_service_uri_is_a_one_line_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_adk"))
        .args(["api_server", "--session-service-uri", "redis://localhost"])
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unsupported session service URI 'redis://localhost'"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a2a_serves_one_agent_with_its_card_and_json_rpc() {
    let model = MockServer::start([completion(
        json!({"role": "assistant", "content": "Hello from the quickstart."}),
        "stop",
    )])
    .await;
    let served = serve(
        adk_on(&model, &["a2a", "quickstart"]),
        Duration::from_secs(120),
    )
    .await;
    assert!(
        served.banner.contains("serving quickstart over A2A"),
        "{}",
        served.banner
    );
    let client = reqwest::Client::new();
    let card: Value =
        json_answer(client.get(format!("{}/.well-known/agent-card.json", served.base))).await;
    assert_eq!(card["name"], "weather_agent");
    assert_eq!(card["url"], format!("{}/", served.base));
    let answer: Value = json_answer(client.post(format!("{}/", served.base)).json(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {
            "kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "Hello"}],
        }},
    })))
    .await;
    assert_eq!(answer["result"]["status"]["state"], "completed", "{answer}");
    assert!(
        answer.to_string().contains("Hello from the quickstart."),
        "{answer}"
    );

    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

#[tokio::test]
async fn security_identity_a_server_on_a_network_address_refuses_to_start_without_authentication() {
    let model = MockServer::start([]).await;
    // Open on every interface: refused, before anything is served.
    let refused = adk_on(
        &model,
        &[
            "api_server",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--in-memory",
        ],
    )
    .env("ADK_NO_LOCAL_MODEL", "true")
    .output()
    .await
    .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("without authentication"), "{stderr}");

    // Said so explicitly: served, with a warning.
    let open = serve(
        adk_on(
            &model,
            &["api_server", "--host", "0.0.0.0", "--allow-unauthenticated"],
        ),
        Duration::from_secs(120),
    )
    .await;
    assert!(open.banner.contains("no authentication"), "{}", open.banner);
    let (success, rest) = open.terminate().await;
    assert!(success, "{rest}");

    // With API keys: every caller authenticated, each reaching its own user only.
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("api-keys");
    // The SHA-256 of "test".
    std::fs::write(
        &keys,
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 ada\n",
    )
    .unwrap();
    let served = serve(
        adk_on(
            &model,
            &[
                "api_server",
                "--host",
                "0.0.0.0",
                "--api-keys-file",
                keys.to_str().unwrap(),
            ],
        ),
        Duration::from_secs(120),
    )
    .await;
    assert!(
        served.banner.contains("callers authenticated"),
        "{}",
        served.banner
    );
    let base = served.base.replace("0.0.0.0", "127.0.0.1");
    let client = reqwest::Client::new();
    let sessions = |user: &str| format!("{base}/apps/quickstart/users/{user}/sessions");
    let anonymous = client.get(sessions("ada")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let own = client
        .get(sessions("ada"))
        .bearer_auth("test")
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    let other = client
        .get(sessions("bob"))
        .bearer_auth("test")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 403);
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

#[tokio::test]
async fn a_server_checks_its_jwt_flags_at_start() {
    let issuer = adk_test::TestIssuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, issuer.jwks().to_string()).unwrap();
    let model = MockServer::start([]).await;
    let flags = |file: &str| {
        vec![
            "api_server".to_owned(),
            "--jwks-file".to_owned(),
            file.to_owned(),
            "--jwt-issuer".to_owned(),
            adk_test::TestIssuer::ISSUER.to_owned(),
            "--jwt-audience".to_owned(),
            adk_test::TestIssuer::AUDIENCE.to_owned(),
        ]
    };
    // A key set that cannot be read stops the server at once.
    let missing = flags("/nonexistent/jwks.json");
    let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
    let output = adk_on(&model, &missing)
        .args(["--port", "0", "--in-memory"])
        .env("ADK_NO_LOCAL_MODEL", "true")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("JWT key set"),
        "{output:?}"
    );

    let good = flags(jwks.to_str().unwrap());
    let good: Vec<&str> = good.iter().map(String::as_str).collect();
    let served = serve(adk_on(&model, &good), Duration::from_secs(120)).await;
    let token = issuer.token(jsonwebtoken::Algorithm::EdDSA, &issuer.claims("ada"));
    let answer = reqwest::Client::new()
        .get(format!(
            "{}/apps/quickstart/users/ada/sessions",
            served.base
        ))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}
