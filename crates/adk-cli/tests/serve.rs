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
