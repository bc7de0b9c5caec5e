//! End to end with no key: `adk web` on the local model (built once into the user cache, as the
//! local-model tests do), the real adk-web UI in headless Chromium, a message typed into it, and
//! the agent's answer shown. Only structure is asserted: what a small model says varies.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use adk_test::browser::Browser;
use serde_json::Value;
use support::{json_answer, serve};
use tokio::process::Command;

/// The first start builds llama.cpp (minutes on 2 cores); a guard against a hang, not a bound.
const BUILD_PATIENCE: Duration = Duration::from_secs(45 * 60);
/// How long the UI and the model may take to answer; a guard against a hang.
const PATIENCE: Duration = Duration::from_secs(300);

/// The final text answers of `app`'s sessions for the dev UI's user, as the API gives them.
async fn answers(client: &reqwest::Client, base: &str, app: &str) -> Vec<String> {
    let sessions: Vec<Value> =
        json_answer(client.get(format!("{base}/apps/{app}/users/user/sessions"))).await;
    let mut answers = Vec::new();
    for session in sessions {
        let id = session["id"].as_str().unwrap();
        let session: Value =
            json_answer(client.get(format!("{base}/apps/{app}/users/user/sessions/{id}"))).await;
        for event in session["events"].as_array().unwrap() {
            let text = event["content"]["parts"][0]["text"].as_str().unwrap_or("");
            if event["author"] != "user" && event["partial"] != true && !text.trim().is_empty() {
                answers.push(text.trim().to_owned());
            }
        }
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_typed_into_the_dev_ui_gets_an_answer_from_the_local_model() {
    // Eval sets and results go to the test's own folder, never the working directory.
    let evals = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .arg("web")
        .arg("--eval-storage-uri")
        .arg(evals.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ADK_NO_LOCAL_MODEL");
    let served = serve(command, BUILD_PATIENCE).await;
    assert!(served.banner.contains("smollm2"), "{}", served.banner);

    let browser = Browser::start(1400, 900).await;
    browser
        .goto(&format!("{}/dev-ui/?app=quickstart", served.base))
        .await;
    browser
        .send_chat_message("What is the weather in Paris?", PATIENCE)
        .await;

    // The answer is stored, and the UI shows it.
    let client = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let answer = loop {
        if let Some(answer) = answers(&client, &served.base, "quickstart").await.pop() {
            break answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answer was stored; the page shows:\n{}",
            browser.text().await
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let shown: String = answer.lines().next().unwrap().chars().take(40).collect();
    browser.wait_for_text(shown.trim(), PATIENCE).await;
    let text = browser.text().await;
    assert!(text.contains("What is the weather in Paris?"), "{text}");
    let screenshots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("adk-web-local-model");
    browser.screenshot(&screenshots.join("answered.png")).await;

    // The conversation becomes an eval case in the Evals tab, which replays it on the local model
    // and shows the scores (whether it passes is the model's affair; a result row is shown).
    browser
        .add_session_to_new_eval_set("weather_checks", "paris", PATIENCE)
        .await;
    browser.click_text("Run All").await;
    browser.wait_for_text("Reset to Default", PATIENCE).await;
    browser.click_text("Run").await;
    let row = browser
        .wait_for(
            "const line = document.body.innerText.split('\\n').find((l) => /^1 (PASS|FAIL)$/.test(l.trim()));
             return line ? line.trim() : null;",
            "the eval result row",
            PATIENCE,
        )
        .await;
    let text = browser.text().await;
    assert!(text.contains("Tool Trajectory"), "{row}: {text}");
    assert!(
        evals
            .path()
            .join("quickstart/weather_checks.evalset.json")
            .exists()
    );
    browser
        .screenshot(&screenshots.join("eval-result.png"))
        .await;

    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}
