//! [`AgentMode`]: how an `LlmAgent` is reached and how it hands control back (ADK 2.x's Task API):
//! by transfer (chat), as a multi-turn task ending with `finish_task` (task), or as a one-shot
//! tool (single turn).

use std::fmt;

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
