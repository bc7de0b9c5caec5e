//! The Builder routes against ADK Python's: the same requests sent to google-adk 2.13's `adk web`
//! (its FastAPI app in-process, from adk-test's Python peers) and to this `adk web`, each over
//! its own copy of one folder of YAML agents; the statuses and bodies compared, then the files the
//! saves left, those of a new app created through the builder among them. Where adk-rs answers
//! otherwise on purpose (it checks a config before saving it, and refuses a path that leaves the
//! app instead of answering an empty file), the step says so and both answers are asserted.

mod support;

use std::path::Path;
use std::time::Duration;

use adk_test::MockServer;
use serde_json::{Value, json};
use support::serve;
use tokio::process::Command;

const ROOT: &str = "name: helper\nmodel: openai/mock-model\ninstruction: Answer briefly.\nsub_agents:\n  - config_path: ./poet.yaml\n";
const POET: &str = "name: poet\nmodel: openai/mock-model\ninstruction: Answer in verse.\n";
/// The root file adk-web's "Create new agent" dialog uploads (on the loopback model).
const NEW_APP: &str = "name: fresh\nmodel: openai/mock-model\nagent_class: LlmAgent\ninstruction: You are the root agent that coordinates other agents.\nsub_agents: []\ntools: []\n";

/// How the two answers of a step must relate.
#[derive(Clone, Copy, Debug)]
enum Compare {
    /// The same status and body.
    Same,
    /// The same status (bodies are each server's own error messages).
    Status,
    /// adk-rs answers this status where ADK Python answers its own, on purpose.
    Differs { adk_python: u16, adk_rs: u16 },
}

struct Step {
    method: &'static str,
    path: &'static str,
    files: Option<Vec<(&'static str, String)>>,
    compare: Compare,
}

fn step(method: &'static str, path: &'static str, compare: Compare) -> Step {
    Step {
        method,
        path,
        files: None,
        compare,
    }
}

fn upload(path: &'static str, files: &[(&'static str, &str)], compare: Compare) -> Step {
    Step {
        method: "POST",
        path,
        files: Some(
            files
                .iter()
                .map(|(name, text)| (*name, (*text).to_owned()))
                .collect(),
        ),
        compare,
    }
}

/// Every request adk-web's Builder tab makes, in the order it makes them, and the refusals.
fn plan() -> Vec<Step> {
    use Compare::*;
    let draft = ROOT.replace("Answer briefly.", "Answer in one word.");
    let save = "/dev/apps/helper/builder/save";
    let mut steps = vec![
        step("GET", "/dev/apps/helper/builder", Same),
        step("GET", "/dev/apps/helper/builder?file_path=poet.yaml", Same),
        step(
            "GET",
            "/dev/apps/helper/builder?file_path=missing.yaml",
            Same,
        ),
        step("GET", "/dev/apps/helper/builder?tmp=true", Same),
        step(
            "GET",
            "/dev/apps/helper/builder?file_path=poet.yaml&tmp=true",
            Same,
        ),
        step(
            "GET",
            "/dev/apps/helper/builder?file_path=plugins.yaml&tmp=true",
            Same,
        ),
        Step {
            path: "/dev/apps/helper/builder/save?tmp=true",
            ..upload(save, &[("helper/root_agent.yaml", &draft)], Same)
        },
        step("GET", "/dev/apps/helper/builder?tmp=true", Same),
        upload(save, &[("helper/poet.yaml", POET)], Same),
        step("GET", "/dev/apps/helper/builder", Same),
        step("POST", "/dev/apps/helper/builder/cancel", Same),
        // adk-web's "Create new agent": a draft for an app not served yet, read back, saved.
        step("GET", "/dev/apps/fresh/builder?tmp=true", Same),
        Step {
            path: "/dev/apps/fresh/builder/save?tmp=true",
            ..upload(save, &[("fresh/root_agent.yaml", NEW_APP)], Same)
        },
        step("GET", "/dev/apps/fresh/builder?tmp=true", Same),
        step(
            "GET",
            "/dev/apps/fresh/builder?file_path=plugins.yaml&tmp=true",
            Same,
        ),
        upload(
            "/dev/apps/fresh/builder/save",
            &[("fresh/root_agent.yaml", NEW_APP)],
            Same,
        ),
        step("GET", "/dev/apps/fresh/builder", Same),
        // A new app's draft dropped before its first save.
        Step {
            path: "/dev/apps/dropped/builder/save?tmp=true",
            ..upload(save, &[("dropped/root_agent.yaml", NEW_APP)], Same)
        },
        step("POST", "/dev/apps/dropped/builder/cancel", Same),
        // Refusals: names that leave the app or are not YAML, and YAML that does not parse.
        upload(save, &[("helper/../x.yaml", POET)], Status),
        upload(save, &[("helper/agent.py", POET)], Status),
        upload(
            save,
            &[("helper/root_agent.yaml", "name: [unclosed\n")],
            Status,
        ),
        // ADK Python answers an empty file for a path that leaves the app; adk-rs refuses it.
        step(
            "GET",
            "/dev/apps/helper/builder?file_path=../x.yaml",
            Differs {
                adk_python: 200,
                adk_rs: 400,
            },
        ),
        // ADK Python writes a config its loader cannot read; adk-rs checks it first and refuses.
        upload(
            save,
            &[(
                "helper/poet.yaml",
                &POET.replace("instruction:", "instructions:"),
            )],
            Differs {
                adk_python: 200,
                adk_rs: 400,
            },
        ),
    ];
    steps.shrink_to_fit();
    steps
}

/// A folder of agents holding app `helper`, in `dir`.
fn agents(dir: &Path) {
    let app = dir.join("helper");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("root_agent.yaml"), ROOT).unwrap();
    std::fs::write(app.join("poet.yaml"), POET).unwrap();
}

/// A body as JSON when it is JSON, else as text.
fn body(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// ADK Python's answers to the plan, over the agents in `dir`.
async fn adk_python_answers(dir: &Path, plan: &[Step]) -> Vec<(u16, Value)> {
    let steps: Vec<Value> = plan
        .iter()
        .map(|step| json!({"method": step.method, "path": step.path, "files": step.files}))
        .collect();
    let steps_file = dir.join("steps.json");
    std::fs::write(&steps_file, Value::Array(steps).to_string()).unwrap();
    let agents = dir.join("agents");
    let output = tokio::task::spawn_blocking(move || {
        let script = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/builder_peer/adk_web_builder.py");
        adk_test::python_peers::a2a_peers()
            .command()
            .arg(script)
            .arg(agents)
            .arg(steps_file)
            .output()
            .expect("python runs")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "adk_web_builder.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&output.stdout).expect("JSON answers");
    answers
        .into_iter()
        .map(|answer| {
            (
                answer["status"].as_u64().unwrap() as u16,
                answer["body"].clone(),
            )
        })
        .collect()
}

/// This `adk web`'s answers to the plan, over the agents in `dir`.
async fn our_answers(dir: &Path, plan: &[Step]) -> Vec<(u16, Value)> {
    let model = MockServer::start([]).await;
    let mut adk = Command::new(env!("CARGO_BIN_EXE_adk"));
    adk.args(["web", "."])
        .current_dir(dir.join("agents"))
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env_remove("ADK_MODEL")
        .env("ADK_NO_LOCAL_MODEL", "true");
    let served = serve(adk, Duration::from_secs(180)).await;
    let client = reqwest::Client::new();
    let mut answers = Vec::new();
    for step in plan {
        let method = reqwest::Method::from_bytes(step.method.as_bytes()).unwrap();
        let mut request = client.request(method, format!("{}{}", served.base, step.path));
        if let Some(files) = &step.files {
            let boundary = "----adk-builder-conformance";
            let mut form = String::new();
            for (name, text) in files {
                form.push_str(&format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/x-yaml\r\n\r\n{text}\r\n"
                ));
            }
            form.push_str(&format!("--{boundary}--\r\n"));
            request = request
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(form);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        answers.push((status, body(response.text().await.unwrap())));
    }
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
    answers
}

/// The YAML files under `dir`, by relative path.
fn yaml_files(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_file() {
            files.push((name, std::fs::read_to_string(entry.path()).unwrap()));
        } else {
            files.push((format!("{name}/"), String::new()));
        }
    }
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_routes_answer_as_adk_pythons_adk_web() {
    let plan = plan();
    let theirs_dir = tempfile::tempdir().unwrap();
    let ours_dir = tempfile::tempdir().unwrap();
    agents(&theirs_dir.path().join("agents"));
    agents(&ours_dir.path().join("agents"));
    let theirs = adk_python_answers(theirs_dir.path(), &plan).await;
    let ours = our_answers(ours_dir.path(), &plan).await;
    assert_eq!(theirs.len(), plan.len());

    for ((step, (their_status, their_body)), (our_status, our_body)) in
        plan.iter().zip(theirs).zip(ours)
    {
        let label = format!("{} {} ({:?})", step.method, step.path, step.compare);
        match step.compare {
            Compare::Same => {
                assert_eq!(
                    (our_status, &our_body),
                    (their_status, &their_body),
                    "{label}: adk-rs, then ADK Python"
                );
            }
            Compare::Status => assert_eq!(
                our_status, their_status,
                "{label}: ADK Python answered {their_body}, adk-rs {our_body}"
            ),
            Compare::Differs { adk_python, adk_rs } => {
                assert_eq!(their_status, adk_python, "{label}: {their_body}");
                assert_eq!(our_status, adk_rs, "{label}: {our_body}");
            }
        }
    }

    // The files the saves left, but for the config ADK Python saved unchecked.
    let theirs_app = theirs_dir.path().join("agents/helper");
    let ours_app = ours_dir.path().join("agents/helper");
    std::fs::write(theirs_app.join("poet.yaml"), POET).unwrap();
    assert_eq!(yaml_files(&ours_app), yaml_files(&theirs_app));
    let root = std::fs::read_to_string(ours_app.join("root_agent.yaml")).unwrap();
    assert!(root.contains("Answer in one word."), "{root}");
    // The app created through the builder holds the same files, its draft gone.
    let fresh = yaml_files(&ours_dir.path().join("agents/fresh"));
    assert_eq!(fresh, yaml_files(&theirs_dir.path().join("agents/fresh")));
    assert_eq!(fresh, [("root_agent.yaml".to_owned(), NEW_APP.to_owned())]);
}
