//! Model names pick their adapter: the default resolver builds the Gemini and OpenAI adapters from
//! the environment (here, from given variables pointing at a loopback server), the default model
//! follows the environment, `local` needs the launcher, and a model that cannot be made ready
//! leaves no other model behind. Also: every app of an agents directory.

mod support;

use std::sync::{Arc, Weak};

use adk_config::{AgentLoader, ConfigErrorKind, EnvModelResolver, ModelResolver, ModelSpec};
use adk_core::{Error, ErrorKind, Llm, Result};
use adk_test::{MockResponse, MockServer, ScriptedModel};
use async_trait::async_trait;
use expect_test::expect;
use parking_lot::Mutex;
use serde_json::json;
use support::{ScriptedResolver, fixture, load_error, render_tree, run, runner};

/// A Gemini `generateContent` answer.
fn gemini_answer(text: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "candidates": [{
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
            }],
        }),
    )
}

/// An OpenAI Chat Completions answer.
fn openai_answer(text: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-4o-mini",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }],
        }),
    )
}

/// Loads the config `path` with `resolver`, and asks its agent `question`.
async fn ask(resolver: EnvModelResolver, path: &str, question: &str) -> support::Outcome {
    let root = AgentLoader::new()
        .model_resolver(resolver)
        .load(fixture(path))
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    run(&runner(root), question).await
}

/// The final text the run ended with.
fn final_text(outcome: &support::Outcome) -> String {
    outcome
        .events
        .last()
        .and_then(adk_core::Event::text)
        .unwrap_or_else(|| panic!("no final text:\n{}", outcome.render()))
}

#[tokio::test]
async fn a_gemini_name_reaches_the_gemini_adapter() {
    let server = MockServer::start([gemini_answer("Paris is in France.")]).await;
    let resolver = EnvModelResolver::from_vars([
        ("GOOGLE_API_KEY", "test-key"),
        ("GOOGLE_GEMINI_BASE_URL", server.base_url().as_str()),
    ]);
    let outcome = ask(resolver, "models/gemini.yaml", "Where is Paris?").await;
    assert_eq!(final_text(&outcome), "Paris is in France.");
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("test-key"));
    assert_eq!(
        request.json()["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .map(|text| text.starts_with("Answer in one sentence.")),
        Some(true)
    );
}

#[tokio::test]
async fn an_openai_name_reaches_the_openai_adapter_at_the_base_url() {
    let server = MockServer::start([openai_answer("Paris is in France.")]).await;
    let base_url = format!("{}/v1", server.base_url());
    let resolver = EnvModelResolver::from_vars([
        ("OPENAI_API_KEY", "test-key"),
        ("OPENAI_BASE_URL", base_url.as_str()),
    ]);
    let outcome = ask(resolver, "models/openai.yaml", "Where is Paris?").await;
    assert_eq!(final_text(&outcome), "Paris is in France.");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_eq!(request.json()["model"], "gpt-4o-mini");
}

#[tokio::test]
async fn an_agent_naming_no_model_gets_the_default_of_the_environment() {
    // An OpenAI-compatible server that needs no key, and the model it serves.
    let server = MockServer::start([openai_answer("Hello.")]).await;
    let base_url = format!("{}/v1", server.base_url());
    let resolver = EnvModelResolver::from_vars([
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_MODEL", "qwen2.5-0.5b-instruct"),
    ]);
    let outcome = ask(resolver, "models/no_model.yaml", "Hi.").await;
    assert_eq!(final_text(&outcome), "Hello.");
    let request = &server.requests()[0];
    assert_eq!(request.json()["model"], "qwen2.5-0.5b-instruct");
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn the_local_model_needs_the_launcher() {
    let loader = AgentLoader::new().model_resolver(EnvModelResolver::from_vars::<&str, &str>([]));
    let error = load_error(&loader, fixture("models/local.yaml")).await;
    assert_eq!(error.kind(), ConfigErrorKind::Model);
    expect!["tests/fixtures/models/local.yaml: the model `local` is not ready: the model `local` is started by the launcher (`adk run`, `adk web`), not by AgentLoader's default model resolver: load the config through the launcher, pass the loader a ModelResolver that serves `local`, or name a hosted model (`gemini-*`, `claude-*`, `openai/<name>`, ...)"]
        .assert_eq(&error.to_string());
}

#[tokio::test]
async fn a_missing_api_key_names_the_variables_to_set() {
    let loader = AgentLoader::new().model_resolver(EnvModelResolver::from_vars::<&str, &str>([]));
    let error = load_error(&loader, fixture("models/openai.yaml")).await;
    expect!["tests/fixtures/models/openai.yaml: the model `openai/gpt-4o-mini` is not ready: the model `openai/gpt-4o-mini` needs an OpenAI API key: set OPENAI_API_KEY, or OPENAI_BASE_URL to an OpenAI-compatible server that needs none"]
        .assert_eq(&error.to_string());
}

/// Serves `local` and fails every other model, keeping a weak reference to each model it made.
#[derive(Default)]
struct FailsAfterLocal {
    made: Mutex<Vec<Weak<dyn Llm>>>,
}

#[async_trait]
impl ModelResolver for FailsAfterLocal {
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        if *model != ModelSpec::Local {
            return Err(Error::new(
                ErrorKind::Config,
                format!("no quota left for `{model}`"),
            ));
        }
        let made: Arc<dyn Llm> = Arc::new(ScriptedModel::new("local"));
        self.made.lock().push(Arc::downgrade(&made));
        Ok(made)
    }

    fn default_model(&self) -> ModelSpec {
        ModelSpec::Local
    }
}

#[tokio::test]
async fn a_model_that_cannot_be_made_ready_leaves_no_model_behind() {
    let resolver = Arc::new(FailsAfterLocal::default());
    let loader = AgentLoader::new().model_resolver(SharedResolver(resolver.clone()));
    let error = load_error(&loader, fixture("models/two_models")).await;
    assert_eq!(error.kind(), ConfigErrorKind::Model);
    expect!["tests/fixtures/models/two_models/researcher.yaml: the model `gemini-2.5-flash` is not ready: no quota left for `gemini-2.5-flash`"]
        .assert_eq(&error.to_string());
    let made = resolver.made.lock();
    assert_eq!(made.len(), 1, "the local model was made first");
    assert!(
        made[0].upgrade().is_none(),
        "the local model outlived the failed load"
    );
}

/// Lends a resolver to a loader while the test keeps it too.
struct SharedResolver(Arc<FailsAfterLocal>);

#[async_trait]
impl ModelResolver for SharedResolver {
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        self.0.resolve(model).await
    }

    fn default_model(&self) -> ModelSpec {
        self.0.default_model()
    }
}

#[tokio::test]
async fn every_app_of_an_agents_directory_loads_sharing_its_models() {
    let resolver =
        ScriptedResolver::new().serve("gemini-2.5-flash", ScriptedModel::new("gemini-2.5-flash"));
    let apps = AgentLoader::new()
        .model_resolver(resolver.clone())
        .load_apps(fixture("apps"))
        .await
        .unwrap();
    let rendered: Vec<String> = apps
        .iter()
        .map(|app| format!("{}:\n{}", app.name, render_tree(&app.root_agent)))
        .collect();
    expect![[r#"
        billing:
        billing_agent (LlmAgent): "" tools []
        support:
        support_agent (LlmAgent): "" tools []
          escalation (LlmAgent): "Takes over when the user is unhappy." tools []
    "#]]
    .assert_eq(&rendered.concat());
    // Both apps name the same model: it is made ready once.
    assert_eq!(resolver.asked(), ["gemini-2.5-flash"]);
}

#[tokio::test]
async fn a_bad_app_loads_no_app() {
    let apps = tempfile::tempdir().unwrap();
    for (app, config) in [("good", "name: good_agent\n"), ("bad", "name: bad-agent\n")] {
        std::fs::create_dir(apps.path().join(app)).unwrap();
        std::fs::write(apps.path().join(app).join("root_agent.yaml"), config).unwrap();
    }
    let resolver = ScriptedResolver::new();
    let error = AgentLoader::new()
        .model_resolver(resolver.clone())
        .load_apps(apps.path())
        .await
        .unwrap_err();
    assert_eq!(error.file(), apps.path().join("bad/root_agent.yaml"));
    assert!(resolver.asked().is_empty());
}
