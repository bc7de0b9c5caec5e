//! Turning the model a config names into a ready [`Llm`]: the [`ModelResolver`] trait, which the
//! caller may implement, and [`EnvModelResolver`], the default, which builds the Gemini (with
//! Vertex AI), Anthropic and OpenAI adapters from the environment.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{Error, ErrorKind, Llm, Result};
use adk_model::{Anthropic, GeminiModel, GoogleCredentials, OpenAiModel, OpenAiResponses};
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

/// The Claude model an agent gets when it names none, only Anthropic is configured and
/// `ANTHROPIC_MODEL` is not set.
const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// OpenAI's own API.
const OPENAI_URL: &str = "https://api.openai.com/v1";

/// Anthropic's own API.
const ANTHROPIC_URL: &str = "https://api.anthropic.com/v1";

/// Vertex AI's location when `GOOGLE_CLOUD_LOCATION` names none, as Google's SDKs choose.
const DEFAULT_VERTEX_LOCATION: &str = "global";

/// The variables that hold a Gemini API key, in the order they are read.
const GEMINI_KEYS: [&str; 2] = ["GOOGLE_API_KEY", "GEMINI_API_KEY"];

/// The default [`ModelResolver`]: builds the adapters from environment variables, as the `adk`
/// command line does.
///
/// - `gemini-*`: the Gemini adapter, with the key in `GOOGLE_API_KEY` or `GEMINI_API_KEY`; at
///   `GOOGLE_GEMINI_BASE_URL` (the API version is added) when it is set, as Google's SDKs do. When
///   `GOOGLE_GENAI_USE_VERTEXAI` is `true` or `1`, on Vertex AI as `vertex_ai/` below.
/// - `vertex_ai/<name>`: the Gemini adapter on Vertex AI in `GOOGLE_CLOUD_PROJECT` at
///   `GOOGLE_CLOUD_LOCATION` (else `global`), with Application Default Credentials
///   (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's login, or the metadata server); at
///   `GOOGLE_VERTEX_BASE_URL` (`/v1` is added) when it is set, as Google's SDKs do.
/// - `claude-*` or `anthropic/<name>`: the Anthropic adapter, with the key in
///   `ANTHROPIC_API_KEY`, at `ANTHROPIC_BASE_URL` when it is set (a server other than Anthropic
///   may need no key).
/// - `openai/<name>`: the OpenAI Chat Completions adapter, with the key in `OPENAI_API_KEY` and
///   the server at `OPENAI_BASE_URL` (OpenAI itself when unset); a server other than OpenAI may
///   need no key. `openai/responses/<name>`: the Responses adapter, likewise.
/// - `local`: an error, because the local model is started by the launcher (`adk run`, `adk web`),
///   whose resolver serves it.
///
/// Its default model follows the environment too: `gemini-2.5-flash` when a Gemini key is set or
/// `GOOGLE_GENAI_USE_VERTEXAI` is, else `openai/<OPENAI_MODEL or gpt-4o-mini>` when
/// `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set, else `<ANTHROPIC_MODEL or claude-sonnet-4-5>`
/// when `ANTHROPIC_API_KEY` is set, else `local`.
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

    /// Whether `GOOGLE_GENAI_USE_VERTEXAI` sends Gemini models to Vertex AI.
    fn use_vertex(&self) -> bool {
        self.var("GOOGLE_GENAI_USE_VERTEXAI")
            .is_some_and(|value| value.trim().eq_ignore_ascii_case("true") || value.trim() == "1")
    }

    fn vertex(&self, name: &str) -> Result<Arc<dyn Llm>> {
        let credentials = match self.var("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(path) => GoogleCredentials::from_file(path)?,
            None => GoogleCredentials::from_env()?,
        };
        let project = self
            .var("GOOGLE_CLOUD_PROJECT")
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "the model `vertex_ai/{name}` needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION, else `global`)"
                    ),
                )
            })?;
        let location = self
            .var("GOOGLE_CLOUD_LOCATION")
            .unwrap_or_else(|| DEFAULT_VERTEX_LOCATION.to_owned());
        let mut builder = GeminiModel::builder(name)
            .vertex(project.trim(), location.trim())
            .credentials(credentials);
        if let Some(base_url) = self.var("GOOGLE_VERTEX_BASE_URL") {
            builder = builder.base_url(format!("{}/v1", base_url.trim_end_matches('/')));
        }
        let model = builder.build()?;
        Ok(Arc::new(model))
    }

    fn anthropic(&self, name: &str) -> Result<Arc<dyn Llm>> {
        // The base URL is always passed, so that a resolver given its variables never falls
        // back to the process's `ANTHROPIC_BASE_URL`.
        let base_url = self
            .var("ANTHROPIC_BASE_URL")
            .unwrap_or_else(|| ANTHROPIC_URL.to_owned());
        let builder = Anthropic::builder(name).base_url(&base_url);
        let builder = match self.var("ANTHROPIC_API_KEY") {
            Some(key) => builder.api_key(key),
            None if base_url.trim_end_matches('/') == ANTHROPIC_URL => {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "the model `{name}` needs an Anthropic API key: set ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL to a server that needs none"
                    ),
                ));
            }
            None => builder,
        };
        Ok(Arc::new(builder.build()?))
    }

    fn gemini(&self, name: &str) -> Result<Arc<dyn Llm>> {
        if self.use_vertex() {
            return self.vertex(name);
        }
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
        let mut builder = GeminiModel::builder(name).api_key(key);
        if let Some(base_url) = self.var("GOOGLE_GEMINI_BASE_URL") {
            builder = builder.base_url(format!("{}/v1beta", base_url.trim_end_matches('/')));
        }
        Ok(Arc::new(builder.build()?))
    }

    /// The OpenAI base URL and key: the base URL is always given, so that a resolver given its
    /// variables never falls back to the process's `OPENAI_BASE_URL`; OpenAI's own URL needs a
    /// key.
    fn openai_endpoint(&self, spec: &str) -> Result<(String, Option<String>)> {
        let base_url = self
            .var("OPENAI_BASE_URL")
            .unwrap_or_else(|| OPENAI_URL.to_owned());
        let key = self.var("OPENAI_API_KEY");
        if key.is_none() && base_url.trim_end_matches('/') == OPENAI_URL {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the model `{spec}` needs an OpenAI API key: set OPENAI_API_KEY, \
                     or OPENAI_BASE_URL to an OpenAI-compatible server that needs none"
                ),
            ));
        }
        Ok((base_url, key))
    }

    fn openai(&self, name: &str) -> Result<Arc<dyn Llm>> {
        let (base_url, key) = self.openai_endpoint(&format!("openai/{name}"))?;
        let mut builder = OpenAiModel::builder(name).base_url(base_url);
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        Ok(Arc::new(builder.build()?))
    }

    fn openai_responses(&self, name: &str) -> Result<Arc<dyn Llm>> {
        let (base_url, key) = self.openai_endpoint(&format!("openai/responses/{name}"))?;
        let mut builder = OpenAiResponses::builder(name).base_url(base_url);
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        Ok(Arc::new(builder.build()?))
    }
}

#[async_trait]
impl ModelResolver for EnvModelResolver {
    async fn resolve(&self, model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        match model {
            ModelSpec::Gemini(name) => self.gemini(name),
            ModelSpec::Vertex(name) => self.vertex(name),
            ModelSpec::Anthropic(name) => self.anthropic(name),
            ModelSpec::OpenAi(name) => self.openai(name),
            ModelSpec::OpenAiResponses(name) => self.openai_responses(name),
            ModelSpec::Local => Err(Error::new(
                ErrorKind::Config,
                "the model `local` is started by the launcher (`adk run`, `adk web`), not by \
                 AgentLoader's default model resolver: load the config through the launcher, \
                 pass the loader a ModelResolver that serves `local`, or name a hosted model \
                 (`gemini-*`, `claude-*`, `openai/<name>`, ...)",
            )),
        }
    }

    fn default_model(&self) -> ModelSpec {
        if GEMINI_KEYS
            .iter()
            .any(|variable| self.var(variable).is_some())
            || self.use_vertex()
        {
            return ModelSpec::Gemini(DEFAULT_GEMINI_MODEL.to_owned());
        }
        if self.var("OPENAI_API_KEY").is_some() || self.var("OPENAI_BASE_URL").is_some() {
            let name = self
                .var("OPENAI_MODEL")
                .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
            return ModelSpec::OpenAi(name);
        }
        if self.var("ANTHROPIC_API_KEY").is_some() {
            let name = self
                .var("ANTHROPIC_MODEL")
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_owned());
            return ModelSpec::Anthropic(name);
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
        let claude = EnvModelResolver::from_vars([("ANTHROPIC_API_KEY", "k")]);
        assert_eq!(
            claude.default_model(),
            ModelSpec::Anthropic("claude-sonnet-4-5".to_owned())
        );
        let vertex = EnvModelResolver::from_vars([("GOOGLE_GENAI_USE_VERTEXAI", "true")]);
        assert_eq!(
            vertex.default_model(),
            ModelSpec::Gemini("gemini-2.5-flash".to_owned())
        );
    }

    #[tokio::test]
    async fn each_provider_is_built_from_its_variables_or_names_the_missing_one() {
        let resolver = EnvModelResolver::from_vars([
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("OPENAI_API_KEY", "sk-openai"),
        ]);
        for spec in [
            "claude-haiku-4-5",
            "anthropic/claude-x",
            "openai/responses/gpt-5-mini",
        ] {
            let spec: ModelSpec = spec.parse().unwrap();
            let llm = resolver.resolve(&spec).await.unwrap();
            assert!(spec.to_string().ends_with(llm.name()), "{spec}");
        }
        let empty = EnvModelResolver::from_vars::<&str, &str>([]);
        for (spec, variable) in [
            ("claude-haiku-4-5", "ANTHROPIC_API_KEY"),
            ("openai/responses/gpt-5", "OPENAI_API_KEY"),
        ] {
            let Err(error) = empty.resolve(&spec.parse().unwrap()).await else {
                panic!("{spec} resolved without its key");
            };
            assert!(error.to_string().contains(variable), "{error}");
        }
        let vertex = EnvModelResolver::from_vars([(
            "GOOGLE_APPLICATION_CREDENTIALS",
            "/nonexistent/key.json",
        )]);
        let Err(error) = vertex
            .resolve(&ModelSpec::Vertex("gemini-2.5-flash".to_owned()))
            .await
        else {
            panic!("Vertex resolved without a key file");
        };
        assert!(
            error.to_string().contains("/nonexistent/key.json"),
            "{error}"
        );
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
