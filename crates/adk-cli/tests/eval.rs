//! `adk eval` on the bundled quickstart, against a loopback server that answers in OpenAI's Chat
//! Completions format: the criteria beside the eval set, the per-case table, the result file, the
//! exit code when a case fails, and the error for a malformed eval set.

mod support;

use std::path::Path;
use std::process::Output;

use adk_test::{MockResponse, MockServer};
use serde_json::{Value, json};
use support::completion;
use tokio::process::Command;

fn says(text: &str) -> MockResponse {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

fn calls_get_weather(city: &str) -> MockResponse {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": json!({"city": city}).to_string()}
        }]}),
        "tool_calls",
    )
}

/// One eval case of ADK's format: the user's `text`, the expected answer and calls.
fn case(id: &str, text: &str, answer: &str, cities: &[&str]) -> Value {
    let tool_uses: Vec<Value> = cities
        .iter()
        .map(|city| json!({"name": "get_weather", "args": {"city": city}}))
        .collect();
    json!({
        "eval_id": id,
        "conversation": [{
            "invocation_id": format!("{id}-1"),
            "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]},
            "intermediate_data": {"tool_uses": tool_uses, "intermediate_responses": []}
        }],
        "session_input": {"app_name": "quickstart", "user_id": "eval_user", "state": {}}
    })
}

/// Writes the eval set `cases` and a `test_config.json` beside it into `dir`; returns the set's
/// path.
fn write_set(dir: &Path, cases: Vec<Value>) -> String {
    let set = json!({"eval_set_id": "weather", "name": "weather", "eval_cases": cases});
    let path = dir.join("weather.evalset.json");
    std::fs::write(&path, set.to_string()).unwrap();
    let criteria =
        json!({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}});
    std::fs::write(dir.join("test_config.json"), criteria.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Runs `adk eval quickstart <set>` in `dir` against `server`.
async fn adk_eval(dir: &Path, server: Option<&MockServer>, set: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .args(["eval", "quickstart", set, "--print-detailed-results"])
        .current_dir(dir)
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("ADK_PROVIDER")
        .env_remove("ADK_MODEL")
        .env("ADK_NO_LOCAL_MODEL", "true")
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_MODEL", "mock-model");
    match server {
        Some(server) => command.env("OPENAI_BASE_URL", server.base_url()),
        None => command.env_remove("OPENAI_BASE_URL"),
    };
    command.output().await.expect("adk runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_passing_set_prints_its_table_saves_its_result_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(
        dir.path(),
        vec![
            case(
                "paris",
                "What is the weather in Paris?",
                "It is sunny in Paris.",
                &["Paris"],
            ),
            case("hello", "Hello!", "Hello! Ask me about the weather.", &[]),
        ],
    );
    let server = MockServer::start([
        calls_get_weather("Paris"),
        says("It is sunny in Paris."),
        says("Hello! Ask me about the weather."),
    ])
    .await;

    let output = adk_eval(dir.path(), Some(&server), &set).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("response_match_score >= 0.5, tool_trajectory_avg_score >= 1"),
        "{stdout}"
    );
    assert!(stdout.contains("paris"), "{stdout}");
    assert!(stdout.contains("Tests passed: 2"), "{stdout}");
    assert!(
        stdout.contains(r#"actual calls:    get_weather({"city":"Paris"})"#),
        "{stdout}"
    );
    let saved: Vec<_> = std::fs::read_dir(dir.path().join(".adk/eval_history"))
        .expect("the results directory exists")
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].ends_with(".evalset_result.json"), "{saved:?}");
}

#[tokio::test]
async fn a_failed_case_makes_the_exit_code_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(
        dir.path(),
        vec![case(
            "tokyo",
            "What is the weather in Tokyo?",
            "It is rainy in Tokyo, 19 °C.",
            &["Tokyo"],
        )],
    );
    // The model answers without calling the tool.
    let server = MockServer::start([says("It is sunny in Tokyo.")]).await;

    let output = adk_eval(dir.path(), Some(&server), &set).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        !output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("Tests failed: 1"), "{stdout}");
    assert!(stderr.contains("1 of 1 eval cases failed"), "{stderr}");
}

#[tokio::test]
async fn a_malformed_eval_set_is_an_error_naming_the_file_and_the_json_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.evalset.json");
    std::fs::write(
        &path,
        r#"{"eval_set_id": "broken", "eval_cases": [{"eval_id": "a", "conversation": "not a list"}]}"#,
    )
    .unwrap();

    let output = adk_eval(dir.path(), None, path.to_str().unwrap()).await;
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("broken.evalset.json"), "{stderr}");
    assert!(stderr.contains("eval_cases[0].conversation"), "{stderr}");
}
