//! `adk eval` on the bundled quickstart, against a loopback server that answers in OpenAI's Chat
//! Completions format: the criteria beside the eval set, the per-case table, the result file, the
//! exit code when a case fails, and the error for a malformed eval set. Then `adk eval_set create`
//! and `add_eval_case`: where the set is kept, the messages and exit codes, and google-adk 2.13's
//! own commands reading what they wrote and naming the same scenarios the same way.

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

/// Two conversation scenarios in ADK's file format: one in plain ASCII without a persona, one
/// with accents, CJK and an emoji and a persona, so the ids depend on Python's escaping.
const SCENARIOS: &str = r#"{"scenarios": [
  {"starting_prompt": "What is the weather in Paris?",
   "conversation_plan": "Ask for Paris, then Tokyo, then stop."},
  {"starting_prompt": "Quel temps fait-il à Zürich ? ☀",
   "conversation_plan": "Demande la météo à Zürich, puis à 東京, puis arrête. 🌧",
   "user_persona": {"id": "terse", "description": "Dit peu de mots.", "behaviors": [
     {"name": "short", "description": "Réponses courtes.",
      "behavior_instructions": ["Cinq mots au plus."],
      "violation_rubrics": ["Un message de plus de cinq mots."]}]}}
]}"#;

/// The ids ADK gives the cases of [`SCENARIOS`] (checked against google-adk below).
const SCENARIO_IDS: [&str; 2] = ["73ff7a9d", "0402a4f0"];

/// Runs `adk eval_set <args>` in `dir`.
fn adk_eval_set(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_adk"))
        .arg("eval_set")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("adk runs")
}

/// A folder `weather` under `dir`, the scenarios and a session input beside it; their paths.
fn eval_set_inputs(dir: &Path) -> (String, String, String) {
    let agent = dir.join("weather");
    std::fs::create_dir_all(&agent).unwrap();
    let scenarios = dir.join("scenarios.json");
    std::fs::write(&scenarios, SCENARIOS).unwrap();
    let session = dir.join("session_input.json");
    std::fs::write(
        &session,
        r#"{"app_name": "weather", "user_id": "eval_user", "state": {"units": "metric"}}"#,
    )
    .unwrap();
    let path = |path: &Path| path.to_str().unwrap().to_owned();
    (path(&agent), path(&scenarios), path(&session))
}

/// The ids of the cases an `add_eval_case` run reports, in order, with whether each was added.
fn reported_cases(stdout: &str) -> Vec<(String, bool)> {
    stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("Eval case '")?;
            let (id, after) = rest.split_once('\'')?;
            Some((id.to_owned(), after.contains(" added ")))
        })
        .collect()
}

#[test]
fn eval_set_create_and_add_eval_case_keep_the_set_in_the_apps_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, scenarios, session) = eval_set_inputs(dir.path());
    let add = [
        "add_eval_case",
        agent.as_str(),
        "smoke",
        "--scenarios_file",
        scenarios.as_str(),
        "--session_input_file",
        session.as_str(),
    ];

    // Adding to a set that does not exist fails and writes nothing.
    let missing = adk_eval_set(dir.path(), &add);
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("no eval set `smoke`"),
        "{}",
        text(&missing.stderr)
    );

    let created = adk_eval_set(dir.path(), &["create", &agent, "smoke"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert_eq!(
        text(&created.stdout),
        "Eval set 'smoke' created for app 'weather'.\n"
    );
    let file = dir.path().join("weather/smoke.evalset.json");
    assert!(file.is_file());

    let again = adk_eval_set(dir.path(), &["create", &agent, "smoke"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );
    let bad_id = adk_eval_set(dir.path(), &["create", &agent, "not-an-id"]);
    assert_eq!(bad_id.status.code(), Some(1));
    assert!(
        text(&bad_id.stderr).contains("ASCII letters, digits and `_`"),
        "{}",
        text(&bad_id.stderr)
    );

    let added = adk_eval_set(dir.path(), &add);
    assert!(added.status.success(), "{}", text(&added.stderr));
    assert_eq!(
        reported_cases(&text(&added.stdout)),
        SCENARIO_IDS.map(|id| (id.to_owned(), true))
    );
    let skipped = adk_eval_set(dir.path(), &add);
    assert!(skipped.status.success(), "{}", text(&skipped.stderr));
    assert_eq!(
        reported_cases(&text(&skipped.stdout)),
        SCENARIO_IDS.map(|id| (id.to_owned(), false))
    );

    let set: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let cases = set["eval_cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(
        cases[1]["conversation_scenario"]["user_persona"]["id"],
        "terse"
    );
    assert_eq!(cases[1]["session_input"]["state"]["units"], "metric");

    // A program app's sets are kept where `adk web` keeps them without an agents folder, and
    // `--eval-storage-uri` moves them.
    let bundled = adk_eval_set(dir.path(), &["create", "quickstart", "smoke"]);
    assert!(bundled.status.success(), "{}", text(&bundled.stderr));
    assert!(
        dir.path()
            .join(".adk/evals/quickstart/smoke.evalset.json")
            .is_file()
    );
    let elsewhere = format!("file://{}", dir.path().join("elsewhere").display());
    let moved = adk_eval_set(
        dir.path(),
        &[
            "create",
            "quickstart",
            "smoke",
            "--eval-storage-uri",
            &elsewhere,
        ],
    );
    assert!(moved.status.success(), "{}", text(&moved.stderr));
    assert!(
        dir.path()
            .join("elsewhere/quickstart/smoke.evalset.json")
            .is_file()
    );
}

/// google-adk 2.13's own `adk eval_set` commands, run on the set `adk eval_set` wrote: they find
/// every case already there (so they read the file and name each scenario alike), and on a
/// fresh set of their own they give the cases the ids adk-rs gives them; its eval sets manager
/// reads the cases' scenarios and session input back.
#[test]
fn google_adk_reads_the_cases_and_names_the_scenarios_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, scenarios, session) = eval_set_inputs(dir.path());
    let ours = dir.path().to_str().unwrap().to_owned();
    assert!(
        adk_eval_set(dir.path(), &["create", &agent, "smoke"])
            .status
            .success()
    );
    let added = adk_eval_set(
        dir.path(),
        &[
            "add_eval_case",
            &agent,
            "smoke",
            "--scenarios_file",
            &scenarios,
            "--session_input_file",
            &session,
        ],
    );
    assert!(added.status.success(), "{}", text(&added.stderr));

    let peers = adk_test::python_peers::a2a_peers();
    let python_adk = |args: &[&str]| {
        let output = peers
            .command()
            .args(["-m", "google.adk.cli", "eval_set"])
            .args(args)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("python runs");
        assert!(
            output.status.success(),
            "google-adk eval_set {args:?} failed:\n{}\n{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        text(&output.stdout)
    };
    let add_args = |agent: &str| {
        [
            "add_eval_case".to_owned(),
            agent.to_owned(),
            "smoke".to_owned(),
            "--scenarios_file".to_owned(),
            scenarios.clone(),
            "--session_input_file".to_owned(),
            session.clone(),
        ]
    };

    let on_ours = python_adk(&add_args(&agent).each_ref().map(String::as_str));
    assert_eq!(
        reported_cases(&on_ours),
        SCENARIO_IDS.map(|id| (id.to_owned(), false)),
        "{on_ours}"
    );

    let theirs = dir.path().join("python/weather");
    std::fs::create_dir_all(&theirs).unwrap();
    let theirs = theirs.to_str().unwrap();
    python_adk(&["create", theirs, "smoke"]);
    let on_theirs = python_adk(&add_args(theirs).each_ref().map(String::as_str));
    assert_eq!(
        reported_cases(&on_theirs),
        SCENARIO_IDS.map(|id| (id.to_owned(), true)),
        "{on_theirs}"
    );

    let read = peers
        .command()
        .arg("-c")
        .arg(
            "import json, sys\n\
             from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager\n\
             s = LocalEvalSetsManager(agents_dir=sys.argv[1]).get_eval_set('weather', 'smoke')\n\
             print(json.dumps([[c.eval_id, c.conversation_scenario.starting_prompt,\n\
               c.conversation_scenario.user_persona.id if c.conversation_scenario.user_persona else None,\n\
               c.session_input.user_id, c.session_input.state] for c in s.eval_cases]))",
        )
        .arg(&ours)
        .output()
        .expect("python runs");
    assert!(read.status.success(), "{}", text(&read.stderr));
    let cases: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(
        cases,
        json!([
            ["73ff7a9d", "What is the weather in Paris?", null, "eval_user", {"units": "metric"}],
            ["0402a4f0", "Quel temps fait-il à Zürich ? ☀", "terse", "eval_user", {"units": "metric"}]
        ])
    );
}
