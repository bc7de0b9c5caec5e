//! When to send a failed call again: attempts, exponential backoff with jitter, a cap, and the
//! server's `Retry-After`.

use std::time::Duration;

/// How failed calls are retried. Only connect errors, a connection closed before any response
/// arrived (a keep-alive connection the server closed as it was reused), 408, 429 and 5xx are
/// retried, and never once a response has been accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    multiplier: f64,
}

impl Default for RetryPolicy {
    /// Three attempts, backing off from 500 ms, doubling, capped at 30 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            multiplier: 2.0,
        }
    }
}

impl RetryPolicy {
    /// A policy that sends each call once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Sets how many times a call is sent in all, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the wait before the first retry; later waits grow by the multiplier.
    pub fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// Sets the longest wait between attempts, `Retry-After` included.
    pub fn max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// Sets the factor by which the backoff grows after each attempt (at least 1).
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier.max(1.0);
        self
    }

    /// How many times a call is sent in all.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait after failed attempt number `attempt` (1-based): the server's `retry_after` when
    /// given, else the exponential backoff with "equal jitter" (between half and all of it); both
    /// capped at the maximum backoff.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(retry_after) = retry_after {
            return retry_after.min(self.max_backoff);
        }
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let backoff = self
            .initial_backoff
            .mul_f64(self.multiplier.powi(exponent).min(1e6))
            .min(self.max_backoff);
        backoff.mul_f64(0.5 + 0.5 * jitter())
    }
}

/// A number in `[0, 1)` that differs between calls; good enough to spread retries apart.
fn jitter() -> f64 {
    use std::hash::BuildHasher as _;
    let hash = std::collections::hash_map::RandomState::new().hash_one(std::time::Instant::now());
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_stops_at_the_cap() {
        let policy = RetryPolicy::default()
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_millis(350));
        for _ in 0..50 {
            let first = policy.delay(1, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = policy.delay(2, None);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            assert!(policy.delay(10, None) <= Duration::from_millis(350));
        }
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let policy = RetryPolicy::default().max_backoff(Duration::from_secs(5));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(60))),
            Duration::from_secs(5)
        );
        assert_eq!(RetryPolicy::none().max_attempts(0).attempts(), 1);
    }
}
