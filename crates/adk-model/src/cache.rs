//! Context caching: one policy, [`ContextCacheConfig`], for how an adapter lets its provider
//! cache the long stable start of its requests (the system instruction, the tools and the history
//! before the newest user turn), and the pieces the adapters share to apply it.
//!
//! Gemini creates an explicit `cachedContents` resource for that prefix; Anthropic marks it with
//! `cache_control` breakpoints; the Responses API marks it with a `prompt_cache_breakpoint`. With
//! [`CacheMode::Automatic`] each provider places its cache itself (Anthropic's top-level
//! `cache_control`, the Responses API's implicit caching, Gemini's implicit caching).

use std::time::Duration;

/// Who decides where a provider's cache ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CacheMode {
    /// The adapter marks the end of the stable prefix: all of the request but the newest user
    /// turn's last part (Anthropic breakpoints, a Responses `prompt_cache_breakpoint`, a Gemini
    /// `cachedContents` resource).
    #[default]
    Explicit,
    /// The provider places its cache itself: Anthropic's top-level `cache_control`; the Responses
    /// API and Gemini cache implicitly, so nothing is sent.
    Automatic,
}

/// How an adapter caches the stable start of its requests, as ADK's context cache config: a
/// cache is made only for a prefix of at least `min_tokens` (estimated at four characters a
/// token), lives `ttl`, and (for Gemini's explicit caches) is used by at most `cache_intervals`
/// calls before it is made anew.
///
/// ```
/// use std::time::Duration;
/// use adk_model::ContextCacheConfig;
///
/// let config = ContextCacheConfig::default()
///     .min_tokens(2048)
///     .ttl(Duration::from_secs(600))
///     .cache_intervals(5);
/// assert_eq!(config.ttl_text(), "10m");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCacheConfig {
    pub(crate) mode: CacheMode,
    pub(crate) min_tokens: u32,
    pub(crate) ttl: Duration,
    pub(crate) cache_intervals: u32,
}

impl Default for ContextCacheConfig {
    /// Explicit caches of any size, living 30 minutes, each used by at most 10 calls: ADK's
    /// defaults.
    fn default() -> Self {
        Self {
            mode: CacheMode::Explicit,
            min_tokens: 0,
            ttl: Duration::from_secs(30 * 60),
            cache_intervals: 10,
        }
    }
}

impl ContextCacheConfig {
    /// Sets who places the cache (default [`CacheMode::Explicit`]).
    pub fn mode(mut self, mode: CacheMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the fewest estimated tokens a prefix needs to be cached (default 0).
    pub fn min_tokens(mut self, tokens: u32) -> Self {
        self.min_tokens = tokens;
        self
    }

    /// Sets how long a cache lives (default 30 minutes). Anthropic takes 5 minutes or an hour: a
    /// ttl up to 5 minutes asks for the first, a longer one for the second.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets how many calls may use one Gemini cache before it is made anew (default 10, at
    /// least 1).
    pub fn cache_intervals(mut self, calls: u32) -> Self {
        self.cache_intervals = calls.max(1);
        self
    }

    /// The ttl as the providers write it: whole hours as `1h`, whole minutes as `30m`, else
    /// seconds as `90s`.
    pub fn ttl_text(&self) -> String {
        let seconds = self.ttl.as_secs();
        if seconds > 0 && seconds.is_multiple_of(3600) {
            format!("{}h", seconds / 3600)
        } else if seconds > 0 && seconds.is_multiple_of(60) {
            format!("{}m", seconds / 60)
        } else {
            format!("{seconds}s")
        }
    }

    /// Anthropic's ttl: `5m` up to five minutes, else `1h`.
    #[cfg(feature = "anthropic")]
    pub(crate) fn anthropic_ttl(&self) -> &'static str {
        if self.ttl <= Duration::from_secs(300) {
            "5m"
        } else {
            "1h"
        }
    }

    /// Whether a prefix of `chars` characters is long enough to cache.
    #[cfg(any(feature = "openai", feature = "anthropic"))]
    pub(crate) fn worth_caching(&self, chars: usize) -> bool {
        estimated_tokens(chars) >= u64::from(self.min_tokens)
    }
}

/// A rough token count of `chars` characters of text: four characters a token, the providers' own
/// rule of thumb for English.
#[cfg(any(feature = "gemini", feature = "openai", feature = "anthropic"))]
pub(crate) fn estimated_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

#[cfg(all(test, feature = "anthropic"))]
mod tests {
    use super::*;

    #[test]
    fn ttls_are_written_as_the_providers_take_them() {
        let at = |seconds| ContextCacheConfig::default().ttl(Duration::from_secs(seconds));
        assert_eq!(at(3600).ttl_text(), "1h");
        assert_eq!(at(1800).ttl_text(), "30m");
        assert_eq!(at(90).ttl_text(), "90s");
        assert_eq!(at(300).anthropic_ttl(), "5m");
        assert_eq!(at(301).anthropic_ttl(), "1h");
        let config = ContextCacheConfig::default().min_tokens(10);
        assert!(!config.worth_caching(36) && config.worth_caching(40));
    }
}
