//! The agent card of an app, built from its agent tree: the root agent's name and description,
//! and a skill for the root agent's model, each tool of an `LlmAgent`, and each sub-agent.

use std::sync::Arc;

use adk_core::Agent;
use adk_flow::LlmAgent;
use axum::Json;
use axum::extract::{OriginalUri, State};
use http::HeaderMap;

use super::Inner;
use crate::AGENT_CARD_PATH;
use crate::types::{AgentCard, AgentSkill};

/// `GET /.well-known/agent-card.json`.
pub(super) async fn handler(
    State(inner): State<Arc<Inner>>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Json<AgentCard> {
    let url = match &inner.url {
        Some(url) => url.clone(),
        None => {
            let host = headers
                .get(http::header::HOST)
                .and_then(|host| host.to_str().ok())
                .unwrap_or("localhost");
            // Mounted under a prefix, JSON-RPC is served at the prefix itself; alone, at `/`.
            let prefix = uri.path().strip_suffix(AGENT_CARD_PATH).unwrap_or("");
            let path = match prefix.trim_end_matches('/') {
                "" => "/",
                prefix => prefix,
            };
            format!("http://{host}{path}")
        }
    };
    Json(build(&inner, &url))
}

/// The card of `inner`'s app, with JSON-RPC at `url`.
pub(super) fn build(inner: &Inner, url: &str) -> AgentCard {
    let root = inner.runner.root_agent();
    let description = inner
        .description
        .clone()
        .unwrap_or_else(|| root.description().to_owned());
    let mut card = AgentCard::new(root.name(), description, url);
    card.version = inner.version.clone();
    card.provider = inner.provider.clone();
    card.skills = skills(root);
    card
}

fn skills(root: &Arc<dyn Agent>) -> Vec<AgentSkill> {
    let mut skills = Vec::new();
    if let Some(llm) = root.downcast_ref::<LlmAgent>() {
        skills.push(AgentSkill::new(
            root.name(),
            "model",
            described(root.description(), llm.instruction_text()),
            ["llm"],
        ));
    }
    let mut pending: Vec<&Arc<dyn Agent>> = vec![root];
    while let Some(agent) = pending.pop() {
        if let Some(llm) = agent.downcast_ref::<LlmAgent>() {
            for tool in llm.tools() {
                skills.push(AgentSkill::new(
                    format!("{}-{}", agent.name(), tool.name()),
                    tool.name(),
                    tool.description(),
                    ["llm", "tools"],
                ));
            }
        }
        for sub_agent in agent.sub_agents() {
            skills.push(AgentSkill::new(
                sub_agent.name(),
                sub_agent.name(),
                sub_agent.description(),
                ["sub_agent"],
            ));
            pending.push(sub_agent);
        }
    }
    skills
}

/// The description of the root agent's skill: its description, else its instruction.
fn described(description: &str, instruction: &str) -> String {
    if description.is_empty() {
        instruction.to_owned()
    } else {
        description.to_owned()
    }
}
