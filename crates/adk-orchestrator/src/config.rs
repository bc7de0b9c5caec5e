//! [`OrchestrationConfig`] and [`RetryConfig`]: how the orchestrator runs tasks.

use std::time::Duration;

/// How a failed task is tried again (dspy-go's `RetryConfig`): up to `max_attempts` attempts in
/// all, waiting `initial_backoff` before the second, and `backoff_multiplier` times longer before
/// each one after.
///
/// ```
/// use std::time::Duration;
/// use adk_orchestrator::RetryConfig;
///
/// let retry = RetryConfig::new(3).with_initial_backoff(Duration::from_millis(100));
/// assert_eq!(retry.delay(1), Duration::from_millis(100));
/// assert_eq!(retry.delay(2), Duration::from_millis(200));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RetryConfig {
    /// The most attempts, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the second attempt.
    pub initial_backoff: Duration,
    /// How much longer each later wait is than the one before.
    pub backoff_multiplier: f64,
}

impl Default for RetryConfig {
    /// One attempt, no retry: dspy-go retries only when a retry config is given.
    fn default() -> Self {
        Self::new(1)
    }
}

impl RetryConfig {
    /// Up to `max_attempts` attempts, waiting 1 s and then twice as long each time.
    pub fn new(max_attempts: u32) -> Self {
        Self {
            max_attempts: max_attempts.max(1),
            initial_backoff: Duration::from_secs(1),
            backoff_multiplier: 2.0,
        }
    }

    /// Sets the wait before the second attempt.
    pub fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// Sets how much longer each wait is than the one before (at least 1).
    pub fn with_backoff_multiplier(mut self, multiplier: f64) -> Self {
        self.backoff_multiplier = if multiplier.is_finite() {
            multiplier.max(1.0)
        } else {
            1.0
        };
        self
    }

    /// The wait after failed attempt `attempt` (from 1), capped at one hour.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let seconds = self.initial_backoff.as_secs_f64() * self.backoff_multiplier.powi(exponent);
        Duration::try_from_secs_f64(seconds.min(3600.0)).unwrap_or(Duration::from_secs(3600))
    }
}

/// How the orchestrator runs the tasks of a plan (dspy-go's `OrchestrationConfig`).
///
/// ```
/// use std::time::Duration;
/// use adk_orchestrator::{OrchestrationConfig, RetryConfig};
///
/// let config = OrchestrationConfig::default()
///     .with_max_concurrent(2)
///     .with_default_timeout(Some(Duration::from_secs(30)))
///     .with_retry(RetryConfig::new(3));
/// assert_eq!(config.max_concurrent, 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OrchestrationConfig {
    /// The most tasks of one phase that run at the same time (at least 1).
    pub max_concurrent: usize,
    /// How long one attempt at a task may take; `None` waits as long as it takes.
    pub default_timeout: Option<Duration>,
    /// How failed tasks are tried again.
    pub retry: RetryConfig,
    /// The most tasks one phase holds when the default plan creator is used.
    pub max_tasks_per_phase: usize,
}

impl Default for OrchestrationConfig {
    fn default() -> Self {
        Self {
            max_concurrent: 4,
            default_timeout: Some(Duration::from_secs(300)),
            retry: RetryConfig::default(),
            max_tasks_per_phase: crate::DependencyPlanCreator::DEFAULT_MAX_TASKS_PER_PHASE,
        }
    }
}

impl OrchestrationConfig {
    /// Sets how many tasks of a phase run at the same time.
    pub fn with_max_concurrent(mut self, max_concurrent: usize) -> Self {
        self.max_concurrent = max_concurrent.max(1);
        self
    }

    /// Sets how long one attempt at a task may take.
    pub fn with_default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets how failed tasks are tried again.
    pub fn with_retry(mut self, retry: RetryConfig) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the most tasks one phase holds (for the default plan creator).
    pub fn with_max_tasks_per_phase(mut self, max_tasks_per_phase: usize) -> Self {
        self.max_tasks_per_phase = max_tasks_per_phase.max(1);
        self
    }
}
