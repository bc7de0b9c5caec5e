//! [`RunConfig`]: the settings of one run.

use serde_json::{Map, Value};

use crate::StreamingMode;

/// Settings of one run.
///
/// ```
/// use adk_core::{RunConfig, StreamingMode};
///
/// let config = RunConfig::default().with_streaming_mode(StreamingMode::Sse);
/// assert_eq!(config.max_llm_calls, 500);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunConfig {
    /// Whether model output is streamed.
    pub streaming_mode: StreamingMode,
    /// The most model calls one invocation may make; past it the run fails with
    /// [`ErrorKind::LlmCallsLimitExceeded`](crate::ErrorKind::LlmCallsLimitExceeded). `0` means
    /// no limit.
    pub max_llm_calls: u32,
    /// Metadata attached to the events of the run.
    pub custom_metadata: Map<String, Value>,
    /// Save inline bytes of the user's message as artifacts instead of sending them in history.
    pub save_input_blobs_as_artifacts: bool,
    /// The loop guard, for every agent of the run that sets none of its own: how many calls of
    /// one tool with the same arguments one agent's model gets answered in one invocation. The
    /// first runs the tool, the later ones get its result back with a note to answer, and the
    /// call past the limit ends the agent's turn with a message saying so. Default
    /// [`DEFAULT_MAX_REPEATED_TOOL_CALLS`]; `None` or `Some(0)` turns the guard off.
    pub max_repeated_tool_calls: Option<u32>,
    /// How many function calls of one model response run at once; the others wait for a slot.
    /// `0` means no cap. A model can ask for any number of calls in one response, and each may
    /// open connections or processes, so the default caps them at 16.
    pub max_concurrent_tool_calls: usize,
    /// The largest tool result, in bytes of its JSON, that reaches the history (and so the model
    /// and storage) whole; a larger one is cut to this size with a note saying so. Default
    /// [`DEFAULT_MAX_TOOL_RESULT_BYTES`] (512 KiB); `0` means no limit.
    pub max_tool_result_bytes: usize,
}

/// The default of [`RunConfig::max_repeated_tool_calls`]: a call is answered three times (run
/// once, its result given back twice), and the fourth identical call ends the turn. A model that
/// asks the same thing a fourth time after being told to answer is looping, whatever the model.
pub const DEFAULT_MAX_REPEATED_TOOL_CALLS: u32 = 3;

/// The default of [`RunConfig::max_tool_result_bytes`]: 512 KiB, about 130 000 tokens.
pub const DEFAULT_MAX_TOOL_RESULT_BYTES: usize = 512 * 1024;

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            streaming_mode: StreamingMode::None,
            max_llm_calls: 500,
            custom_metadata: Map::new(),
            save_input_blobs_as_artifacts: false,
            max_repeated_tool_calls: Some(DEFAULT_MAX_REPEATED_TOOL_CALLS),
            max_concurrent_tool_calls: 16,
            max_tool_result_bytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
        }
    }
}

impl RunConfig {
    /// Sets the streaming mode.
    pub fn with_streaming_mode(mut self, mode: StreamingMode) -> Self {
        self.streaming_mode = mode;
        self
    }

    /// Sets the model-call limit.
    pub fn with_max_llm_calls(mut self, limit: u32) -> Self {
        self.max_llm_calls = limit;
        self
    }

    /// Sets how many function calls of one model response run at once (`0`: no cap).
    pub fn with_max_concurrent_tool_calls(mut self, limit: usize) -> Self {
        self.max_concurrent_tool_calls = limit;
        self
    }

    /// Sets the loop guard's limit (see [`max_repeated_tool_calls`](Self::max_repeated_tool_calls))
    /// for agents that set none of their own; `0` turns the guard off.
    pub fn with_max_repeated_tool_calls(mut self, limit: u32) -> Self {
        self.max_repeated_tool_calls = Some(limit);
        self
    }

    /// Sets the largest tool result kept whole, in bytes of its JSON (`0`: no limit).
    pub fn with_max_tool_result_bytes(mut self, limit: usize) -> Self {
        self.max_tool_result_bytes = limit;
        self
    }
}
