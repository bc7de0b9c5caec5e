//! [`A2aServer`]: one app exposed over A2A as an axum router — the agent card and the JSON-RPC
//! endpoint — and [`serve`], which runs one on its own.

mod card;
mod execute;
mod rpc;
mod serve;
mod tasks;

use std::sync::Arc;

use adk_runner::Runner;
use axum::Router;
use axum::routing::{get, post};

pub use serve::{serve, serve_listener};

use crate::AGENT_CARD_PATH;
use crate::error::A2aError;
use crate::types::{AgentCard, AgentProvider};

/// The default number of tasks a server remembers; past it the oldest finished ones are
/// forgotten.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// Exposes one app (a [`Runner`]) over A2A.
///
/// Its [`router`](Self::router) serves the agent card at `/.well-known/agent-card.json` and
/// JSON-RPC at `/`; mount it where the app should live (`adk-server` mounts it at `/a2a/{app}`).
/// Each A2A context is a session of the app, of user `A2A_USER_<context id>` as in ADK Python;
/// each message runs the agent tree once, as a task.
///
/// ```
/// # fn build(runner: adk_runner::Runner) -> Result<(), adk_a2a::A2aError> {
/// use adk_a2a::A2aServer;
///
/// let server = A2aServer::builder(runner)
///     .url("http://127.0.0.1:8001/")
///     .build()?;
/// let router: axum::Router = server.router();
/// # let _ = router;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct A2aServer {
    inner: Arc<Inner>,
}

/// What every handler of a server shares.
pub(crate) struct Inner {
    pub(crate) runner: Runner,
    pub(crate) url: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) version: String,
    pub(crate) provider: Option<AgentProvider>,
    pub(crate) tasks: tasks::TaskStore,
}

impl A2aServer {
    /// Starts building the server of `runner`'s app.
    pub fn builder(runner: Runner) -> A2aServerBuilder {
        A2aServerBuilder {
            runner,
            url: None,
            description: None,
            version: "0.1.0".to_owned(),
            provider: None,
            max_tasks: DEFAULT_MAX_TASKS,
        }
    }

    /// The router: `GET /.well-known/agent-card.json` and `POST /` (JSON-RPC).
    pub fn router(&self) -> Router {
        Router::new()
            .route(AGENT_CARD_PATH, get(card::handler))
            .route("/", post(rpc::handler))
            .with_state(self.inner.clone())
    }

    /// The agent card, with `url` as where JSON-RPC requests go.
    pub fn card(&self, url: &str) -> AgentCard {
        card::build(&self.inner, url)
    }

    /// The app's name.
    pub fn app_name(&self) -> &str {
        self.inner.runner.app_name()
    }
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("app", &self.inner.runner.app_name())
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

/// Builds an [`A2aServer`]; made by [`A2aServer::builder`].
#[must_use]
pub struct A2aServerBuilder {
    runner: Runner,
    url: Option<String>,
    description: Option<String>,
    version: String,
    provider: Option<AgentProvider>,
    max_tasks: usize,
}

impl A2aServerBuilder {
    /// The public URL of the JSON-RPC endpoint, as the card states it. Without it, the card
    /// names the URL the card itself was fetched from (its host and path), which is right unless
    /// a proxy rewrites them.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// The card's description; by default the root agent's.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The agent's own version, as the card states it (`0.1.0` by default).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Who provides the agent.
    pub fn provider(mut self, organization: impl Into<String>, url: impl Into<String>) -> Self {
        self.provider = Some(AgentProvider {
            organization: organization.into(),
            url: url.into(),
        });
        self
    }

    /// How many tasks the server remembers (at least 1); past it the oldest finished ones are
    /// forgotten.
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.max_tasks = tasks.max(1);
        self
    }

    /// Builds the server; fails when the URL is given but empty.
    pub fn build(self) -> Result<A2aServer, A2aError> {
        if self.url.as_deref().is_some_and(|url| url.trim().is_empty()) {
            return Err(A2aError::Config(
                "the A2A server's url is empty; give its public URL or leave it unset".to_owned(),
            ));
        }
        Ok(A2aServer {
            inner: Arc::new(Inner {
                runner: self.runner,
                url: self.url,
                description: self.description,
                version: self.version,
                provider: self.provider,
                tasks: tasks::TaskStore::new(self.max_tasks),
            }),
        })
    }
}
