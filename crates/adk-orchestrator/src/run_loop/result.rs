//! [`LoopResult`]: how a run of the loop ended, with dspy-go's stop reasons and token usage.

use std::fmt;
use std::sync::Arc;

use adk_core::{Content, Event, UsageMetadata};
use serde::{Deserialize, Serialize};

/// The key of the loop's result in the `customMetadata` of its last event.
pub const LOOP_METADATA_KEY: &str = "run_loop";

/// Why the loop stopped: dspy-go's six stop reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model gave its final answer within the token budget.
    Finish,
    /// The loop reached its iteration limit before a final answer.
    MaxIterations,
    /// A model call, the strategy, the context transform or the model-call limit failed.
    Error,
    /// The invocation was cancelled or ended.
    Aborted,
    /// The token budget was spent before a final answer.
    BudgetExhausted,
    /// The model gave its final answer, but the call that gave it went over the budget.
    FinishOverBudget,
}

impl StopReason {
    /// The reason as dspy-go spells it (`finish`, `max_iterations`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Finish => "finish",
            Self::MaxIterations => "max_iterations",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::BudgetExhausted => "budget_exhausted",
            Self::FinishOverBudget => "finish_over_budget",
        }
    }

    /// Whether the model gave a final answer.
    pub fn is_finish(self) -> bool {
        matches!(self, Self::Finish | Self::FinishOverBudget)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tokens spent by the model calls of one run of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TokenUsage {
    /// Prompt tokens, summed over the calls.
    pub prompt_tokens: u64,
    /// Answer tokens, summed over the calls.
    pub completion_tokens: u64,
    /// All tokens, summed over the calls.
    pub total_tokens: u64,
}

impl TokenUsage {
    /// Adds the usage one model call reported.
    pub fn add(&mut self, usage: &UsageMetadata) {
        let prompt = u64::from(usage.prompt_token_count.unwrap_or(0));
        let completion = u64::from(usage.candidates_token_count.unwrap_or(0))
            + u64::from(usage.thoughts_token_count.unwrap_or(0));
        self.prompt_tokens += prompt;
        self.completion_tokens += completion;
        self.total_tokens += usage
            .total_token_count
            .map_or(prompt + completion, u64::from);
    }
}

/// How a run of the loop ended (dspy-go's `LoopResult`): why it stopped, after how many
/// iterations, with how many tokens, and the final answer or the error.
///
/// The loop writes it to the `customMetadata` of its last event under [`LOOP_METADATA_KEY`];
/// [`LoopResult::from_event`] reads it back. The history is not written there (the session holds
/// it), so a result read from an event has an empty [`messages`](Self::messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoopResult {
    /// Why the loop stopped.
    pub stop_reason: StopReason,
    /// How many model calls it made that were not retries after a context overflow.
    pub iterations: u32,
    /// The tokens its model calls spent.
    pub usage: TokenUsage,
    /// The text of the final answer, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// What went wrong, for [`StopReason::Error`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The conversation as the loop last sent it, new turns included.
    #[serde(skip)]
    pub messages: Arc<Vec<Content>>,
}

impl LoopResult {
    /// The result the loop wrote in `event`, if it is the loop's last event.
    pub fn from_event(event: &Event) -> Option<Self> {
        let value = event
            .response
            .custom_metadata
            .as_ref()?
            .get(LOOP_METADATA_KEY)?;
        Self::deserialize(value).ok()
    }
}
