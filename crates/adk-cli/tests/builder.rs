//! adk-web's Builder tab against `adk web`: an app described in YAML is read (its root file and a
//! sub-agent's), drafted, checked (a bad file is refused with its file, line and column, and
//! nothing changes), saved atomically and served rebuilt from the next run on; a new app is
//! drafted, checked and created in the agents folder, then listed and run; names that leave the
//! app's folder, apps not described in YAML and `adk api_server` are refused.

mod support;

use std::path::Path;
use std::time::Duration;

use adk_test::MockServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{chat_answer, json_answer, serve};
use tokio::process::Command;

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(180);

const ROOT: &str = "name: helper\nmodel: openai/mock-model\ninstruction: Answer briefly.\nsub_agents:\n  - config_path: ./poet.yaml\n";
const POET: &str = "name: poet\nmodel: openai/mock-model\ninstruction: Answer in verse.\n";

/// A folder of agents holding app `helper`: a root agent and a sub-agent in its own file.
fn agents() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("helper");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("root_agent.yaml"), ROOT).unwrap();
    std::fs::write(app.join("poet.yaml"), POET).unwrap();
    dir
}

/// `adk <command> .` in `dir`, against the loopback `model`.
fn adk(dir: &Path, model: &MockServer, command: &str) -> Command {
    let mut adk = Command::new(env!("CARGO_BIN_EXE_adk"));
    adk.args([command, "."])
        .current_dir(dir)
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env_remove("ADK_MODEL")
        .env("ADK_NO_LOCAL_MODEL", "true");
    adk
}

/// A multipart body of `files` (name, content) in the field `files`, as adk-web uploads them.
fn form(files: &[(&str, &str)]) -> (String, String) {
    let boundary = "----adk-builder-test-boundary".to_owned();
    let mut body = String::new();
    for (name, content) in files {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/x-yaml\r\n\r\n{content}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Posts `files` to the save route of `app` (`query` after `?`), answering status and body.
async fn save(base: &str, app: &str, query: &str, files: &[(&str, &str)]) -> (StatusCode, Value) {
    let (content_type, body) = form(files);
    let response = reqwest::Client::new()
        .post(format!("{base}/dev/apps/{app}/builder/save{query}"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Reads a file through the builder's read route (`query` after `?`).
async fn read(base: &str, app: &str, query: &str) -> (StatusCode, String) {
    let response = reqwest::get(format!("{base}/dev/apps/{app}/builder{query}"))
        .await
        .unwrap();
    (response.status(), response.text().await.unwrap())
}

/// The instruction the model was sent in request `index`.
fn instruction_sent(model: &MockServer, index: usize) -> String {
    model.requests()[index].json()["messages"][0]["content"].to_string()
}

async fn run(base: &str, session: &str) -> Vec<Value> {
    run_app(base, "helper", session).await
}

async fn run_app(base: &str, app: &str, session: &str) -> Vec<Value> {
    let client = reqwest::Client::new();
    client
        .post(format!("{base}/apps/{app}/users/ada/sessions"))
        .json(&json!({"sessionId": session}))
        .send()
        .await
        .unwrap();
    json_answer(client.post(format!("{base}/run")).json(&json!({
        "appName": app, "userId": "ada", "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": "Hello"}]},
    })))
    .await
}

/// The apps `/list-apps` names.
async fn listed(base: &str) -> Vec<String> {
    reqwest::get(format!("{base}/list-apps"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_builder_reads_checks_saves_and_serves_a_yaml_app_rebuilt() {
    let dir = agents();
    let app = dir.path().join("helper");
    let model = MockServer::start([chat_answer("Hi."), chat_answer("Hi again.")]).await;
    let served = serve(adk(dir.path(), &model, "web"), PATIENCE).await;
    let base = served.base.as_str();

    // The app's files, and its draft, made from them on first read.
    assert_eq!(
        read(base, "helper", "").await,
        (StatusCode::OK, ROOT.to_owned())
    );
    assert_eq!(
        read(base, "helper", "?file_path=poet.yaml&tmp=true").await,
        (StatusCode::OK, POET.to_owned())
    );
    assert!(app.join("tmp/helper/root_agent.yaml").is_file());
    assert_eq!(
        read(base, "helper", "?file_path=missing.yaml").await,
        (StatusCode::OK, String::new())
    );
    // An app not described in YAML has no files for the builder, so adk-web offers none.
    assert_eq!(
        read(base, "quickstart", "").await,
        (StatusCode::OK, String::new())
    );
    // The run before the change is sent the file's instruction.
    run(base, "before").await;
    assert!(instruction_sent(&model, 0).contains("Answer briefly."));

    // Names that leave the app's folder, or are not YAML files, are refused.
    for bad in [
        "../x.yaml",
        "/etc/passwd.yaml",
        "poet.py",
        "sub/../../x.yaml",
    ] {
        let (status, answer) = read(base, "helper", &format!("?file_path={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {answer}");
        let (status, answer) = save(base, "helper", "", &[(bad, "name: x\n")]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {answer}");
    }
    assert!(!dir.path().join("x.yaml").exists());
    // Saving an app not described in YAML is refused.
    let (status, answer) = save(
        base,
        "quickstart",
        "",
        &[("quickstart/root_agent.yaml", ROOT)],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");

    // A draft changes nothing of the app.
    let draft = ROOT.replace("Answer briefly.", "Answer in one word.");
    let (status, answer) = save(
        base,
        "helper",
        "?tmp=true",
        &[("helper/root_agent.yaml", &draft)],
    )
    .await;
    assert_eq!((status, answer), (StatusCode::OK, json!(true)));
    assert_eq!(read(base, "helper", "?tmp=true").await.1, draft);
    assert_eq!(
        std::fs::read_to_string(app.join("root_agent.yaml")).unwrap(),
        ROOT
    );

    // A file the loader refuses is answered with its file, line and column; nothing changes.
    let bad = POET.replace("instruction:", "instructions:");
    let (status, answer) = save(base, "helper", "", &[("helper/poet.yaml", &bad)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(detail.starts_with("poet.yaml:3:1: "), "{detail}");
    assert!(detail.contains("instructions"), "{detail}");
    assert_eq!(
        std::fs::read_to_string(app.join("poet.yaml")).unwrap(),
        POET
    );
    assert_eq!(
        std::fs::read_to_string(app.join("root_agent.yaml")).unwrap(),
        ROOT
    );
    let (status, answer) = save(
        base,
        "helper",
        "",
        &[("helper/root_agent.yaml", "name: [unclosed\n")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .starts_with("root_agent.yaml:"),
        "{answer}"
    );

    // The save: the draft and the upload written into the app, the draft gone, the app rebuilt.
    let (status, answer) = save(base, "helper", "", &[("helper/poet.yaml", POET)]).await;
    assert_eq!((status, answer), (StatusCode::OK, json!(true)));
    assert_eq!(
        std::fs::read_to_string(app.join("root_agent.yaml")).unwrap(),
        draft
    );
    assert!(!app.join("tmp").exists());
    let names: Vec<String> = std::fs::read_dir(&app)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
    run(base, "after").await;
    assert!(
        instruction_sent(&model, 1).contains("Answer in one word."),
        "{}",
        instruction_sent(&model, 1)
    );

    // Cancel drops a draft.
    read(base, "helper", "?tmp=true").await;
    let cancelled: Value =
        json_answer(reqwest::Client::new().post(format!("{base}/dev/apps/helper/builder/cancel")))
            .await;
    assert_eq!(cancelled, json!(true));
    assert!(!app.join("tmp").exists());
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

/// The root file adk-web's "Create new agent" dialog uploads for a new app (on the loopback
/// model instead of its `gemini-2.5-flash`).
const NEW_APP: &str = "name: fresh\nmodel: openai/mock-model\nagent_class: LlmAgent\ninstruction: You are the root agent that coordinates other agents.\nsub_agents: []\ntools: []\n";

#[tokio::test]
async fn the_builder_creates_a_new_app_in_the_agents_folder() {
    let dir = agents();
    let fresh = dir.path().join("fresh");
    let model = MockServer::start([chat_answer("Fresh hello.")]).await;
    let served = serve(adk(dir.path(), &model, "web"), PATIENCE).await;
    let base = served.base.as_str();

    // Before its first draft, a new app has no files, and reading makes none.
    assert_eq!(
        read(base, "fresh", "?tmp=true").await,
        (StatusCode::OK, String::new())
    );
    assert!(!fresh.exists());

    // The dialog's draft: in the new app's draft folder, not served yet but listed, so that
    // adk-web, which reloads the page onto the new app, finds it and opens the builder on it.
    let (status, answer) = save(
        base,
        "fresh",
        "?tmp=true",
        &[("fresh/root_agent.yaml", NEW_APP)],
    )
    .await;
    assert_eq!((status, answer), (StatusCode::OK, json!(true)));
    assert!(fresh.join("tmp/fresh/root_agent.yaml").is_file());
    assert!(!fresh.join("root_agent.yaml").exists());
    assert!(listed(base).await.contains(&"fresh".to_owned()));
    assert_eq!(
        read(base, "fresh", "?tmp=true").await,
        (StatusCode::OK, NEW_APP.to_owned())
    );

    // A save the loader refuses names the file, line and column, and creates nothing.
    let bad = NEW_APP.replace("instruction:", "instructions:");
    let (status, answer) = save(base, "fresh", "", &[("fresh/root_agent.yaml", &bad)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(detail.starts_with("root_agent.yaml:4:1: "), "{detail}");
    assert!(!fresh.join("root_agent.yaml").exists());
    assert!(fresh.join("tmp/fresh/root_agent.yaml").is_file());
    let detailed: Value = reqwest::get(format!("{base}/list-apps?detailed=true"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        detailed["apps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|app| app["name"] != "fresh"),
        "{detailed}"
    );

    // The save creates the app, drops the draft and serves the app from then on.
    let (status, answer) = save(base, "fresh", "", &[("fresh/root_agent.yaml", NEW_APP)]).await;
    assert_eq!((status, answer), (StatusCode::OK, json!(true)));
    assert_eq!(
        std::fs::read_to_string(fresh.join("root_agent.yaml")).unwrap(),
        NEW_APP
    );
    assert!(!fresh.join("tmp").exists());
    assert!(listed(base).await.contains(&"fresh".to_owned()));
    assert_eq!(
        read(base, "fresh", "").await,
        (StatusCode::OK, NEW_APP.to_owned())
    );
    run_app(base, "fresh", "first").await;
    assert!(
        instruction_sent(&model, 0).contains("coordinates other agents"),
        "{}",
        instruction_sent(&model, 0)
    );

    // A name that is not an identifier, or an app not described in YAML, is no new app.
    for app in ["9lives", "quickstart"] {
        let (status, answer) = save(
            base,
            app,
            "?tmp=true",
            &[(&format!("{app}/root_agent.yaml"), NEW_APP)],
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{app}: {answer}");
    }
    assert!(!dir.path().join("9lives").exists());

    // Cancelling a new app that was never saved leaves no folder behind.
    let (status, _) = save(
        base,
        "dropped",
        "?tmp=true",
        &[("dropped/root_agent.yaml", NEW_APP)],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let cancelled: Value =
        json_answer(reqwest::Client::new().post(format!("{base}/dev/apps/dropped/builder/cancel")))
            .await;
    assert_eq!(cancelled, json!(true));
    assert!(!dir.path().join("dropped").exists());
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

#[tokio::test]
async fn api_server_serves_no_builder_as_adk_python() {
    let dir = agents();
    let model = MockServer::start([]).await;
    let served = serve(adk(dir.path(), &model, "api_server"), PATIENCE).await;
    let (status, _) = read(&served.base, "helper", "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = save(
        &served.base,
        "helper",
        "",
        &[("helper/root_agent.yaml", ROOT)],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("helper/root_agent.yaml")).unwrap(),
        ROOT
    );
    let (status, _) = save(
        &served.base,
        "fresh",
        "?tmp=true",
        &[("fresh/root_agent.yaml", NEW_APP)],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!dir.path().join("fresh").exists());
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

fn screenshots() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("adk-cli-builder")
}

/// Waits until `path` holds text containing `wanted` (the save reached the disk).
async fn wait_for_file(path: &Path, wanted: &str) -> String {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(wanted) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never held {wanted:?}; it holds:\n{text}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_tab_changes_an_instruction_and_the_next_run_uses_it() {
    let dir = agents();
    let app = dir.path().join("helper");
    let model = MockServer::start([chat_answer("One word: hello.")]).await;
    // The app adk-web creates names `gemini-2.5-flash`; a key lets the save build it (it is
    // never called).
    let mut web = adk(dir.path(), &model, "web");
    web.env("GOOGLE_API_KEY", "test-key");
    let served = serve(web, PATIENCE).await;
    let browser = adk_test::browser::Browser::start(1400, 900).await;
    browser
        .goto(&format!("{}/dev-ui/?app=helper", served.base))
        .await;

    // The edit button is offered once the UI read the app's root_agent.yaml.
    const EDIT: &str = "return [...document.querySelectorAll('button')].find(b => \
         b.textContent.trim() === 'edit' && !b.disabled) || null;";
    browser
        .wait_for(EDIT, "the enabled edit button", PATIENCE)
        .await;
    browser
        .execute(
            "[...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'edit').click();",
            Vec::new(),
        )
        .await;

    // The builder shows the root agent's instruction from the draft of the file.
    const INSTRUCTION: &str = "return [...document.querySelectorAll('textarea')].find(t => \
         t.value === 'Answer briefly.') || null;";
    browser
        .wait_for(
            INSTRUCTION,
            "the root agent's instruction in the builder",
            PATIENCE,
        )
        .await;
    browser
        .screenshot(&screenshots().join("1-builder.png"))
        .await;
    browser
        .execute(
            "const area = [...document.querySelectorAll('textarea')].find(t => t.value === 'Answer briefly.');
             area.value = 'Answer in one word.';
             area.dispatchEvent(new Event('input', {bubbles: true}));",
            Vec::new(),
        )
        .await;
    browser.click_text("Save").await;

    // The file changed on disk, and the page went back to the chat.
    let saved = wait_for_file(&app.join("root_agent.yaml"), "Answer in one word.").await;
    assert!(saved.contains("name: helper"), "{saved}");
    assert!(!saved.contains("Answer briefly."), "{saved}");
    browser.send_chat_message("Hello", PATIENCE).await;
    browser.wait_for_text("One word: hello.", PATIENCE).await;
    browser
        .screenshot(&screenshots().join("2-after-save.png"))
        .await;
    assert!(
        instruction_sent(&model, 0).contains("Answer in one word."),
        "{}",
        instruction_sent(&model, 0)
    );

    // adk-web's "Create new agent" (the + of the app selector): the dialog drafts the app, the
    // page opens the builder on the draft, and its save creates the app in the agents folder.
    browser
        .execute(
            "[...document.querySelectorAll('button')].find(b => b.textContent.includes('robot_2')).click();",
            Vec::new(),
        )
        .await;
    const CREATE: &str =
        "return document.querySelector('button[aria-label=\"Create new agent\"]');";
    browser
        .wait_for(
            CREATE,
            "the app selector's Create new agent button",
            PATIENCE,
        )
        .await;
    browser
        .execute(
            "document.querySelector('button[aria-label=\"Create new agent\"]').click();",
            Vec::new(),
        )
        .await;
    browser.fill_dialog_input("fresh", PATIENCE).await;
    browser.click_text("Create").await;
    wait_for_file(
        &dir.path().join("fresh/tmp/fresh/root_agent.yaml"),
        "name: fresh",
    )
    .await;
    const NEW_INSTRUCTION: &str = "return [...document.querySelectorAll('textarea')].find(t => \
         t.value.includes('coordinates other agents')) || null;";
    browser
        .wait_for(
            NEW_INSTRUCTION,
            "the new app's instruction in the builder",
            PATIENCE,
        )
        .await;
    browser
        .screenshot(&screenshots().join("3-new-app.png"))
        .await;
    browser.click_text("Save").await;
    browser.screenshot(&screenshots().join("4-debug.png")).await;
    let created = wait_for_file(&dir.path().join("fresh/root_agent.yaml"), "name: fresh").await;
    assert!(created.contains("coordinates other agents"), "{created}");
    assert!(listed(&served.base).await.contains(&"fresh".to_owned()));
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}
