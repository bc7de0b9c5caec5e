//! [`AgentClass`]: the `agent_class:` of a config, in every spelling ADK Python accepts for the
//! classes adk-rs builds, and the schemas that list them for editors.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

use super::scalar::{parse_string, quoted_list};

/// The class of agent a config describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentClass {
    /// An agent that thinks with a model; the class when `agent_class` is absent.
    Llm,
    /// Runs its sub-agents one after another.
    Sequential,
    /// Runs its sub-agents at the same time.
    Parallel,
    /// Runs its sub-agents in turn, again and again.
    Loop,
    /// A graph workflow of nodes joined by edges.
    Workflow,
}

/// Every spelling of `LlmAgent` ADK Python accepts: its names, its import paths, and the empty
/// string, which means the default.
const LLM_AGENT: &[&str] = &[
    "LlmAgent",
    "Agent",
    "google.adk.agents.LlmAgent",
    "google.adk.agents.Agent",
    "google.adk.agents.llm_agent.LlmAgent",
    "google.adk.agents.llm_agent.Agent",
    "",
];

/// Every spelling of `SequentialAgent`.
const SEQUENTIAL_AGENT: &[&str] = &[
    "SequentialAgent",
    "google.adk.agents.SequentialAgent",
    "google.adk.agents.sequential_agent.SequentialAgent",
];

/// Every spelling of `ParallelAgent`.
const PARALLEL_AGENT: &[&str] = &[
    "ParallelAgent",
    "google.adk.agents.ParallelAgent",
    "google.adk.agents.parallel_agent.ParallelAgent",
];

/// Every spelling of the graph `Workflow` (ADK Python looks in `google.adk.agents`, then in
/// `google.adk.workflow`).
const WORKFLOW: &[&str] = &[
    "Workflow",
    "google.adk.Workflow",
    "google.adk.workflow.Workflow",
    "google.adk.workflow._workflow.Workflow",
];

/// Every spelling of `LoopAgent`.
const LOOP_AGENT: &[&str] = &[
    "LoopAgent",
    "google.adk.agents.LoopAgent",
    "google.adk.agents.loop_agent.LoopAgent",
];

impl AgentClass {
    /// The class a spelling names.
    fn from_spelling(spelling: &str) -> Result<Self, String> {
        let classes = [
            (Self::Llm, LLM_AGENT),
            (Self::Sequential, SEQUENTIAL_AGENT),
            (Self::Parallel, PARALLEL_AGENT),
            (Self::Loop, LOOP_AGENT),
            (Self::Workflow, WORKFLOW),
        ];
        classes
            .into_iter()
            .find(|(_, spellings)| spellings.contains(&spelling))
            .map(|(class, _)| class)
            .ok_or_else(|| {
                format!(
                    "unknown agent_class `{spelling}`; adk-rs builds {} (`LlmAgent` is the \
                     default and is also spelled `Agent`; each may also be named by its \
                     `google.adk` path)",
                    quoted_list([
                        "LlmAgent",
                        "SequentialAgent",
                        "ParallelAgent",
                        "LoopAgent",
                        "Workflow"
                    ])
                )
            })
    }

    /// How messages name an agent of the class.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Self::Llm => "an LlmAgent",
            Self::Sequential => "a SequentialAgent",
            Self::Parallel => "a ParallelAgent",
            Self::Loop => "a LoopAgent",
            Self::Workflow => "a Workflow",
        }
    }
}

impl<'de> Deserialize<'de> for AgentClass {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(
            deserializer,
            "an agent class name",
            AgentClass::from_spelling,
        )
    }
}

/// The schema of `agent_class` in an `LlmAgent` config.
pub(crate) fn llm_agent_schema(_generator: &mut SchemaGenerator) -> Schema {
    class_schema(
        LLM_AGENT,
        "LlmAgent, the default when absent: an agent that thinks with a model.",
    )
}

/// The schema of `agent_class` in a `SequentialAgent` or `ParallelAgent` config.
pub(crate) fn workflow_agent_schema(_generator: &mut SchemaGenerator) -> Schema {
    let spellings: Vec<&str> = SEQUENTIAL_AGENT
        .iter()
        .chain(PARALLEL_AGENT)
        .copied()
        .collect();
    class_schema(
        &spellings,
        "SequentialAgent runs its sub-agents one after another; ParallelAgent runs them at the \
         same time, each on its own branch.",
    )
}

/// The schema of `agent_class` in a `LoopAgent` config.
pub(crate) fn loop_agent_schema(_generator: &mut SchemaGenerator) -> Schema {
    class_schema(
        LOOP_AGENT,
        "LoopAgent runs its sub-agents in turn until one escalates (the exit_loop tool) or \
         max_iterations rounds are done.",
    )
}

/// The schema of `agent_class` in a graph `Workflow` config.
pub(crate) fn graph_workflow_schema(_generator: &mut SchemaGenerator) -> Schema {
    class_schema(
        WORKFLOW,
        "Workflow runs a graph of nodes from START along its edges, each node's output passed to \
         the nodes its route leads to.",
    )
}

fn class_schema(spellings: &[&str], description: &str) -> Schema {
    json_schema!({
        "type": "string",
        "enum": spellings,
        "description": description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_python_spelling_names_its_class() {
        assert_eq!(AgentClass::from_spelling(""), Ok(AgentClass::Llm));
        assert_eq!(AgentClass::from_spelling("Agent"), Ok(AgentClass::Llm));
        assert_eq!(
            AgentClass::from_spelling("google.adk.agents.loop_agent.LoopAgent"),
            Ok(AgentClass::Loop)
        );
        assert_eq!(
            AgentClass::from_spelling("ParallelAgent"),
            Ok(AgentClass::Parallel)
        );
        assert_eq!(
            AgentClass::from_spelling("google.adk.workflow.Workflow"),
            Ok(AgentClass::Workflow)
        );
    }

    #[test]
    fn other_classes_are_refused_with_the_four_named() {
        let error = AgentClass::from_spelling("my_package.MyAgent").unwrap_err();
        assert!(
            error.starts_with("unknown agent_class `my_package.MyAgent`; adk-rs builds `LlmAgent`, `SequentialAgent`, `ParallelAgent`, `LoopAgent` and `Workflow`"),
            "{error}"
        );
    }
}
