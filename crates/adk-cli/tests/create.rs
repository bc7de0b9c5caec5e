//! `adk create`: the scaffolds it writes build, their test passes, and the new binary runs its
//! agent through the launcher against a loopback model.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use adk_test::{MockResponse, MockServer};
use serde_json::json;
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

/// The workspace this test runs in.
fn workspace() -> PathBuf {
    adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

/// Runs `adk create` with `args` in `dir`; returns its stdout.
async fn create(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_adk"))
        .arg("create")
        .args(args)
        .current_dir(dir)
        .output()
        .await
        .expect("adk create runs");
    assert!(
        output.status.success(),
        "adk create failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A cargo command in `project`, building into this workspace's target directory with its lock
/// file, so that the dependencies compiled for the workspace are reused and nothing is fetched.
fn cargo(project: &Path, subcommand: &str, args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    command
        .args([subcommand, "--offline"])
        .args(args)
        .current_dir(project)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS");
    command
}

#[tokio::test]
async fn a_yaml_scaffold_is_a_root_agent_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let said = create(
        dir.path(),
        &["helper", "--yaml", "--model", "gemini-2.5-flash"],
    )
    .await;
    assert!(said.contains("created helper/root_agent.yaml"), "{said}");
    let yaml = std::fs::read_to_string(dir.path().join("helper/root_agent.yaml")).unwrap();
    assert!(
        yaml.contains("name: helper\nmodel: gemini-2.5-flash\n"),
        "{yaml}"
    );
    assert!(yaml.contains("\ninstruction: "), "{yaml}");
}

#[tokio::test]
async fn an_existing_folder_or_a_bad_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    for (name, message) in [
        ("taken", "taken already exists"),
        ("Bad/Name", "is not a project name"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_adk"))
            .args(["create", name])
            .current_dir(dir.path())
            .output()
            .await
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cargo_scaffold_builds_passes_its_test_and_runs_its_agent() {
    let dir = tempfile::tempdir().unwrap();
    let facade = workspace().join("crates/adk");
    let said = create(
        dir.path(),
        &["weather-bot", "--adk-path", facade.to_str().unwrap()],
    )
    .await;
    assert!(
        said.contains("created the Cargo project weather-bot"),
        "{said}"
    );
    let project = dir.path().join("weather-bot");
    let main = std::fs::read_to_string(project.join("src/main.rs")).unwrap();
    // The scaffold's whole program is a few lines on the launcher.
    let code_lines = main
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with("//"))
        .count();
    assert!(code_lines <= 10, "{main}");
    // The tool is a function under `#[adk::tool]`, and the test runs on `adk::testing`'s
    // scripted model: the scaffold shows the shortest way, not a hand-written double.
    let lib = std::fs::read_to_string(project.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("#[adk::tool]") && !lib.contains("Arc::new"),
        "{lib}"
    );
    let test = std::fs::read_to_string(project.join("tests/agent.rs")).unwrap();
    assert!(test.contains("adk::testing::ScriptedModel"), "{test}");
    assert!(!test.contains("impl Llm for"), "{test}");
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let tested = cargo(&project, "test", &["--quiet"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&tested.stdout);
    assert!(
        tested.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");

    // The binary talks to its agent: a tool call, the tool's answer, then the model's text.
    let server = MockServer::start([
        MockResponse::json(
            200,
            &json!({
                "id": "c1", "object": "chat.completion", "created": 1, "model": "mock-model",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                    "type": "function", "function": {"name": "get_weather",
                    "arguments": "{\"city\":\"Tokyo\"}"}}]}}],
            }),
        ),
        MockResponse::json(
            200,
            &json!({
                "id": "c2", "object": "chat.completion", "created": 1, "model": "mock-model",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "It is rainy in Tokyo."}}],
            }),
        ),
    ])
    .await;
    let mut child = cargo(
        &project,
        "run",
        &["--quiet", "--", "run", "--no-stream", "--in-memory"],
    )
    .env("OPENAI_BASE_URL", server.base_url())
    .env("OPENAI_API_KEY", "test-key")
    .env("OPENAI_MODEL", "mock-model")
    .env_remove("GOOGLE_API_KEY")
    .env_remove("GEMINI_API_KEY")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"What is the weather in Tokyo?\n")
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(600), child.wait_with_output())
        .await
        .expect("the scaffold's binary finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("-> weather_bot calls get_weather({\"city\":\"Tokyo\"})"),
        "{stdout}"
    );
    assert!(
        stdout.contains("<- get_weather: {\"city\":\"Tokyo\",\"sky\":\"rainy\"}"),
        "{stdout}"
    );
    assert!(
        stdout.contains("weather_bot> It is rainy in Tokyo."),
        "{stdout}"
    );
}
