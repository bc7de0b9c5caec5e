//! The real adk-web dev UI in a real browser: headless Chromium, driven over WebDriver, opens
//! `/dev-ui/`, chooses the app, sends a message, sees the tool call and the answer, opens the event
//! and trace panels, draws a workflow app's graph, and in the Evals tab makes an eval set, adds the
//! session to it, runs it and shows the result with its scores. Screenshots go to the test's
//! output folder; the assertions read the DOM.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use adk_core::{Content, FinishReason, LlmResponse};
use adk_server::{ServerConfig, dev_ui};
use adk_test::ScriptedModel;
use adk_test::browser::Browser;
use serde_json::json;
use support::{APP, TestServer};

/// How long the UI may take to show something before the test gives up (a guard against hangs).
const PATIENCE: Duration = Duration::from_secs(120);

/// Measures the page's icons once its fonts are loaded: for each (up to 8) icon with a ligature
/// name, the width its text is drawn at and the width of the same name in an ordinary font; and
/// whether each icon font in use is loaded.
const MEASURE_ICONS: &str = r#"
if (document.fonts.status !== 'loaded') return null;
const icons = [...document.querySelectorAll('mat-icon, .material-icons, .material-symbols-outlined')]
  .filter((icon) => icon.getBoundingClientRect().width > 0 && icon.textContent.trim().length > 3);
if (icons.length === 0) return null;
const measured = icons.slice(0, 8).map((icon) => {
  const style = getComputedStyle(icon);
  const drawn = document.createRange();
  drawn.selectNodeContents(icon);
  const probe = document.createElement('span');
  probe.style.cssText = `position:absolute;white-space:nowrap;font-family:sans-serif;font-size:${style.fontSize}`;
  probe.textContent = icon.textContent.trim();
  document.body.appendChild(probe);
  const ligature = probe.getBoundingClientRect().width;
  probe.remove();
  return {name: icon.textContent.trim(), family: style.fontFamily, drawn: drawn.getBoundingClientRect().width, ligature};
});
const families = [...new Set(measured.map((icon) => icon.family.split(',')[0].trim()))];
return {icons: measured, loaded: families.map((family) => [family, document.fonts.check(`24px ${family}`)])};
"#;

/// Whether the page drew text in Google Sans from the UI's own folder: a face of the family
/// loaded, and none failed.
const TEXT_FONT_LOADED: &str = r#"
if (document.fonts.status !== 'loaded') return null;
const faces = [...document.fonts].filter((face) => face.family.replace(/['"]/g, '') === 'Google Sans');
const loaded = faces.filter((face) => face.status === 'loaded');
if (loaded.length === 0) return null;
return {loaded: loaded.length, failed: faces.filter((face) => face.status === 'error').length};
"#;

/// Asserts that the icon fonts loaded (from the UI's own folder: the test machine has no
/// internet): an icon is drawn about as wide as it is tall, not as wide as its name written out.
/// The text font, Google Sans, loaded from there too.
async fn assert_icons_are_drawn(browser: &Browser) {
    let text = browser
        .wait_for(TEXT_FONT_LOADED, "Google Sans loaded", PATIENCE)
        .await;
    assert_eq!(
        text["failed"], 0,
        "a Google Sans face failed to load: {text}"
    );
    let measured = browser
        .wait_for(MEASURE_ICONS, "the page's icons and fonts", PATIENCE)
        .await;
    for family in measured["loaded"].as_array().expect("the fonts in use") {
        assert_eq!(family[1], true, "{} is not loaded: {measured}", family[0]);
    }
    for icon in measured["icons"].as_array().expect("the icons measured") {
        let drawn = icon["drawn"].as_f64().expect("a width");
        let ligature = icon["ligature"].as_f64().expect("a width");
        assert!(
            drawn < ligature * 0.75,
            "icon {} is drawn {drawn}px wide, about its name's width {ligature}px: the icon font \
             did not load ({measured})",
            icon["name"]
        );
    }
}

fn screenshots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("adk-server-browser")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dev_ui_chats_with_an_agent_and_shows_its_events_and_trace() {
    let dir = dev_ui::default_dir().expect("a user cache directory");
    let dir = dev_ui::fetch(&dir).await.expect("the dev UI is fetched");
    let mut answer = LlmResponse::new(Content::model("It is sunny in Paris."));
    answer.finish_reason = Some(FinishReason::Stop);
    answer.turn_complete = Some(true);
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then(answer);
    let server = TestServer::start_with(model, ServerConfig::default().dev_ui_dir(dir)).await;
    let browser = Browser::start(1400, 900).await;

    browser
        .goto(&server.url(&format!("/dev-ui/?app={APP}")))
        .await;
    browser
        .send_chat_message("What is the weather in Paris?", PATIENCE)
        .await;
    browser
        .wait_for_text("It is sunny in Paris.", PATIENCE)
        .await;
    let text = browser.text().await;
    assert!(text.contains("What is the weather in Paris?"), "{text}");
    assert!(
        text.contains("get_weather"),
        "the tool call is shown: {text}"
    );
    browser
        .screenshot(&screenshots().join("2-answered.png"))
        .await;
    assert_icons_are_drawn(&browser).await;

    // The events panel: as with ADK 2.x's server, the UI first draws the app's graph from
    // `build_graph_image` (the agent and its tools), then the info tab shows the function-call
    // event's details.
    browser.click_text("#2").await;
    browser.wait_for_text("Event 2 of 4", PATIENCE).await;
    browser.wait_for_text("wait_forever", PATIENCE).await;
    browser.screenshot(&screenshots().join("3-graph.png")).await;
    browser.click_text("info").await;
    browser.wait_for_text("Function Calls", PATIENCE).await;
    let text = browser.text().await;
    assert!(text.contains("Function Calls"), "{text}");
    assert!(text.contains("weather_agent"), "{text}");
    browser.screenshot(&screenshots().join("3-event.png")).await;

    // The trace panel: the invocation's spans from the server's span store.
    browser.click_text("Traces").await;
    browser
        .wait_for_text("generate_content scripted", PATIENCE)
        .await;
    let text = browser.text().await;
    let trace = &text[text
        .find("Total latency")
        .expect("the trace's total latency")..];
    // The span tree in order: the agent, its first step (model call, then the tool), its second.
    let rows: Vec<&str> = trace
        .lines()
        .map(str::trim)
        .filter(|line| {
            [
                "weather_agent",
                "call_llm",
                "generate_content scripted",
                "get_weather",
            ]
            .contains(line)
        })
        .collect();
    assert_eq!(
        rows,
        [
            "weather_agent",
            "call_llm",
            "generate_content scripted",
            "get_weather",
            "call_llm",
            "generate_content scripted"
        ],
        "{trace}"
    );
    browser.screenshot(&screenshots().join("4-trace.png")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dev_ui_draws_a_workflow_and_the_node_of_an_event() {
    let dir = dev_ui::default_dir().expect("a user cache directory");
    let dir = dev_ui::fetch(&dir).await.expect("the dev UI is fetched");
    let model = ScriptedModel::new("scripted").then_text("Written up.");
    let server = TestServer::start_workflow(model, ServerConfig::default().dev_ui_dir(dir)).await;
    let browser = Browser::start(1400, 900).await;
    browser
        .goto(&server.url(&format!("/dev-ui/?app={APP}")))
        .await;
    browser.send_chat_message("a long message", PATIENCE).await;
    browser.wait_for_text("Written up.", PATIENCE).await;
    // Opening an event draws the workflow from `build_graph_image`: its nodes, the
    // join and the routes.
    browser.click_text("#1").await;
    browser.wait_for_text("gather", PATIENCE).await;
    let text = browser.text().await;
    for node in [
        "classify", "fetch_a", "fetch_b", "gather", "writer", "inner_wf",
    ] {
        assert!(text.contains(node), "{node} is drawn: {text}");
    }
    browser
        .screenshot(&screenshots().join("5-workflow.png"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_evals_tab_makes_a_set_from_the_session_runs_it_and_shows_the_scores() {
    let dir = dev_ui::default_dir().expect("a user cache directory");
    let dir = dev_ui::fetch(&dir).await.expect("the dev UI is fetched");
    // The conversation, then the same turn again when the eval replays it.
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.");
    let server = TestServer::start_with(model, ServerConfig::default().dev_ui_dir(dir)).await;
    let browser = Browser::start(1400, 900).await;
    browser
        .goto(&server.url(&format!("/dev-ui/?app={APP}")))
        .await;
    browser
        .send_chat_message("What is the weather in Paris?", PATIENCE)
        .await;
    browser
        .wait_for_text("It is sunny in Paris.", PATIENCE)
        .await;

    // A new eval set, named in the dialog, and the current session added as a case.
    browser
        .add_session_to_new_eval_set("weather_checks", "paris", PATIENCE)
        .await;
    assert!(
        server
            .eval_dir()
            .join(format!("{APP}/weather_checks.evalset.json"))
            .exists()
    );
    browser
        .screenshot(&screenshots().join("6-eval-case.png"))
        .await;

    // Run it with the metrics the dialog proposes (tool trajectory 1.0, response match 0.7).
    browser.click_text("Run All").await;
    browser.wait_for_text("Reset to Default", PATIENCE).await;
    let text = browser.text().await;
    assert!(text.contains("Tool Trajectory"), "{text}");
    assert!(text.contains("Response Match"), "{text}");
    browser.click_text("Run").await;
    browser.wait_for_text("1 PASS", PATIENCE).await;
    let text = browser.text().await;
    let result = &text[text.find("1 PASS").expect("the result row")..];
    let row: Vec<&str> = result.lines().map(str::trim).take(7).collect();
    assert_eq!(
        row,
        [
            "1 PASS",
            "Tool Trajectory",
            ": 1.00",
            "Response Match",
            ": 0.70",
            "paris",
            "2/2"
        ],
        "{text}"
    );
    // The run's turns, from its session in the app's session service, each marked as passed.
    browser
        .wait_for(
            "return document.body.innerText.split('\\n').filter((line) => line.trim() === 'PASS').length >= 3;",
            "the eval run's turns, each passed",
            PATIENCE,
        )
        .await;
    let text = browser.text().await;
    assert!(!text.contains("produced no conversation turns"), "{text}");
    // The run's scores beside its thresholds.
    assert!(text.contains("1.00\n/ 1.00"), "{text}");
    assert!(text.contains("1.00\n/ 0.70"), "{text}");
    browser
        .screenshot(&screenshots().join("7-eval-result.png"))
        .await;
}
