//! [`LoopConfig`]: the limits and hooks of the run loop, and the [`LoopEvent`]s its hook sees.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{Content, Result};
use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::LoopResult;

/// Changes the history before each model call (trims it, summarises it, adds to it); the loop
/// keeps its own history and sends the transformed one.
pub type ContextTransform =
    Arc<dyn Fn(Arc<Vec<Content>>) -> BoxFuture<'static, Result<Arc<Vec<Content>>>> + Send + Sync>;

/// Sees every [`LoopEvent`] as it happens.
pub type EventHook = Arc<dyn Fn(&LoopEvent) + Send + Sync>;

/// What happens in the loop, for the [event hook](LoopConfig::on_event).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LoopEvent {
    /// An iteration starts (from 1).
    IterationStarted {
        /// The iteration.
        iteration: u32,
    },
    /// The model answered.
    ModelResponded {
        /// The iteration.
        iteration: u32,
        /// How many tool calls the answer holds.
        tool_calls: usize,
    },
    /// The model's context overflowed and the strategy shortened the history for a retry.
    ContextTrimmed {
        /// How many contents the history had.
        from: usize,
        /// How many it has now.
        to: usize,
    },
    /// Tool calls ran.
    ToolsFinished {
        /// The iteration.
        iteration: u32,
        /// The names of the tools called, in the order of the calls.
        tools: Vec<String>,
    },
    /// The loop stopped.
    Stopped(LoopResult),
}

/// The limits and hooks of a run of the loop (dspy-go's `LoopConfig`).
///
/// ```
/// use std::time::Duration;
/// use adk_orchestrator::LoopConfig;
///
/// let config = LoopConfig::default()
///     .with_max_iterations(5)
///     .with_token_budget(20_000)
///     .with_tool_timeout(Duration::from_secs(10))
///     .with_transform_context(|history| async move { Ok(history) });
/// assert_eq!(config.max_iterations, 5);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct LoopConfig {
    /// The most model calls (retries after a context overflow aside); then the loop stops with
    /// `max_iterations`.
    pub max_iterations: u32,
    /// The most tokens the run's model calls may spend, all calls together; `None` for no limit.
    pub token_budget: Option<u64>,
    /// The most tool calls of one answer that run at the same time (at least 1).
    pub max_tool_concurrency: usize,
    /// How long one tool call may take; `None` waits as long as it takes.
    pub tool_timeout: Option<Duration>,
    /// Changes the history before each model call.
    pub transform_context: Option<ContextTransform>,
    /// Sees what happens in the loop.
    pub on_event: Option<EventHook>,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            token_budget: None,
            max_tool_concurrency: 4,
            tool_timeout: Some(Duration::from_secs(120)),
            transform_context: None,
            on_event: None,
        }
    }
}

impl fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopConfig")
            .field("max_iterations", &self.max_iterations)
            .field("token_budget", &self.token_budget)
            .field("max_tool_concurrency", &self.max_tool_concurrency)
            .field("tool_timeout", &self.tool_timeout)
            .field("transform_context", &self.transform_context.is_some())
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

impl LoopConfig {
    /// Sets the most model calls (at least 1).
    pub fn with_max_iterations(mut self, iterations: u32) -> Self {
        self.max_iterations = iterations.max(1);
        self
    }

    /// Sets the token budget of a run.
    pub fn with_token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// Sets how many tool calls of one answer run at the same time.
    pub fn with_max_tool_concurrency(mut self, concurrency: usize) -> Self {
        self.max_tool_concurrency = concurrency.max(1);
        self
    }

    /// Sets how long one tool call may take.
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Changes the history before each model call with `transform`.
    pub fn with_transform_context<F, Fut>(mut self, transform: F) -> Self
    where
        F: Fn(Arc<Vec<Content>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Arc<Vec<Content>>>> + Send + 'static,
    {
        self.transform_context = Some(Arc::new(move |history| transform(history).boxed()));
        self
    }

    /// Calls `hook` with every [`LoopEvent`].
    pub fn with_event_hook(mut self, hook: impl Fn(&LoopEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(hook));
        self
    }

    pub(crate) fn emit(&self, event: LoopEvent) {
        if let Some(hook) = &self.on_event {
            hook(&event);
        }
    }
}
