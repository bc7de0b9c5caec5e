//! [`LoopStrategy`]: how the loop talks to the model (dspy-go's five steps), and the
//! [`DefaultStrategy`] for models with function calling.

use std::sync::Arc;

use adk_core::{
    Content, FunctionCall, FunctionDeclaration, GenerateContentConfig, Llm, LlmRequest,
    LlmResponse, LlmResponseStream, PartData, Result, StreamingMode,
};
use async_trait::async_trait;

use super::StopReason;

/// What a strategy builds the model request from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestInput<'a> {
    /// The model's name.
    pub model: &'a str,
    /// The agent's instruction.
    pub instruction: Option<&'a str>,
    /// The conversation so far, after the context transform.
    pub history: Arc<Vec<Content>>,
    /// The tools on offer (none when the policy is [`ToolUsePolicy::Disabled`]).
    pub tools: &'a [FunctionDeclaration],
    /// The agent's sampling settings.
    pub config: &'a GenerateContentConfig,
}

/// What the model's answer asks the loop to do (dspy-go's `LoopAction`).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct LoopAction {
    /// The tools to call.
    pub tool_calls: Vec<FunctionCall>,
    /// The model's reasoning, when it showed any.
    pub thought: Option<String>,
    /// The answer's text.
    pub output: Option<String>,
    /// A stop the strategy decided on; the loop stops with it after this answer's tool calls.
    pub stop_reason: Option<StopReason>,
}

/// How the loop runs the tool calls of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolUsePolicy {
    /// At the same time, up to the config's `max_tool_concurrency`.
    #[default]
    Parallel,
    /// One after the other, in the order the model gave them.
    Sequential,
    /// No tools are offered, and a call the model makes anyway is answered with an error.
    Disabled,
}

/// How the loop talks to the model (dspy-go's `LoopStrategy`): it builds the request, owns the
/// call, reads the answer, decides whether to go on, and says how tools are used. It may also
/// react to a context overflow.
#[async_trait]
pub trait LoopStrategy: Send + Sync {
    /// Builds the model request of one iteration.
    async fn prepare_request(&self, input: RequestInput<'_>) -> Result<LlmRequest>;

    /// Calls the model; by default `model.generate(request, mode)`.
    fn call_model(
        &self,
        model: Arc<dyn Llm>,
        request: LlmRequest,
        mode: StreamingMode,
    ) -> LlmResponseStream {
        model.generate(request, mode)
    }

    /// Reads the model's final answer of one iteration.
    fn parse_response(&self, response: &LlmResponse) -> Result<LoopAction>;

    /// Whether the loop goes on after `action`, in iteration `iteration` (from 1).
    fn should_continue(&self, action: &LoopAction, iteration: u32) -> bool;

    /// How tool calls run.
    fn tool_use_policy(&self) -> ToolUsePolicy {
        ToolUsePolicy::Parallel
    }

    /// The history to retry with after the model reported that `history` overflowed its
    /// context window, or `None` to stop with an error. The loop retries once per iteration.
    fn on_context_overflow(&self, history: &Arc<Vec<Content>>) -> Option<Arc<Vec<Content>>> {
        let _ = history;
        None
    }
}

/// The strategy for models with function calling: the history, instruction and tools go to the
/// model as they are; its function calls are the tool calls; it goes on while the model calls
/// tools; and on a context overflow it drops the older half of the history (keeping the first
/// message, and never separating a tool result from its call) and retries.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultStrategy {
    policy: ToolUsePolicy,
}

impl DefaultStrategy {
    /// The default strategy with tool calls in parallel.
    pub fn new() -> Self {
        Self::default()
    }

    /// The default strategy with another tool-use policy.
    pub fn with_tool_use_policy(mut self, policy: ToolUsePolicy) -> Self {
        self.policy = policy;
        self
    }
}

#[async_trait]
impl LoopStrategy for DefaultStrategy {
    async fn prepare_request(&self, input: RequestInput<'_>) -> Result<LlmRequest> {
        let mut request = LlmRequest::default();
        request.model = input.model.to_owned();
        request.contents = input.history;
        request.system_instruction = input.instruction.map(str::to_owned);
        request.tools = input.tools.to_vec();
        request.config = input.config.clone();
        Ok(request)
    }

    fn parse_response(&self, response: &LlmResponse) -> Result<LoopAction> {
        let mut action = LoopAction::default();
        let Some(content) = &response.content else {
            return Ok(action);
        };
        let mut thought = String::new();
        let mut output = String::new();
        for part in &content.parts {
            match &part.data {
                PartData::FunctionCall(call) => action.tool_calls.push(call.clone()),
                PartData::Text(text) if part.thought => thought.push_str(text),
                PartData::Text(text) => output.push_str(text),
                _ => {}
            }
        }
        action.thought = (!thought.is_empty()).then_some(thought);
        action.output = (!output.is_empty()).then_some(output);
        Ok(action)
    }

    fn should_continue(&self, action: &LoopAction, _iteration: u32) -> bool {
        !action.tool_calls.is_empty() && action.stop_reason.is_none()
    }

    fn tool_use_policy(&self) -> ToolUsePolicy {
        self.policy
    }

    fn on_context_overflow(&self, history: &Arc<Vec<Content>>) -> Option<Arc<Vec<Content>>> {
        trim_history(history).map(Arc::new)
    }
}

/// The history without its older half: the first content, then the contents from the middle on,
/// starting at one that is not a tool result (which must follow its call). `None` when nothing
/// can be dropped.
pub(crate) fn trim_history(history: &[Content]) -> Option<Vec<Content>> {
    if history.len() < 3 {
        return None;
    }
    let is_tool_result = |content: &Content| {
        content
            .parts
            .iter()
            .any(|part| matches!(part.data, PartData::FunctionResponse(_)))
    };
    let mut cut = history.len() / 2;
    while cut < history.len() && is_tool_result(&history[cut]) {
        cut += 1;
    }
    if cut <= 1 || cut >= history.len() {
        return None;
    }
    let mut trimmed = Vec::with_capacity(history.len() - cut + 1);
    trimmed.push(history[0].clone());
    trimmed.extend_from_slice(&history[cut..]);
    Some(trimmed)
}

adk_core::__into_shared!(
    /// A [`LoopStrategy`] as a builder takes it: the strategy itself, an `Arc` of it, or an
    /// `Arc<dyn LoopStrategy>`.
    IntoLoopStrategy,
    into_loop_strategy,
    LoopStrategy,
    "`{Self}` is not a loop strategy"
);
