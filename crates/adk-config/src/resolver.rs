//! Turning the model a config names into a ready [`Llm`]: the [`ModelResolver`] trait, which the
//! caller may implement, and [`EnvModelResolver`], the default, which builds the Gemini and OpenAI
//! adapters from the environment.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{Error, ErrorKind, Llm, Result};
use adk_model::{Gemini, OpenAi};
use async_trait::async_trait;

use crate::ModelSpec;

/// Makes the models a config names ready.
///
/// The loader asks once per distinct model of a load, after every file has been read and checked,
/// so a bad config starts no model. Resolution is async because a model may need starting (the
/// local model starts a server); the loader drops every model it made when a later one fails.
///
/// A resolver that starts something must keep it running as long as the returned [`Llm`] lives
/// (for example by holding the server's handle inside the `Llm` it returns).
///
/// ```
/// use std::sync::Arc;
/// use adk_config::{EnvModelResolver, ModelResolver, ModelSpec};
/// use adk_core::{Llm, Result};
///
/// /// Serves `local` with a model of its own, and everything else as the default does.
/// struct WithLocal {
///     local: Arc<dyn Llm>,
///     others: EnvModelResolver,
/// }
///
/// #[async_trait::async_trait]
/// impl ModelResolver for WithLocal {
///     async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
///         match model {
///             ModelSpec::Local => Ok(self.local.clone()),
///             other => self.others.resolve(other).await,
///         }
///     }
///
///     fn default_model(&self) -> ModelSpec {
///         self.others.default_model()
///     }
/// }
/// ```
#[async_trait]
pub trait ModelResolver: Send + Sync {
    /// The model `model` names, ready to call.
    ///
    /// # Errors
    ///
    /// When the model cannot be made ready (a missing API key, a server that does not start);
    /// the message should say what to set.
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>>;

    /// The model of an `LlmAgent` that names none and has no `LlmAgent` above it that does.
    fn default_model(&self) -> ModelSpec;
}

/// The Gemini model an agent gets when it names none and a Gemini key is set.
const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash";

/// The OpenAI model an agent gets when it names none, OpenAI is configured and `OPENAI_MODEL` is
/// not set.
const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// OpenAI's own API.
const OPENAI_URL: &str = "https://api.openai.com/v1";

/// The variables that hold a Gemini API key, in the order they are read.
const GEMINI_KEYS: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];

/// The default [`ModelResolver`]: builds the adapters from environment variables, as the `adk`
/// command line does.
///
/// - `gemini-*`: the Gemini adapter, with the key in `GOOGLE_API_KEY` or `GEMINI_API_KEY`; at
///   `GOOGLE_GEMINI_BASE_URL` (the API version is added) when it is set, as Google's SDKs do.
/// - `openai/<name>`: the OpenAI adapter, with the key in `OPENAI_API_KEY` and the server at
///   `OPENAI_BASE_URL` (OpenAI itself when unset); a server other than OpenAI may need no key.
/// - `local`: an error, because the local model is started by the launcher (`adk run`, `adk web`),
///   whose resolver serves it.
///
/// Its default model follows the environment too: `gemini-2.5-flash` when a Gemini key is set,
/// else `openai/<OPENAI_MODEL or gpt-4o-mini>` when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set,
/// else `local`.
///
/// ```
/// use adk_config::{EnvModelResolver, ModelResolver, ModelSpec};
///
/// let resolver = EnvModelResolver::from_vars([("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")]);
/// assert_eq!(resolver.default_model(), ModelSpec::OpenAi("gpt-4o-mini".to_owned()));
/// ```
#[derive(Debug, Clone, Default)]
pub struct EnvModelResolver {
    /// The variables to read instead of the process's environment, when given.
    vars: Option<BTreeMap<String, String>>,
}

impl EnvModelResolver {
    /// A resolver that reads the process's environment when it resolves.
    pub fn new() -> Self {
        Self::default()
    }

    /// A resolver that reads `vars` instead of the process's environment (variables loaded from
    /// an `.env` file, say, or fixed ones in tests).
    pub fn from_vars<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: Some(
                vars.into_iter()
                    .map(|(key, value)| (key.into(), value.into()))
                    .collect(),
            ),
        }
    }

    /// The value of variable `name`, when it is set and not empty.
    fn var(&self, name: &str) -> Option<String> {
        let value = match &self.vars {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.filter(|value| !value.trim().is_empty())
    }

    fn gemini(&self, name: &str) -> Result<Arc<dyn Llm>> {
        let key = GEMINI_KEYS
            .iter()
            .find_map(|variable| self.var(variable))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "the model `{name}` needs a Gemini API key: set GOOGLE_API_KEY or \
                         GEMINI_API_KEY"
                    ),
                )
            })?;
        let mut builder = Gemini::builder(name).api_key(key);
        if let Some(base_url) = self.var("GOOGLE_GEMINI_BASE_URL") {
            builder = builder.base_url(format!("{}/v1beta", base_url.trim_end_matches('/')));
        }
        Ok(Arc::new(builder.build()?))
    }

    fn openai(&self, name: &str) -> Result<Arc<dyn Llm>> {
        // The base URL is always passed, so that a resolver given its variables never falls
        // back to the process's `OPENAI_BASE_URL`.
        let base_url = self
            .var("OPENAI_BASE_URL")
            .unwrap_or_else(|| OPENAI_URL.to_owned());
        let builder = OpenAi::builder(name).base_url(&base_url);
        let builder = match self.var("OPENAI_API_KEY") {
            Some(key) => builder.api_key(key),
            None if base_url.trim_end_matches('/') == OPENAI_URL => {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "the model `openai/{name}` needs an OpenAI API key: set OPENAI_API_KEY, \
                         or OPENAI_BASE_URL to an OpenAI-compatible server that needs none"
                    ),
                ));
            }
            None => builder,
        };
        Ok(Arc::new(builder.build()?))
    }
}

#[async_trait]
impl ModelResolver for EnvModelResolver {
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        match model {
            ModelSpec::Gemini(name) => self.gemini(name),
            ModelSpec::OpenAi(name) => self.openai(name),
            ModelSpec::Local => Err(Error::new(
                ErrorKind::Config,
                "the model `local` is started by the launcher (`adk run`, `adk web`), not by \
                 AgentLoader's default model resolver: load the config through the launcher, \
                 pass the loader a ModelResolver that serves `local`, or name a hosted model \
                 (`gemini-*` or `openai/<name>`)",
            )),
        }
    }

    fn default_model(&self) -> ModelSpec {
        if GEMINI_KEYS
            .iter()
            .any(|variable| self.var(variable).is_some())
        {
            return ModelSpec::Gemini(DEFAULT_GEMINI_MODEL.to_owned());
        }
        if self.var("OPENAI_API_KEY").is_some() || self.var("OPENAI_BASE_URL").is_some() {
            let name = self
                .var("OPENAI_MODEL")
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
            return ModelSpec::OpenAi(name);
        }
        ModelSpec::Local
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_model_follows_the_environment() {
        let gemini =
            EnvModelResolver::from_vars([("GEMINI_API_KEY", "k"), ("OPENAI_API_KEY", "k")]);
        assert_eq!(
            gemini.default_model(),
            ModelSpec::Gemini("gemini-2.5-flash".to_owned())
        );
        let openai =
            EnvModelResolver::from_vars([("OPENAI_API_KEY", "k"), ("OPENAI_MODEL", "gpt-4.1")]);
        assert_eq!(
            openai.default_model(),
            ModelSpec::OpenAi("gpt-4.1".to_owned())
        );
        let nothing = EnvModelResolver::from_vars([("GOOGLE_API_KEY", " ")]);
        assert_eq!(nothing.default_model(), ModelSpec::Local);
    }

    #[tokio::test]
    async fn a_gemini_model_without_a_key_says_what_to_set() {
        let resolver = EnvModelResolver::from_vars::<&str, &str>([]);
        let Err(error) = resolver
            .resolve(&ModelSpec::Gemini("gemini-2.5-flash".to_owned()))
            .await
        else {
            panic!("a Gemini model without a key resolved");
        };
        assert_eq!(error.kind(), ErrorKind::Config);
        assert_eq!(
            error.to_string(),
            "config: the model `gemini-2.5-flash` needs a Gemini API key: set GOOGLE_API_KEY or GEMINI_API_KEY"
        );
    }

    #[tokio::test]
    async fn the_local_model_needs_the_launcher() {
        let resolver = EnvModelResolver::from_vars::<&str, &str>([]);
        let Err(error) = resolver.resolve(&ModelSpec::Local).await else {
            panic!("the local model resolved without the launcher");
        };
        assert!(
            error.to_string().contains("started by the launcher"),
            "{error}"
        );
    }
}
