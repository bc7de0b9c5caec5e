//! Agents described in YAML, with no compiling: `adk create --yaml` writes one, `adk run <folder>`
//! talks to it, `adk api_server <folder>` serves every app of a folder beside the bundled ones.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use adk_test::MockServer;
use serde_json::{Value, json};
use support::{chat_answer, json_answer, serve};
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

/// `adk` with `args` in `dir`, against the loopback `model`.
fn adk(dir: &Path, model: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .args(args)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("ADK_PROVIDER")
        .env_remove("ADK_MODEL")
        .env("ADK_NO_LOCAL_MODEL", "true");
    command
}

#[tokio::test]
async fn a_created_yaml_agent_runs_in_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let model = MockServer::start([chat_answer("Hello from YAML.")]).await;
    let created = adk(
        dir.path(),
        &model,
        &["create", "helper", "--yaml", "--model", "openai/mock-model"],
    )
    .output()
    .await
    .unwrap();
    assert!(created.status.success(), "{created:?}");

    let mut child = adk(
        dir.path(),
        &model,
        &["run", "helper", "--in-memory", "--no-stream"],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Hi\n").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("adk: helper on mock-model"), "{stdout}");
    assert!(stdout.contains("helper> Hello from YAML."), "{stdout}");
    // The model was asked with the instruction the YAML file holds.
    let sent = model.requests()[0].json();
    assert!(
        sent.to_string().contains("You are a helpful assistant."),
        "{sent}"
    );
}

#[tokio::test]
async fn a_bad_yaml_agent_is_an_error_naming_its_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("broken")).unwrap();
    std::fs::write(
        dir.path().join("broken/root_agent.yaml"),
        "name: broken\ninstruction: Be brief.\ntemperture: 0.5\n",
    )
    .unwrap();
    let model = MockServer::start([]).await;
    let output = adk(dir.path(), &model, &["run", "broken", "--in-memory"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("root_agent.yaml:3:1"), "{stderr}");
    assert!(stderr.contains("temperture"), "{stderr}");
}

#[tokio::test]
async fn api_server_serves_a_folder_of_yaml_agents_beside_the_bundled_ones() {
    let dir = tempfile::tempdir().unwrap();
    for (name, instruction) in [("greeter", "Greet the user."), ("poet", "Answer in verse.")] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(
            dir.path().join(name).join("root_agent.yaml"),
            format!("name: {name}\nmodel: openai/mock-model\ninstruction: {instruction}\n"),
        )
        .unwrap();
    }
    let model = MockServer::start([chat_answer("Roses are red.")]).await;
    let served = serve(
        adk(dir.path(), &model, &["api_server", "."]),
        Duration::from_secs(120),
    )
    .await;
    let client = reqwest::Client::new();
    let apps: Value = json_answer(client.get(format!("{}/list-apps", served.base))).await;
    let apps: Vec<&str> = apps
        .as_array()
        .unwrap()
        .iter()
        .map(|app| app.as_str().unwrap())
        .collect();
    assert!(
        apps.contains(&"greeter") && apps.contains(&"poet") && apps.contains(&"quickstart"),
        "{apps:?}"
    );

    client
        .post(format!("{}/apps/poet/users/ada/sessions", served.base))
        .json(&json!({"sessionId": "s1"}))
        .send()
        .await
        .unwrap();
    let events: Vec<Value> =
        json_answer(client.post(format!("{}/run", served.base)).json(&json!({
            "appName": "poet", "userId": "ada", "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": "A poem, please."}]},
        })))
        .await;
    assert_eq!(events[0]["author"], "poet");
    assert_eq!(events[0]["content"]["parts"][0]["text"], "Roses are red.");
    assert!(
        model.requests()[0]
            .json()
            .to_string()
            .contains("Answer in verse.")
    );
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

#[tokio::test]
async fn security_deploy_a_served_folder_starts_no_local_mcp_server_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tooled")).unwrap();
    std::fs::write(
        dir.path().join("tooled/root_agent.yaml"),
        "name: tooled\nmodel: openai/mock-model\ninstruction: Use the tools.\ntools:\n  - name: McpToolset\n    args:\n      stdio_server_params:\n        command: touch\n        args: [started]\n",
    )
    .unwrap();
    let model = MockServer::start([]).await;
    // Served, the folder's local MCP server is refused before anything starts.
    let refused = adk(
        dir.path(),
        &model,
        &["api_server", ".", "--port", "0", "--in-memory"],
    )
    .output()
    .await
    .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--allow-stdio-mcp"), "{stderr}");
    assert!(!dir.path().join("started").exists());

    // Allowed by the command line, the app is served (the server starts when first used).
    let served = serve(
        adk(
            dir.path(),
            &model,
            &["api_server", ".", "--allow-stdio-mcp"],
        ),
        Duration::from_secs(120),
    )
    .await;
    assert!(served.banner.contains("tooled"), "{}", served.banner);
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}
