//! API keys held as secrets: never printed by `Debug`, read from the builder or the environment.

use secrecy::{ExposeSecret as _, SecretString};

/// An API key. Its `Debug` output is `ApiKey([REDACTED])`, so logging a model never leaks it.
#[derive(Clone)]
pub struct ApiKey(SecretString);

impl ApiKey {
    /// Wraps `key`.
    pub fn new(key: impl Into<String>) -> Self {
        Self(SecretString::from(key.into()))
    }

    /// The first of `names` that is set to a non-empty value in the environment.
    pub(crate) fn from_env(names: &[&str]) -> Option<Self> {
        names
            .iter()
            .find_map(|name| {
                std::env::var(name)
                    .ok()
                    .filter(|value| !value.trim().is_empty())
            })
            .map(|value| Self::new(value.trim()))
    }

    pub(crate) fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::new("sk-very-secret");
        assert_eq!(format!("{key:?}"), "ApiKey([REDACTED])");
        assert_eq!(key.expose(), "sk-very-secret");
    }
}
