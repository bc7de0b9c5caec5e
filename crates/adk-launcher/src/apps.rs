//! The apps a launcher knows, and building the ones a command runs: a ready agent tree, one built
//! on the model the command line chooses, or agents described in YAML. Models are made ready only
//! when an app needs them, and the local model is started at most once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_config::{AgentLoader, EnvModelResolver, ModelResolver, ModelSpec, ROOT_AGENT_FILE};
use adk_core::{Agent, Content, Error, ErrorKind, Event, Llm, RunConfig};
use adk_runner::{LlmSummarizer, Summarizer};
use adk_tool::Tool;
use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::OnceCell;

use crate::args::ModelArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};
use crate::model::{self, ChosenModel};

/// Builds an agent tree on the model the command line chose.
pub(crate) type BuildOnModel =
    Arc<dyn Fn(Arc<dyn Llm>) -> adk_core::Result<Arc<dyn Agent>> + Send + Sync>;

/// Where an app's agent tree comes from.
#[derive(Clone)]
pub(crate) enum AppSource {
    /// A tree built by the program, with its models.
    Agent(Arc<dyn Agent>),
    /// A tree built on the model the command line chooses.
    OnModel(BuildOnModel),
    /// A tree described by a YAML config: a `root_agent.yaml` file or the folder holding it.
    Yaml(PathBuf),
    /// Every app of a folder of YAML agents (each subfolder holding a `root_agent.yaml`).
    YamlDir(PathBuf),
}

/// An app: the name its sessions are stored under and where its agent tree comes from.
#[derive(Clone)]
pub(crate) struct App {
    pub(crate) name: String,
    pub(crate) source: AppSource,
}

impl App {
    /// The YAML agent at `path` (a folder holding a `root_agent.yaml`, or a `.yaml` file), named
    /// after its folder; `None` when `path` is neither.
    pub(crate) fn yaml(path: &Path) -> Option<Self> {
        let (file, dir) = if path.is_dir() {
            (path.join(ROOT_AGENT_FILE), path.to_path_buf())
        } else {
            let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
            (path.to_path_buf(), dir)
        };
        let is_yaml = file
            .extension()
            .is_some_and(|extension| extension == "yaml" || extension == "yml");
        if !is_yaml || !file.is_file() {
            return None;
        }
        let dir = dir.canonicalize().unwrap_or(dir);
        let name = dir.file_name().map_or_else(
            || "agent".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        Some(Self {
            name,
            source: AppSource::Yaml(file),
        })
    }
}

/// The agent trees of the apps a command runs, and the models they were built on (kept alive: a
/// local model's server stops when it is dropped).
pub(crate) struct BuiltApps {
    pub(crate) apps: Vec<(String, Arc<dyn Agent>)>,
    /// The apps described in YAML, each with the folder holding its `root_agent.yaml`.
    pub(crate) yaml_dirs: Vec<(String, PathBuf)>,
    /// The loader that built the YAML apps, to build them again once their files changed.
    pub(crate) loader: AgentLoader,
    models: Arc<Models>,
}

impl BuiltApps {
    /// The settings runs start from: the loop guard's limit the command line sets.
    pub(crate) fn run_config(&self) -> RunConfig {
        RunConfig::default().with_max_repeated_tool_calls(self.models.args.max_repeated_tool_calls)
    }

    /// What answers a context overflow by summarizing the session's earlier history, unless the
    /// command line turned that off: the model the command line made ready writes the summary.
    pub(crate) fn overflow_summarizer(&self) -> Option<Arc<dyn Summarizer>> {
        (!self.models.args.no_overflow_compaction)
            .then(|| Arc::new(ReadyModelSummarizer(self.models.clone())) as Arc<dyn Summarizer>)
    }

    /// The model the flags and the environment choose, made ready now if no app needed it yet
    /// (an eval's judge, say).
    pub(crate) async fn chosen_model(&self) -> Result<Arc<dyn Llm>, LaunchError> {
        Ok(self.models.chosen().await?.llm.clone())
    }

    /// The model the command made ready, as an [`Llm`] that looks it up at its first call (see
    /// [`Models::summary_model`]): for the server's simulated eval users, so that serving does
    /// not start a model no app needs.
    pub(crate) fn ready_model(&self) -> Arc<dyn Llm> {
        Arc::new(ReadyModel {
            models: self.models.clone(),
            resolved: Arc::default(),
        })
    }

    /// The names of the models the command line made ready, or a word saying the apps brought
    /// their own.
    pub(crate) fn model_name(&self) -> String {
        let mut names: BTreeSet<String> = [self.models.chosen.get(), self.models.local.get()]
            .into_iter()
            .flatten()
            .map(|model| model.llm.name().to_owned())
            .collect();
        names.extend(self.models.resolved.lock().iter().cloned());
        let names: Vec<String> = names.into_iter().collect();
        if names.is_empty() {
            "their own models".to_owned()
        } else {
            names.join(" and ")
        }
    }
}

/// Builds `apps`, making models ready as the first app that needs each one is built. YAML agents
/// may declare MCP servers started as local processes only with `stdio_mcp`.
pub(crate) async fn build(
    apps: &[App],
    model_args: &ModelArgs,
    function_tools: &[Arc<dyn Tool>],
    stdio_mcp: bool,
) -> Result<BuiltApps, LaunchError> {
    let models = Arc::new(Models {
        args: model_args.clone(),
        chosen: OnceCell::new(),
        local: OnceCell::new(),
        resolved: Mutex::new(BTreeSet::new()),
        first_resolved: Mutex::new(None),
    });
    let loader = function_tools.iter().fold(
        AgentLoader::new()
            .model_resolver(SharedModels(models.clone()))
            .stdio_mcp_servers(stdio_mcp),
        |loader, tool| loader.function_tool(tool.clone()),
    );
    let mut built = Vec::with_capacity(apps.len());
    let mut yaml_dirs = Vec::new();
    for app in apps {
        match &app.source {
            AppSource::Agent(agent) => built.push((app.name.clone(), agent.clone())),
            AppSource::OnModel(build) => {
                let chosen = models.chosen().await?;
                let agent = build(chosen.llm.clone()).context(LaunchErrorKind::Agent, || {
                    format!("cannot build the agent of {}", app.name)
                })?;
                built.push((app.name.clone(), agent));
            }
            AppSource::Yaml(path) => {
                if path.file_name().is_some_and(|name| name == ROOT_AGENT_FILE)
                    && let Some(dir) = path.parent()
                {
                    yaml_dirs.push((app.name.clone(), dir.to_path_buf()));
                }
                let agent = loader
                    .load(path)
                    .await
                    .context(LaunchErrorKind::Agent, || {
                        format!("cannot load the agent {}", path.display())
                    })?;
                built.push((app.name.clone(), agent));
            }
            AppSource::YamlDir(dir) => {
                let loaded = loader
                    .load_apps(dir)
                    .await
                    .context(LaunchErrorKind::Agent, || {
                        let hint = if stdio_mcp {
                            ""
                        } else {
                            " (a server starts no MCP server as a local process unless \
                             --allow-stdio-mcp is given)"
                        };
                        format!("cannot load the agents of {}{hint}", dir.display())
                    })?;
                yaml_dirs.extend(
                    loaded
                        .iter()
                        .map(|app| (app.name.clone(), dir.join(&app.name))),
                );
                built.extend(loaded.into_iter().map(|app| (app.name, app.root_agent)));
            }
        }
    }
    Ok(BuiltApps {
        apps: built,
        yaml_dirs,
        loader,
        models,
    })
}

/// The models of one command: the one the flags and the environment choose, and the local model
/// when a YAML agent names `local`; each made ready once, on first need.
struct Models {
    args: ModelArgs,
    chosen: OnceCell<ChosenModel>,
    local: OnceCell<ChosenModel>,
    /// The names of the hosted models YAML agents were given.
    resolved: Mutex<BTreeSet<String>>,
    /// The first hosted model a YAML agent was given.
    first_resolved: Mutex<Option<Arc<dyn Llm>>>,
}

impl Models {
    async fn chosen(&self) -> Result<&ChosenModel, LaunchError> {
        self.chosen
            .get_or_try_init(|| model::choose(&self.args))
            .await
    }

    async fn local(&self) -> Result<&ChosenModel, LaunchError> {
        if let Some(chosen) = self.chosen.get()
            && chosen.is_local()
        {
            // The chosen model is the local one already: one server is enough.
            return Ok(chosen);
        }
        self.local.get_or_try_init(model::local_model).await
    }

    /// The model that writes summaries: one the command made ready already (the chosen one, the
    /// local one, or the first a YAML agent named), else the chosen one, made ready now.
    async fn summary_model(&self) -> Result<Arc<dyn Llm>, LaunchError> {
        let ready = [self.chosen.get(), self.local.get()]
            .into_iter()
            .flatten()
            .map(|model| model.llm.clone())
            .next()
            .or_else(|| self.first_resolved.lock().clone());
        match ready {
            Some(llm) => Ok(llm),
            None => Ok(self.chosen().await?.llm.clone()),
        }
    }
}

/// Summarizes a session whose request overflowed the model's context window, with the model the
/// command made ready (see [`Models::summary_model`]) and the runner's default prompt.
struct ReadyModelSummarizer(Arc<Models>);

#[async_trait]
impl Summarizer for ReadyModelSummarizer {
    async fn summarize(&self, events: &[&Event]) -> adk_core::Result<Option<Content>> {
        let llm = self
            .0
            .summary_model()
            .await
            .map_err(|error| Error::new(ErrorKind::Config, error.one_line()))?;
        LlmSummarizer::new(llm).summarize(events).await
    }
}

/// The model the command made ready, found at the first call.
struct ReadyModel {
    models: Arc<Models>,
    /// The model once found, kept so that later calls skip the lookup and name it.
    resolved: Arc<std::sync::OnceLock<Arc<dyn Llm>>>,
}

impl Llm for ReadyModel {
    fn name(&self) -> &str {
        self.resolved
            .get()
            .map_or("the model the command made ready", |llm| llm.name())
    }

    fn generate(
        &self,
        request: adk_core::LlmRequest,
        mode: adk_core::StreamingMode,
    ) -> adk_core::LlmResponseStream {
        use futures::{StreamExt as _, TryStreamExt as _};

        if let Some(llm) = self.resolved.get() {
            return llm.generate(request, mode);
        }
        let (models, resolved) = (self.models.clone(), self.resolved.clone());
        futures::stream::once(async move {
            let llm = models
                .summary_model()
                .await
                .map_err(|error| Error::new(ErrorKind::Config, error.one_line()))?;
            Ok::<_, Error>(resolved.get_or_init(|| llm).generate(request, mode))
        })
        .try_flatten()
        .boxed()
    }
}

/// The launcher's models as the YAML loader's resolver: `local` is the launcher's local model,
/// an agent that names no model gets the one the flags choose (or the environment's).
struct SharedModels(Arc<Models>);

#[async_trait]
impl ModelResolver for SharedModels {
    async fn resolve(&self, spec: &ModelSpec) -> adk_core::Result<Arc<dyn Llm>> {
        let models = &self.0;
        match spec {
            ModelSpec::Local if models.args.no_local_model => Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the agent's model is `local`, but the local model is turned off; {}",
                    model::NOTHING_CONFIGURED
                ),
            )),
            ModelSpec::Local => models
                .local()
                .await
                .map(|model| model.llm.clone())
                .map_err(|error| Error::new(ErrorKind::Config, error.one_line())),
            other => {
                let llm = EnvModelResolver::new().resolve(other).await?;
                models.resolved.lock().insert(llm.name().to_owned());
                models
                    .first_resolved
                    .lock()
                    .get_or_insert_with(|| llm.clone());
                Ok(llm)
            }
        }
    }

    fn default_model(&self) -> ModelSpec {
        model::flagged_spec(&self.0.args).unwrap_or_else(|| EnvModelResolver::new().default_model())
    }
}

/// The app named `name`, or an error listing the apps.
pub(crate) fn find<'a>(apps: &'a [App], name: &str) -> Result<&'a App, LaunchError> {
    apps.iter().find(|app| app.name == name).ok_or_else(|| {
        let names: Vec<&str> = apps.iter().map(|app| app.name.as_str()).collect();
        LaunchError::new(
            LaunchErrorKind::Usage,
            format!(
                "no agent named '{name}'; choose one of: {}, or name a folder holding a {ROOT_AGENT_FILE}",
                names.join(", ")
            ),
        )
    })
}

/// The app a command that runs one app talks to: a YAML agent at the path given, the app named,
/// or the only one.
pub(crate) fn choose(apps: &[App], name: Option<&str>) -> Result<App, LaunchError> {
    match (name, apps) {
        (Some(name), _) => match App::yaml(Path::new(name)) {
            Some(app) => Ok(app),
            None => find(apps, name).cloned(),
        },
        (None, [only]) => Ok(only.clone()),
        (None, _) => {
            let names: Vec<&str> = apps.iter().map(|app| app.name.as_str()).collect();
            Err(LaunchError::new(
                LaunchErrorKind::Usage,
                format!(
                    "name the agent to run: one of {}, or a folder holding a {ROOT_AGENT_FILE}",
                    names.join(", ")
                ),
            ))
        }
    }
}
