//! The apps a launcher knows, and building the ones a command runs: a ready agent tree, or one
//! built on the model the command line chooses (started only when some app needs it).

use std::sync::Arc;

use adk_core::{Agent, Llm, RunConfig};

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
}

/// An app: the name its sessions are stored under and where its agent tree comes from.
#[derive(Clone)]
pub(crate) struct App {
    pub(crate) name: String,
    pub(crate) source: AppSource,
}

/// The agent trees of the apps a command runs, and the model they were built on (kept alive: a
/// local model's server stops when it is dropped).
pub(crate) struct BuiltApps {
    pub(crate) apps: Vec<(String, Arc<dyn Agent>)>,
    pub(crate) model: Option<ChosenModel>,
}

impl BuiltApps {
    /// The settings runs start from: the loop guard when the chosen model needs it.
    pub(crate) fn run_config(&self) -> RunConfig {
        let config = RunConfig::default();
        match self
            .model
            .as_ref()
            .and_then(|model| model.max_repeated_tool_calls)
        {
            Some(limit) => config.with_max_repeated_tool_calls(limit),
            None => config,
        }
    }

    /// The chosen model's name, or a word saying the apps bring their own.
    pub(crate) fn model_name(&self) -> String {
        self.model.as_ref().map_or_else(
            || "their own models".to_owned(),
            |model| model.llm.name().to_owned(),
        )
    }
}

/// Builds `apps`, choosing a model when the first app that needs one is built.
pub(crate) async fn build(apps: &[App], model_args: &ModelArgs) -> Result<BuiltApps, LaunchError> {
    let mut model: Option<ChosenModel> = None;
    let mut built = Vec::with_capacity(apps.len());
    for app in apps {
        let agent = match &app.source {
            AppSource::Agent(agent) => agent.clone(),
            AppSource::OnModel(build) => {
                let chosen = match &mut model {
                    Some(chosen) => chosen,
                    empty @ None => empty.insert(model::choose(model_args).await?),
                };
                build(chosen.llm.clone()).context(LaunchErrorKind::Agent, || {
                    format!("cannot build the agent of {}", app.name)
                })?
            }
        };
        built.push((app.name.clone(), agent));
    }
    Ok(BuiltApps { apps: built, model })
}

/// The app named `name`, or an error listing the apps.
pub(crate) fn find<'a>(apps: &'a [App], name: &str) -> Result<&'a App, LaunchError> {
    apps.iter().find(|app| app.name == name).ok_or_else(|| {
        let names: Vec<&str> = apps.iter().map(|app| app.name.as_str()).collect();
        LaunchError::new(
            LaunchErrorKind::Usage,
            format!(
                "no agent named '{name}'; choose one of: {}",
                names.join(", ")
            ),
        )
    })
}

/// The app a command that runs one app talks to: the one named, or the only one.
pub(crate) fn choose<'a>(apps: &'a [App], name: Option<&str>) -> Result<&'a App, LaunchError> {
    match (name, apps) {
        (Some(name), _) => find(apps, name),
        (None, [only]) => Ok(only),
        (None, _) => {
            let names: Vec<&str> = apps.iter().map(|app| app.name.as_str()).collect();
            Err(LaunchError::new(
                LaunchErrorKind::Usage,
                format!("name the agent to run: one of {}", names.join(", ")),
            ))
        }
    }
}
