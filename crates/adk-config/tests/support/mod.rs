//! What the config tests share: the fixture paths, a model resolver that serves scripted models
//! and records what it was asked, a runner on deterministic seams, and renderings of runs and
//! model requests to compare with expected literals.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_config::{AgentLoader, ConfigError, ModelResolver, ModelSpec};
use adk_core::{Agent, Content, Error, ErrorKind, Llm, LlmRequest, Result};
use adk_runner::{RunRequest, Runner};
use adk_session::{InMemoryArtifactService, InMemoryMemoryService, InMemorySessionService};
use adk_test::{ScriptedModel, SequentialIds, StepClock};
use adk_tool::FunctionTool;
use async_trait::async_trait;
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

pub const APP: &str = "app";
pub const USER: &str = "ada";
pub const SESSION: &str = "s-1";

/// A fixture file or directory, by its path under `tests/fixtures`, relative to the crate as
/// the tests run there, so that messages show short, stable paths.
pub fn fixture(path: &str) -> PathBuf {
    Path::new("tests/fixtures").join(path)
}

/// The arguments of `get_weather`.
#[derive(Deserialize, JsonSchema)]
pub struct City {
    /// The city to report on.
    city: String,
}

async fn get_weather(args: City) -> std::result::Result<String, String> {
    Ok(format!("Sunny in {}.", args.city))
}

/// A function tool `get_weather`, for configs to name.
pub fn weather_tool() -> Arc<FunctionTool> {
    Arc::new(FunctionTool::new(
        "get_weather",
        "Returns the weather in a city.",
        get_weather,
    ))
}

/// Copies the fixture directory `template` into a new temporary directory, replacing each
/// `{{NAME}}` with its value from `vars`, for configs that name paths known only at run time.
pub fn render_template(template: &str, vars: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(template)).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        for (name, value) in vars {
            text = text.replace(&format!("{{{{{name}}}}}"), value);
        }
        assert!(
            !text.contains("{{"),
            "{} has a placeholder left: {text}",
            path.display()
        );
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    dir
}

/// Serves each model name with a scripted model, and records which names it was asked for.
#[derive(Clone, Default)]
pub struct ScriptedResolver {
    models: Arc<Mutex<BTreeMap<ModelSpec, ScriptedModel>>>,
    asked: Arc<Mutex<Vec<ModelSpec>>>,
    default: Option<ModelSpec>,
}

impl ScriptedResolver {
    /// A resolver whose default model is `local`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `spec` with `model`.
    pub fn serve(self, spec: &str, model: ScriptedModel) -> Self {
        self.models.lock().insert(spec.parse().unwrap(), model);
        self
    }

    /// Makes `spec` the default model.
    pub fn default_model_is(mut self, spec: &str) -> Self {
        self.default = Some(spec.parse().unwrap());
        self
    }

    /// The model names asked for, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().iter().map(ToString::to_string).collect()
    }
}

#[async_trait]
impl ModelResolver for ScriptedResolver {
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        self.asked.lock().push(model.clone());
        match self.models.lock().get(model) {
            Some(scripted) => Ok(Arc::new(scripted.clone())),
            None => Err(Error::new(
                ErrorKind::Config,
                format!("the test serves no model `{model}`"),
            )),
        }
    }

    fn default_model(&self) -> ModelSpec {
        self.default.clone().unwrap_or(ModelSpec::Local)
    }
}

/// Loads the config at `path` with every model it names served by `model` as `local`, the
/// default.
pub async fn load_on_local(model: &ScriptedModel, path: impl AsRef<Path>) -> Arc<dyn Agent> {
    AgentLoader::new()
        .model_resolver(ScriptedResolver::new().serve("local", model.clone()))
        .load(path)
        .await
        .unwrap_or_else(|error| panic!("{error}"))
}

/// The error loading `path` with `loader` ends with; panics when it loads.
pub async fn load_error(loader: &AgentLoader, path: impl AsRef<Path>) -> ConfigError {
    match loader.load(path.as_ref()).await {
        Ok(agent) => panic!("{} loaded as {agent:?}", path.as_ref().display()),
        Err(error) => error,
    }
}

/// A runner of `root` on in-memory services, with deterministic ids and clock.
pub fn runner(root: Arc<dyn Agent>) -> Runner {
    Runner::builder(APP, root, InMemorySessionService::new())
        .artifact_service(InMemoryArtifactService::new())
        .memory_service(InMemoryMemoryService::new())
        .auto_create_session(true)
        .ids(Arc::new(SequentialIds::default()))
        .clock(Arc::new(StepClock::default()))
        .build()
        .expect("the loaded tree makes a runner")
}

/// What a run yielded and the error that ended it.
pub use adk_test::RunOutcome as Outcome;

/// Runs the user's `text` in the test session to its end.
pub async fn run(runner: &Runner, text: &str) -> Outcome {
    let request = RunRequest::new(USER, SESSION).message(Content::user(text));
    Outcome::collect(runner.run_request(request)).await
}

/// What a model was asked, one block per request: the system instruction, the declared tools,
/// the settings as JSON, and the number of contents.
pub fn render_requests(requests: &[LlmRequest]) -> String {
    let mut log = String::new();
    for request in requests {
        let tools: Vec<String> = request
            .tools
            .iter()
            .map(|tool| {
                match tool
                    .parameters
                    .as_ref()
                    .and_then(|p| p.pointer("/properties/agent_name/enum"))
                {
                    Some(targets) => format!("{}{targets}", tool.name),
                    None => tool.name.clone(),
                }
            })
            .collect();
        let _ = writeln!(log, "instruction: {:?}", request.system_instruction);
        let _ = writeln!(log, "tools: {}", tools.join(", "));
        let _ = writeln!(
            log,
            "config: {}",
            serde_json::to_string(&request.config).unwrap()
        );
        let _ = writeln!(log, "contents: {}", request.contents.len());
        let _ = writeln!(log, "--");
    }
    log
}

/// The names of an agent tree, indented by depth, each with its concrete kind.
pub fn render_tree(agent: &Arc<dyn Agent>) -> String {
    let mut out = String::new();
    render_node(agent, 0, &mut out);
    out
}

fn render_node(agent: &Arc<dyn Agent>, depth: usize, out: &mut String) {
    let kind = if agent.downcast_ref::<adk_flow::LlmAgent>().is_some() {
        "LlmAgent"
    } else if agent.downcast_ref::<adk_flow::SequentialAgent>().is_some() {
        "SequentialAgent"
    } else if agent.downcast_ref::<adk_flow::ParallelAgent>().is_some() {
        "ParallelAgent"
    } else if agent.downcast_ref::<adk_flow::LoopAgent>().is_some() {
        "LoopAgent"
    } else {
        "other"
    };
    let _ = write!(
        out,
        "{}{} ({kind}): {:?}",
        "  ".repeat(depth),
        agent.name(),
        agent.description()
    );
    if let Some(llm) = agent.downcast_ref::<adk_flow::LlmAgent>() {
        let tools: Vec<&str> = llm.tools().iter().map(|tool| tool.name()).collect();
        let _ = write!(out, " tools [{}]", tools.join(", "));
    }
    out.push('\n');
    for child in agent.sub_agents() {
        render_node(child, depth + 1, out);
    }
}
