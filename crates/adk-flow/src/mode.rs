//! [`AgentMode`]: how an `LlmAgent` is reached and how it hands control back (ADK 2.x's Task API):
//! by transfer (chat), as a multi-turn task ending with `finish_task` (task), or as a one-shot
//! tool (single turn).

use std::fmt;

use crate::{IncludeContents, LlmAgent};

/// How an agent is reached and how control comes back from it.
///
/// | mode | reached through | control comes back |
/// |---|---|---|
/// | [`Chat`](Self::Chat) | `transfer_to_agent` | by another transfer |
/// | [`Task`](Self::Task) | a tool named after the agent | when it calls `finish_task` |
/// | [`SingleTurn`](Self::SingleTurn) | a tool named after the agent | with its first answer |
///
/// A root agent and a sub-agent are chat agents unless told otherwise; an agent used as a node
/// of a workflow is a single-turn agent unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AgentMode {
    /// A conversational agent, reached by transfer.
    Chat,
    /// A multi-turn task: it may ask the user, and returns with `finish_task`.
    Task,
    /// Runs once on its input and returns its answer.
    SingleTurn,
}

impl AgentMode {
    /// The mode's name as ADK writes it (`chat`, `task`, `single_turn`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Task => "task",
            Self::SingleTurn => "single_turn",
        }
    }

    /// The mode named `name` (`chat`, `task`, `single_turn`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "chat" => Some(Self::Chat),
            "task" => Some(Self::Task),
            "single_turn" => Some(Self::SingleTurn),
            _ => None,
        }
    }
}

impl fmt::Display for AgentMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl LlmAgent {
    /// The mode the agent was given, if any (see [`AgentMode`] for the defaults).
    pub fn mode(&self) -> Option<AgentMode> {
        self.mode
    }

    /// A copy of this agent in `mode`, as a workflow runs it: a single-turn copy sees only its
    /// input (unless its history setting was chosen explicitly).
    pub fn in_mode(&self, mode: AgentMode) -> LlmAgent {
        let mut copy = self.duplicate();
        copy.mode = Some(mode);
        if mode == AgentMode::SingleTurn && !self.include_contents_set {
            copy.include_contents = IncludeContents::None;
        }
        copy
    }

    /// A field-by-field copy (the agent's parts are shared).
    fn duplicate(&self) -> LlmAgent {
        LlmAgent {
            base: self.base.clone(),
            model: self.model.clone(),
            instruction: self.instruction.clone(),
            global_instruction: self.global_instruction.clone(),
            tools: self.tools.clone(),
            toolsets: self.toolsets.clone(),
            generate_content_config: self.generate_content_config.clone(),
            include_contents: self.include_contents,
            include_contents_set: self.include_contents_set,
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            output_validator: self.output_validator.clone(),
            output_key: self.output_key.clone(),
            disallow_transfer_to_parent: self.disallow_transfer_to_parent,
            disallow_transfer_to_peers: self.disallow_transfer_to_peers,
            planner: self.planner.clone(),
            code_executor: self.code_executor.clone(),
            max_repeated_tool_calls: self.max_repeated_tool_calls,
            callbacks: self.callbacks.clone(),
            mode: self.mode,
        }
    }
}
