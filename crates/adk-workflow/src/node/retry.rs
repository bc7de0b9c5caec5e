//! [`RetryConfig`]: how often and how soon a failed node runs again (ADK's `RetryConfig`, with
//! its defaults: 5 attempts, 1 s initial delay doubling up to 60 s, full jitter).

use std::time::Duration;

/// How a failed node is retried: up to `max_attempts` runs in all, waiting `initial_delay`
/// before the second, each wait `backoff_factor` times the one before up to `max_delay`, each
/// moved at random by up to `jitter` times itself. Only errors whose code is in `codes` are
/// retried, when that list is set.
///
/// ```
/// use adk_workflow::RetryConfig;
/// use std::time::Duration;
///
/// let config = RetryConfig::default()
///     .max_attempts(3)
///     .initial_delay(Duration::from_millis(10))
///     .jitter(0.0);
/// assert_eq!(config.delay_after(1), Duration::from_millis(10));
/// assert_eq!(config.delay_after(2), Duration::from_millis(20));
/// assert!(config.should_retry("ValueError", 2));
/// assert!(!config.should_retry("ValueError", 3));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetryConfig {
    /// Runs in all, the first included; 0 or 1 means no retry.
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_delay: Duration,
    /// The longest wait.
    pub max_delay: Duration,
    /// How much longer each wait is than the one before.
    pub backoff_factor: f64,
    /// How far a wait may move at random, as a fraction of it (0 for none).
    pub jitter: f64,
    /// The error codes to retry; `None` retries every error.
    pub codes: Option<Vec<String>>,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            backoff_factor: 2.0,
            jitter: 1.0,
            codes: None,
        }
    }
}

impl RetryConfig {
    /// Sets how many runs there are in all.
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// Sets the wait before the first retry.
    #[must_use]
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// Sets the longest wait.
    #[must_use]
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// Sets how much longer each wait is than the one before.
    #[must_use]
    pub fn backoff_factor(mut self, factor: f64) -> Self {
        self.backoff_factor = factor;
        self
    }

    /// Sets the random share of each wait (0 for none).
    #[must_use]
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// Retries only errors with one of these codes.
    #[must_use]
    pub fn codes<I, S>(mut self, codes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.codes = Some(codes.into_iter().map(Into::into).collect());
        self
    }

    /// Whether a failure with `code` of run number `attempt` (1 for the first) is retried.
    pub fn should_retry(&self, code: &str, attempt: u32) -> bool {
        if attempt >= self.max_attempts {
            return false;
        }
        self.codes
            .as_ref()
            .is_none_or(|codes| codes.iter().any(|listed| listed == code))
    }

    /// The wait after run number `attempt` failed, before jitter.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let seconds = self.initial_delay.as_secs_f64() * self.backoff_factor.powi(exponent);
        let max = self.max_delay.as_secs_f64();
        Duration::from_secs_f64(seconds.clamp(0.0, max))
    }

    /// The wait after run number `attempt` failed, jittered with `random` (a number in 0..1): the
    /// capped delay moved by up to `jitter` times itself either way, as ADK computes it.
    pub(crate) fn jittered_delay(&self, attempt: u32, random: f64) -> Duration {
        let mut delay = self.delay_after(attempt).as_secs_f64();
        let max = self.max_delay.as_secs_f64();
        if self.jitter > 0.0 {
            delay = delay.min(max / (1.0 + self.jitter));
            let offset = (random * 2.0 - 1.0) * self.jitter * delay;
            delay = (delay + offset).max(0.0);
        }
        Duration::from_secs_f64(delay.min(max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_are_capped() {
        let config = RetryConfig::default()
            .initial_delay(Duration::from_secs(1))
            .max_delay(Duration::from_secs(3))
            .jitter(0.0);
        assert_eq!(config.delay_after(1), Duration::from_secs(1));
        assert_eq!(config.delay_after(2), Duration::from_secs(2));
        assert_eq!(config.delay_after(3), Duration::from_secs(3));
        assert_eq!(config.jittered_delay(5, 0.9), Duration::from_secs(3));
    }

    #[test]
    fn jitter_stays_within_the_cap() {
        let config = RetryConfig::default().max_delay(Duration::from_secs(4));
        for random in [0.0, 0.5, 0.999] {
            assert!(config.jittered_delay(10, random) <= Duration::from_secs(4));
        }
    }

    #[test]
    fn only_listed_codes_are_retried() {
        let config = RetryConfig::default().codes(["Timeout"]);
        assert!(config.should_retry("Timeout", 1));
        assert!(!config.should_retry("ValueError", 1));
    }
}
