//! The agent configs, one per class: [`LlmAgentConfig`], [`WorkflowAgentConfig`] (for
//! `SequentialAgent` and `ParallelAgent`) and [`LoopAgentConfig`], with the keys of ADK Python's
//! agent configs that adk-rs honours. Their doc comments are what editors show for each key.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};

use super::agent_class::{self, AgentClass};
use super::agent_name::AgentName;
use super::code_executor::CodeExecutorRef;
use super::generate::GenerateContentSettings;
use super::model_name::ModelSpec;
use super::section::{self, Section};
use super::sub_agents::SubAgentRef;
use super::tools::ToolList;

/// Why callbacks cannot come from YAML, and what to do instead.
const CALLBACKS: &str = "it names Python functions, and adk-rs loads no code from YAML; add the \
    callback to the agent in Rust with its builder (LlmAgentBuilder::before_model_callback and \
    the like)";

/// The keys of ADK Python's base agent config that adk-rs cannot honour.
const AGENT_CALLBACKS: [(&str, &str); 2] = [
    ("before_agent_callbacks", CALLBACKS),
    ("after_agent_callbacks", CALLBACKS),
];

/// An agent that thinks with a model: each step calls the model with the instruction and the
/// session's history, runs the tools it asks for, and hands over to a sub-agent when it
/// transfers.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "LlmAgent")]
pub(crate) struct LlmAgentConfig {
    /// The class of agent; LlmAgent when absent.
    #[serde(default)]
    #[schemars(schema_with = "agent_class::llm_agent_schema")]
    pub(crate) agent_class: Option<AgentClass>,
    /// The agent's name.
    pub(crate) name: AgentName,
    /// What the agent does; other agents' models read it to decide whether to transfer to it.
    #[serde(default)]
    pub(crate) description: String,
    /// The model.
    #[serde(default)]
    pub(crate) model: Option<ModelSpec>,
    /// The instruction, a template: `{var}` is replaced by state `var` (an error when it is
    /// missing), `{var?}` by state `var` or nothing, `{app:var}` and `{user:var}` by scoped state,
    /// `{artifact.name}` by the text of artifact `name`.
    #[serde(default)]
    pub(crate) instruction: Option<String>,
    /// Sampling and output settings of every model call.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) generate_content_config: Option<GenerateContentSettings>,
    /// Saves the agent's final answer in this state key.
    #[serde(default)]
    pub(crate) output_key: Option<String>,
    /// Which history the model sees: `default` (the agent's branch of the session) or `none`
    /// (only the current turn).
    #[serde(default)]
    pub(crate) include_contents: IncludeContentsSetting,
    /// Forbids the model to transfer back to the parent agent.
    #[serde(default)]
    pub(crate) disallow_transfer_to_parent: Option<bool>,
    /// Forbids the model to transfer to sibling agents.
    #[serde(default)]
    pub(crate) disallow_transfer_to_peers: Option<bool>,
    /// The agents this one may transfer to.
    #[serde(default)]
    pub(crate) sub_agents: Option<Vec<SubAgentRef>>,
    /// The tools the model may call.
    #[serde(default)]
    pub(crate) tools: Option<ToolList>,
    /// The loop guard: how many calls of one tool with the same arguments the model gets
    /// answered in one turn. The first runs the tool, the later ones get its result back with a
    /// note to answer, and the call past the limit ends the turn with a message saying so. `0`
    /// turns the guard off; by default 3 (the run's setting). An adk-rs key: ADK Python refuses
    /// it.
    #[serde(default)]
    pub(crate) max_repeated_tool_calls: Option<u32>,
    /// Runs the code the model writes: `BuiltInCodeExecutor` (the provider runs it),
    /// `SandboxedCodeExecutor` (here, in a bubblewrap sandbox; loading fails where there is
    /// none) or `UnsafeLocalCodeExecutor` (here, without a sandbox), with `args` for the local
    /// ones' limits. An adk-rs key: ADK Python sets an executor in code.
    #[serde(default)]
    pub(crate) code_executor: Option<CodeExecutorRef>,
}

impl Section for LlmAgentConfig {
    const WHAT: &'static str = "an LlmAgent";
    const REQUIRED: &'static [&'static str] = &["name"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        AGENT_CALLBACKS[0],
        AGENT_CALLBACKS[1],
        ("before_model_callbacks", CALLBACKS),
        ("after_model_callbacks", CALLBACKS),
        ("before_tool_callbacks", CALLBACKS),
        ("after_tool_callbacks", CALLBACKS),
        (
            "model_code",
            "it names Python code that builds a model; name the model with `model` \
             (`gemini-*`, `claude-*`, `openai/<name>`, `local`, ...), or pass the loader a model resolver \
             that builds it",
        ),
        (
            "static_instruction",
            "adk-rs has no static instructions; put the text in `instruction`",
        ),
        (
            "input_schema",
            "it names a Python class; set the schema in Rust with \
             LlmAgentBuilder::input_schema",
        ),
        (
            "output_schema",
            "it names a Python class; set the schema in Rust with \
             LlmAgentBuilder::output_schema",
        ),
    ];
}

/// Which history the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IncludeContentsSetting {
    /// The history of the agent's branch, other agents' turns shown as context.
    #[default]
    Default,
    /// Only the current turn.
    None,
}

/// A SequentialAgent runs its sub-agents one after another; a ParallelAgent runs them at the
/// same time, each on its own branch.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "SequentialAgent or ParallelAgent")]
pub(crate) struct WorkflowAgentConfig {
    /// The class of agent.
    #[schemars(schema_with = "agent_class::workflow_agent_schema")]
    pub(crate) agent_class: AgentClass,
    /// The agent's name.
    pub(crate) name: AgentName,
    /// What the agent does.
    #[serde(default)]
    pub(crate) description: String,
    /// The agents it runs, in order.
    #[serde(default)]
    pub(crate) sub_agents: Option<Vec<SubAgentRef>>,
}

impl Section for WorkflowAgentConfig {
    const WHAT: &'static str = "a SequentialAgent or ParallelAgent";
    const REQUIRED: &'static [&'static str] = &["agent_class", "name"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &AGENT_CALLBACKS;
}

/// A LoopAgent runs its sub-agents in turn, round after round, until one escalates (the
/// `exit_loop` tool) or `max_iterations` rounds are done.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "LoopAgent")]
pub(crate) struct LoopAgentConfig {
    /// The class of agent.
    #[schemars(schema_with = "agent_class::loop_agent_schema")]
    pub(crate) agent_class: AgentClass,
    /// The agent's name.
    pub(crate) name: AgentName,
    /// What the agent does.
    #[serde(default)]
    pub(crate) description: String,
    /// The agents it runs each round, in order.
    #[serde(default)]
    pub(crate) sub_agents: Option<Vec<SubAgentRef>>,
    /// The most rounds; no limit when absent or 0, as in ADK Python.
    #[serde(default)]
    pub(crate) max_iterations: Option<MaxIterations>,
}

impl Section for LoopAgentConfig {
    const WHAT: &'static str = "a LoopAgent";
    const REQUIRED: &'static [&'static str] = &["agent_class", "name"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &AGENT_CALLBACKS;
}

/// The most rounds of a loop; `None` is no limit (ADK Python reads 0 so too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MaxIterations(pub(crate) Option<u32>);

impl<'de> Deserialize<'de> for MaxIterations {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MaxIterationsVisitor)
    }
}

struct MaxIterationsVisitor;

impl<'de> Visitor<'de> for MaxIterationsVisitor {
    type Value = MaxIterations;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of rounds (0 or more)")
    }

    fn visit_u64<E: de::Error>(self, rounds: u64) -> Result<MaxIterations, E> {
        let rounds = u32::try_from(rounds).map_err(|_| {
            E::custom(format!(
                "{rounds} rounds are too many; the most is {}",
                u32::MAX
            ))
        })?;
        Ok(MaxIterations((rounds > 0).then_some(rounds)))
    }

    fn visit_i64<E: de::Error>(self, rounds: i64) -> Result<MaxIterations, E> {
        match u64::try_from(rounds) {
            Ok(rounds) => self.visit_u64(rounds),
            Err(_) => Err(E::custom(format!(
                "{rounds} is negative; use 0 or more rounds (0 is no limit)"
            ))),
        }
    }
}

impl JsonSchema for MaxIterations {
    fn schema_name() -> Cow<'static, str> {
        "MaxIterations".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 0, "maximum": u32::MAX })
    }
}

/// The JSON Schema of a config file: one of the three configs.
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(
    title = "adk-rs agent config",
    description = "An agent described in YAML, as ADK Python's root_agent.yaml describes it: an \
        LlmAgent (the default), a SequentialAgent, a ParallelAgent, a LoopAgent or a graph \
        Workflow."
)]
#[allow(dead_code)]
pub(crate) enum AgentConfigFile {
    /// An LlmAgent.
    Llm(Box<LlmAgentConfig>),
    /// A SequentialAgent or a ParallelAgent.
    Workflow(WorkflowAgentConfig),
    /// A LoopAgent.
    Loop(LoopAgentConfig),
    /// A graph Workflow.
    GraphWorkflow(super::workflow::WorkflowConfig),
}
