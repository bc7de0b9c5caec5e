//! The configurable agent run loop of dspy-go: a [`LoopStrategy`] (prepare the request, call the
//! model, parse the answer, decide whether to go on, say how tools are used) with a
//! [`DefaultStrategy`]; a [`LoopConfig`] (context transform, event hook, tool concurrency and
//! timeout, iteration limit, token budget); a [`LoopResult`] with the six [`StopReason`]s and the
//! [`TokenUsage`]; and the [`RunLoopAgent`] that runs it under the `Runner`.
//!
//! A context overflow (an [`adk_core::Error`] whose
//! [`is_context_overflow`](adk_core::Error::is_context_overflow) holds, as every model adapter
//! reports it) goes to the strategy's [`on_context_overflow`](LoopStrategy::on_context_overflow),
//! which may shorten the history for one retry.

mod agent;
mod config;
mod history;
mod result;
mod run;
mod strategy;
mod tools;

pub use agent::{RunLoopAgent, RunLoopAgentBuilder};
pub use config::{ContextTransform, EventHook, LoopConfig, LoopEvent};
pub use result::{LOOP_METADATA_KEY, LoopResult, StopReason, TokenUsage};
pub use strategy::{
    DefaultStrategy, IntoLoopStrategy, LoopAction, LoopStrategy, RequestInput, ToolUsePolicy,
};
