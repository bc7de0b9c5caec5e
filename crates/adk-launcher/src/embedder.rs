//! The embedder memory searches with, chosen by `--memory-embedder`: Gemini, OpenAI or an
//! OpenAI-compatible server, or the local model's own llama.cpp server started for embeddings;
//! none (keyword search only) unless one is named.

use std::str::FromStr;
use std::sync::Arc;

use adk_core::Embedder;
use adk_local_model::{LocalModel, LocalModelConfig, LocalServer, ServerOptions, TerminalProgress};
use adk_model::{GeminiEmbedder, OpenAiEmbedder};
use adk_session::SemanticSearch;

use crate::error::{Context as _, LaunchError, LaunchErrorKind};

/// What `--memory-embedder` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EmbedderSpec {
    /// Keyword search only (the default).
    None,
    /// `gemini:<model>`: Gemini's `embedContent` with `GOOGLE_API_KEY` or `GEMINI_API_KEY`.
    Gemini(String),
    /// `openai:<model>`: `/embeddings` of OpenAI or a compatible server, at `OPENAI_BASE_URL`
    /// with `OPENAI_API_KEY`.
    OpenAi(String),
    /// `local`: the local model under its own llama.cpp server, started with `--embeddings`.
    Local,
}

/// What a value of `--memory-embedder` may be, for errors.
const FORMS: &str = "gemini:<model>, openai:<model>, local or none";

impl FromStr for EmbedderSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        match text {
            "" | "none" => return Ok(Self::None),
            "local" => return Ok(Self::Local),
            _ => {}
        }
        let (provider, model) = text
            .split_once(':')
            .ok_or_else(|| format!("'{text}' names no embedder: use {FORMS}"))?;
        let model = model.trim();
        if model.is_empty() {
            return Err(format!("'{text}' names no model: use {FORMS}"));
        }
        match provider.trim() {
            "gemini" => Ok(Self::Gemini(model.to_owned())),
            "openai" => Ok(Self::OpenAi(model.to_owned())),
            other => Err(format!("unknown embedder provider '{other}': use {FORMS}")),
        }
    }
}

/// The embedder memory searches with, and the local server that serves it, if any (stopped on
/// drop).
pub(crate) struct MemoryEmbedder {
    pub(crate) semantic: SemanticSearch,
    /// Says which embedder, for the line a command prints at start.
    pub(crate) description: String,
    _local_server: Option<LocalServer>,
}

impl std::fmt::Debug for MemoryEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryEmbedder")
            .field("semantic", &self.semantic)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// The embedder `spec` names (`None` for keyword search), reading keys and base URLs through
/// `env`.
pub(crate) async fn open(
    spec: &EmbedderSpec,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<MemoryEmbedder>, LaunchError> {
    let cannot = |model: &str| format!("cannot set up the memory embedder {model}");
    let (embedder, local_server): (Arc<dyn Embedder>, _) = match spec {
        EmbedderSpec::None => return Ok(None),
        EmbedderSpec::Gemini(model) => {
            let mut builder = GeminiEmbedder::builder(model.as_str());
            if let Some(key) = env("GOOGLE_API_KEY").or_else(|| env("GEMINI_API_KEY")) {
                builder = builder.api_key(key);
            }
            let embedder = builder
                .build()
                .context(LaunchErrorKind::Model, || cannot(model))?;
            (Arc::new(embedder), None)
        }
        EmbedderSpec::OpenAi(model) => {
            let mut builder = OpenAiEmbedder::builder(model.as_str());
            if let Some(url) = env("OPENAI_BASE_URL") {
                builder = builder.base_url(url);
            }
            if let Some(key) = env("OPENAI_API_KEY") {
                builder = builder.api_key(key);
            }
            let embedder = builder
                .build()
                .context(LaunchErrorKind::Model, || cannot(model))?;
            (Arc::new(embedder), None)
        }
        EmbedderSpec::Local => {
            let (embedder, server) = local().await?;
            (Arc::new(embedder), Some(server))
        }
    };
    let description = format!("memory searched by meaning with {}", embedder.model());
    Ok(Some(MemoryEmbedder {
        semantic: SemanticSearch::new(embedder),
        description,
        _local_server: local_server,
    }))
}

/// The local model's embeddings: its llama.cpp server started on its own with `--embeddings`
/// (a server started so serves embeddings only, so it is not the chat model's), mean pooling as
/// the recall measurement in `docs/memory.md` used.
async fn local() -> Result<(OpenAiEmbedder, LocalServer), LaunchError> {
    let config = LocalModelConfig::from_env().context(LaunchErrorKind::Model, || {
        "the local model's settings are not valid".to_owned()
    })?;
    let model = LocalModel::ensure(config, &TerminalProgress::new())
        .await
        .context(LaunchErrorKind::Model, || {
            "cannot prepare the local model".to_owned()
        })?;
    let mut options = ServerOptions::default();
    options.extra_args = ["--embeddings", "--pooling", "mean"]
        .map(String::from)
        .to_vec();
    let server = model
        .start_with(&options)
        .await
        .context(LaunchErrorKind::Model, || {
            "cannot start the local model for embeddings".to_owned()
        })?;
    let embedder = OpenAiEmbedder::builder(model.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .build()
        .context(LaunchErrorKind::Model, || {
            "cannot talk to the local embedding server".to_owned()
        })?;
    Ok((embedder, server))
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::args::{Cli, Command, ServiceArgs};

    #[test]
    fn specs_parse_and_bad_ones_say_what_is_accepted() {
        assert_eq!("none".parse(), Ok(EmbedderSpec::None));
        assert_eq!("local".parse(), Ok(EmbedderSpec::Local));
        assert_eq!(
            "gemini:text-embedding-004".parse(),
            Ok(EmbedderSpec::Gemini("text-embedding-004".to_owned()))
        );
        assert_eq!(
            "openai:nomic-embed-text:v1.5".parse(),
            Ok(EmbedderSpec::OpenAi("nomic-embed-text:v1.5".to_owned())),
            "a model name may itself hold a colon"
        );
        for bad in ["cohere:embed", "openai:", "text-embedding-004"] {
            let error = bad.parse::<EmbedderSpec>().unwrap_err();
            assert!(error.contains(FORMS), "{bad}: {error}");
        }
    }

    #[tokio::test]
    async fn hosted_embedders_read_their_keys_and_urls_from_the_environment() {
        let env = |name: &str| match name {
            "GEMINI_API_KEY" => Some("gemini-key".to_owned()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            _ => None,
        };
        let none = open(&EmbedderSpec::None, &env).await.unwrap();
        assert!(none.is_none());
        let gemini = open(&EmbedderSpec::Gemini("text-embedding-004".into()), &env)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            gemini.description,
            "memory searched by meaning with text-embedding-004"
        );
        // A server at another base URL needs no key.
        let openai = open(&EmbedderSpec::OpenAi("embed-small".into()), &env)
            .await
            .unwrap()
            .unwrap();
        assert!(openai.description.ends_with("embed-small"));
        let no_url = |_: &str| None;
        let error = open(&EmbedderSpec::OpenAi("embed-small".into()), &no_url)
            .await
            .err();
        // Without a base URL the builder falls back on the process's own environment, which may
        // hold a key; when it holds none, the error says what is missing.
        if std::env::var_os("OPENAI_API_KEY").is_none()
            && std::env::var_os("OPENAI_BASE_URL").is_none()
        {
            let error = error.expect("OpenAI's own URL needs a key");
            assert_eq!(error.kind(), LaunchErrorKind::Model);
            assert!(
                error.to_string().contains("memory embedder embed-small"),
                "{error}"
            );
        }
    }

    /// The service flags of `adk api_server` followed by `flags`, parsed as the command line is.
    fn api_server_services(flags: &[&str]) -> ServiceArgs {
        let args = ["adk", "api_server"].iter().chain(flags);
        match Cli::try_parse_from(args).expect("valid flags").command {
            Command::ApiServer(serve) => serve.services,
            other => panic!("not api_server: {other:?}"),
        }
    }

    /// A past session of user `ada` in which the user said `texts`.
    fn said(id: &str, texts: &[&str]) -> adk_core::Session {
        let mut session = adk_core::Session::new(adk_core::SessionKey::new("app", "ada", id));
        for text in texts {
            session.events.push(
                adk_core::Event::new(adk_core::InvocationId::from("e-1"), "user")
                    .with_content(adk_core::Content::user(*text)),
            );
        }
        session
    }

    /// `--memory-embedder local` end to end: the launcher starts the local model's llama.cpp
    /// server for embeddings (building it first on a machine that has none, as the local-model
    /// tests do), memory kept in SQLite embeds what sessions said through it, and a query that
    /// paraphrases one session without a word in common finds that session before the others.
    /// The same store opened for keyword search only finds nothing for that query.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_local_model_embeds_memory_and_a_paraphrase_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let memory_uri = format!("sqlite://{}", dir.path().join("memory.db").display());
        let flags = |embedder: &str| {
            api_server_services(&[
                "--session-service-uri",
                "memory://",
                "--artifact-service-uri",
                "memory://",
                "--credential-service-uri",
                "memory://",
                "--memory-service-uri",
                memory_uri.as_str(),
                "--memory-embedder",
                embedder,
            ])
        };
        let query = "mountain weather";
        let alps = "Is it cold in the Alps in February?";
        let services = crate::store::open(&flags("local")).await.unwrap();
        assert!(
            services
                .description
                .contains("memory searched by meaning with "),
            "{}",
            services.description
        );
        let sessions = [
            said("alps", &[alps]),
            said(
                "pasta",
                &["How long should spaghetti boil before draining?"],
            ),
            said(
                "tax",
                &["When is the deadline to file my income tax return?"],
            ),
            said("car", &["The car makes a grinding noise when I brake."]),
        ];
        for session in &sessions {
            services
                .memory
                .add_session_to_memory(session)
                .await
                .unwrap();
        }
        let found: Vec<String> = services
            .memory
            .search_memory("app", "ada", query)
            .await
            .unwrap()
            .memories
            .iter()
            .filter_map(|memory| memory.content.text())
            .collect();
        // What this proves is the wiring: the local embedder finds a paraphrase that shares no
        // word. How well SmolLM2, a small chat model, ranks by meaning is measured by
        // adk-local-model's recall test; here it puts the Alps second, after the pasta question.
        assert!(found.iter().take(2).any(|text| text == alps), "{found:?}");
        // Dropping the services stops the embedding server.
        drop(services);

        let keywords_only = crate::store::open(&flags("none")).await.unwrap();
        let found = keywords_only
            .memory
            .search_memory("app", "ada", query)
            .await
            .unwrap();
        assert!(found.memories.is_empty(), "{:?}", found.memories);
    }
}
