//! The agents the command line bundles, by name.

use std::sync::Arc;

use adk_core::{Agent, Llm, Result};

/// Builds an example's agent tree on a model.
type BuildAgent = fn(Arc<dyn Llm>) -> Result<Arc<dyn Agent>>;

/// A bundled agent: the app name its sessions are stored under and how to build it on a model.
pub(crate) struct BundledAgent {
    pub(crate) app_name: &'static str,
    pub(crate) build: BuildAgent,
}

const BUNDLED: [(&str, BundledAgent); 5] = [
    (
        "quickstart",
        BundledAgent {
            app_name: quickstart::APP_NAME,
            build: quickstart::root_agent,
        },
    ),
    (
        "multi_agent",
        BundledAgent {
            app_name: multi_agent::APP_NAME,
            build: multi_agent::root_agent,
        },
    ),
    (
        "pipeline",
        BundledAgent {
            app_name: pipeline::APP_NAME,
            build: pipeline::root_agent,
        },
    ),
    (
        "confirmation",
        BundledAgent {
            app_name: confirmation::APP_NAME,
            build: confirmation::root_agent,
        },
    ),
    (
        "orchestrator",
        BundledAgent {
            app_name: orchestrator::APP_NAME,
            build: orchestrator::root_agent,
        },
    ),
];

/// Every bundled agent, by the name the command line knows it by.
pub(crate) fn all() -> impl Iterator<Item = (&'static str, &'static BundledAgent)> {
    BUNDLED.iter().map(|(name, agent)| (*name, agent))
}

/// The bundled agent named `name`.
pub(crate) fn find(name: &str) -> anyhow::Result<&'static BundledAgent> {
    BUNDLED
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, agent)| agent)
        .ok_or_else(|| {
            let names: Vec<&str> = BUNDLED.iter().map(|(known, _)| *known).collect();
            anyhow::anyhow!(
                "no agent named '{name}'; choose one of: {}",
                names.join(", ")
            )
        })
}
