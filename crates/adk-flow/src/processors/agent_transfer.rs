//! `agent_transfer`: offers the model a `transfer_to_agent` tool whose argument is one of the
//! agents it may hand over to (its sub-agents, its parent and its peers unless disallowed), and
//! tells it who they are.

use std::fmt::Write as _;
use std::sync::Arc;

use adk_core::{Agent, Error, ErrorKind, FunctionDeclaration, LlmRequest, Result};
use adk_tool::{Tool, ToolContext, ToolEffect};
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::LlmAgent;
use crate::step::Step;

/// The name of the tool that hands the conversation to another agent.
pub(crate) const TRANSFER_TO_AGENT: &str = "transfer_to_agent";

pub(super) fn process(step: &mut Step, request: &mut LlmRequest) {
    let targets = transfer_targets(step);
    if targets.is_empty() {
        return;
    }
    let parent = parent_target(step).map(|parent| parent.name().to_owned());
    request.append_instructions([instructions(&targets, parent.as_deref())]);
    let tool = TransferToAgent {
        targets: targets
            .iter()
            .map(|agent| agent.name().to_owned())
            .collect(),
    };
    if let Some(declaration) = tool.declaration() {
        request.append_tools([declaration]);
    }
    step.tools
        .insert(TRANSFER_TO_AGENT.to_owned(), Arc::new(tool));
}

/// Whether the agent of `step` may hand the conversation to agent `name`: the same rule the
/// built-in tool offers the model, enforced by the flow for any tool that asks for a transfer.
pub(crate) fn may_transfer_to(step: &Step, name: &str) -> bool {
    transfer_targets(step)
        .iter()
        .any(|agent| agent.name() == name)
}

/// Whether the agent may transfer to any agent, so that its requests declare the transfer tool.
pub(crate) fn has_transfer_targets(step: &Step) -> bool {
    !transfer_targets(step).is_empty()
}

/// The agents this one may transfer to: its sub-agents, then its parent and its peers when the
/// parent is an `LlmAgent` and they are not disallowed; only chat agents (task and single-turn
/// agents are reached through their tools).
fn transfer_targets(step: &Step) -> Vec<Arc<dyn Agent>> {
    let agent = &step.agent;
    let mut targets: Vec<Arc<dyn Agent>> = agent.base.sub_agents.clone();
    if let Some(parent) = parent_llm_agent(step) {
        if !agent.disallow_transfer_to_parent {
            targets.extend(parent_target(step));
        }
        if !agent.disallow_transfer_to_peers {
            let peers = parent.base.sub_agents.iter();
            targets.extend(peers.filter(|peer| peer.name() != agent.base.name).cloned());
        }
    }
    targets.retain(crate::task::is_transfer_target);
    targets
}

fn parent_llm_agent(step: &Step) -> Option<&LlmAgent> {
    step.ctx
        .agent_tree()
        .parent_of(&step.agent.base.name)?
        .downcast_ref::<LlmAgent>()
}

fn parent_target(step: &Step) -> Option<Arc<dyn Agent>> {
    parent_llm_agent(step)?;
    if step.agent.disallow_transfer_to_parent {
        return None;
    }
    step.ctx
        .agent_tree()
        .parent_of(&step.agent.base.name)
        .cloned()
}

fn instructions(targets: &[Arc<dyn Agent>], parent: Option<&str>) -> String {
    let mut text = String::from("You can hand the conversation over to these agents:\n");
    for agent in targets {
        let _ = write!(
            text,
            "\nAgent name: {}\nAgent description: {}\n",
            agent.name(),
            agent.description()
        );
    }
    let _ = write!(
        text,
        "\nAnswer yourself when your own description fits the question best. When another agent \
         fits it better, call `{TRANSFER_TO_AGENT}` with that agent's name and write nothing else."
    );
    if let Some(parent) = parent {
        let _ = write!(
            text,
            " When neither you nor those agents fit the question, transfer to your parent agent, {parent}."
        );
    }
    text
}

/// Hands the conversation to another agent after this step.
struct TransferToAgent {
    targets: Vec<String>,
}

#[async_trait]
impl Tool for TransferToAgent {
    fn name(&self) -> &str {
        TRANSFER_TO_AGENT
    }

    fn effect(&self) -> ToolEffect {
        // Its only effects travel in its response event, which is stored atomically.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        "Hands the conversation to the named agent, which answers the user from now on."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(
            FunctionDeclaration::new(self.name(), self.description()).with_parameters(json!({
                "type": "object",
                "properties": {
                    "agent_name": {
                        "type": "string",
                        "description": "the name of the agent to hand over to",
                        "enum": self.targets,
                    }
                },
                "required": ["agent_name"],
            })),
        )
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        let name = args
            .get("agent_name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !self.targets.iter().any(|target| target == name) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "'{name}' is not an agent you can transfer to; choose one of: {}",
                    self.targets.join(", ")
                ),
            ));
        }
        ctx.transfer_to_agent(name);
        Ok(Value::Null)
    }
}
