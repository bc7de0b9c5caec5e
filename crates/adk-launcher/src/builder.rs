//! adk-web's Builder tab under `adk web`: the apps described in YAML may be edited, and new ones
//! created in the agents folder; a save is checked with the loader that built them (so the same
//! tools, and the same rule on MCP servers started as local processes, hold), and the saved app
//! is built again on the launcher's services and models.

use std::path::Path;
use std::sync::Arc;

use adk_config::{AgentLoader, ConfigError};
use adk_runner::{Runner, Summarizer};
use adk_server::builder::{AgentFiles, BoxError, FileProblem, YamlApps};
use futures::future::BoxFuture;

use crate::apps::BuiltApps;
use crate::store::Services;

/// The YAML apps of `built`, editable in the Builder tab, rebuilt on `services`; new apps are
/// created in `agents_dir`, the folder of YAML agents the command serves, when there is one.
pub(crate) fn yaml_apps(
    built: &BuiltApps,
    agents_dir: Option<&Path>,
    services: Arc<Services>,
) -> Option<YamlApps> {
    if built.yaml_dirs.is_empty() && agents_dir.is_none() {
        return None;
    }
    let files = LoaderFiles {
        loader: built.loader.clone(),
        services,
        overflow: built.overflow_summarizer(),
    };
    let apps = built
        .yaml_dirs
        .iter()
        .fold(YamlApps::new(files), |apps, (name, dir)| {
            apps.app(name.clone(), dir.clone())
        });
    // A folder that is itself one agent holds no other apps, so none are created in it.
    Some(match agents_dir {
        Some(dir) if !dir.join(adk_config::ROOT_AGENT_FILE).is_file() => apps.new_apps_in(dir),
        _ => apps,
    })
}

/// Checks and rebuilds YAML apps with the launcher's loader and services.
struct LoaderFiles {
    loader: AgentLoader,
    services: Arc<Services>,
    overflow: Option<Arc<dyn Summarizer>>,
}

impl AgentFiles for LoaderFiles {
    fn check<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Result<(), FileProblem>> {
        Box::pin(async move { self.loader.check(root).await.map_err(problem) })
    }

    fn reload<'a>(
        &'a self,
        app: &'a str,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Runner, BoxError>> {
        Box::pin(async move {
            let agent = self.loader.load(dir).await?;
            let runner = self
                .services
                .runner(app, agent, false, true, self.overflow.clone())?;
            Ok(runner)
        })
    }
}

fn problem(error: ConfigError) -> FileProblem {
    FileProblem::new(
        error.file(),
        error.location().map(|at| (at.line, at.column)),
        error.message(),
    )
}
