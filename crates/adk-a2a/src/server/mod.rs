//! [`A2aServer`]: one app exposed over A2A as an axum router — the agent card and the JSON-RPC
//! endpoint behind a gate — and [`serve`], which runs one on its own.

mod card;
mod execute;
mod http_error;
mod idempotency;
mod rpc;
mod serve;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use adk_gate::{BodyReader, ConnectionLimits, Gate};
use adk_runner::Runner;
use adk_session::{LocalSessionLocks, SessionLocks};
use axum::Router;
use axum::routing::{get, post};
use tokio::sync::Semaphore;

pub use serve::{serve, serve_listener};

use crate::AGENT_CARD_PATH;
use crate::error::A2aError;
use crate::types::{AgentCard, AgentProvider};

/// The default number of tasks a server remembers; past it the oldest finished ones are
/// forgotten.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// The default number of bytes of tasks a server remembers, running ones included: 256 MiB.
pub const DEFAULT_MAX_TASK_STORE_BYTES: usize = 256 * 1024 * 1024;

/// The default number of bytes one remembered task may hold: 4 MiB; past it its oldest history
/// is dropped. With the store's default this lets 64 tasks run at once.
pub const DEFAULT_MAX_TASK_BYTES: usize = 4 * 1024 * 1024;

/// The default number of runs (tasks working) at once, when the server has no run limit of its
/// own host's: 64, as `adk-server`'s.
pub const DEFAULT_MAX_RUNS: usize = 64;

/// The default largest JSON-RPC request body: 32 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// The default bytes of request bodies read at once: 128 MiB.
pub const DEFAULT_BODY_BUDGET: usize = 128 * 1024 * 1024;

/// The default time a request body may take to arrive: 60 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Exposes one app (a [`Runner`]) over A2A.
///
/// Its [`router`](Self::router) serves the agent card at `/.well-known/agent-card.json` and
/// JSON-RPC at `/`, behind its [`Gate`] (the loopback host names, no foreign origin, and
/// authentication when configured); mount it where the app should live (`adk-server` mounts it
/// at `/a2a/{app}`, behind its own gate). JSON-RPC takes `Content-Type: application/json` only, so
/// that a web page cannot send it a request without a CORS preflight.
///
/// Each A2A context is a session of the app: of the authenticated caller's user, or, on a server
/// that authenticates no one, of user `A2A_USER_<context id>` as in ADK Python. A task belongs to
/// the user that started it: another user's task is unknown to a caller (unless it holds the
/// gate's admin scope). Each message runs the agent tree once, as a task, holding a place among
/// the server's runs at once and its session's lock, as `/run` does; a task that cannot get
/// them is refused with 503 or 409 before anything is stored.
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
    gate: Gate,
    connection_limits: ConnectionLimits,
}

/// What every handler of a server shares.
pub(crate) struct Inner {
    pub(crate) runner: Runner,
    pub(crate) url: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) version: String,
    pub(crate) provider: Option<AgentProvider>,
    pub(crate) tasks: tasks::TaskStore,
    /// One permit per run that may go on at once (shared with the host server's runs).
    pub(crate) runs: Arc<Semaphore>,
    /// Serialises the runs of each session (shared with the host server's).
    pub(crate) locks: Arc<dyn SessionLocks>,
    /// What a 503 answers in `Retry-After`.
    pub(crate) retry_after: Duration,
    /// How long a stream event may wait for its reader before the reader is let go.
    pub(crate) write_timeout: Duration,
    /// How request bodies are read.
    pub(crate) bodies: BodyReader,
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
            max_task_store_bytes: DEFAULT_MAX_TASK_STORE_BYTES,
            max_task_bytes: DEFAULT_MAX_TASK_BYTES,
            runs: None,
            locks: None,
            retry_after: Duration::from_secs(1),
            write_timeout: adk_gate::DEFAULT_WRITE_TIMEOUT,
            bodies: None,
            body_limit: DEFAULT_BODY_LIMIT,
            gate: None,
            connection_limits: ConnectionLimits::default(),
        }
    }

    /// The router behind the server's gate: `GET /.well-known/agent-card.json` (public) and
    /// `POST /` (JSON-RPC).
    pub fn router(&self) -> Router {
        self.gate.apply(self.ungated_router())
    }

    /// The router without a gate, for mounting behind a gate of your own (`adk-server` mounts it
    /// behind its gate). Its JSON-RPC handler answers 500 to a request that passed no gate.
    pub fn ungated_router(&self) -> Router {
        Router::new()
            .route(AGENT_CARD_PATH, get(card::handler))
            .route("/", post(rpc::handler))
            .with_state(self.inner.clone())
    }

    /// The gate [`router`](Self::router) puts in front of the routes.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The connection timeouts [`serve`] applies.
    pub fn connection_limits(&self) -> ConnectionLimits {
        self.connection_limits
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
    max_task_store_bytes: usize,
    max_task_bytes: usize,
    runs: Option<Arc<Semaphore>>,
    locks: Option<Arc<dyn SessionLocks>>,
    retry_after: Duration,
    write_timeout: Duration,
    bodies: Option<BodyReader>,
    body_limit: usize,
    gate: Option<Gate>,
    connection_limits: ConnectionLimits,
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

    /// How many bytes of tasks the server remembers, running tasks included
    /// ([`DEFAULT_MAX_TASK_STORE_BYTES`] by default), and how many one task may hold
    /// ([`DEFAULT_MAX_TASK_BYTES`]): past its own bound a task loses its oldest history; past the
    /// store's the oldest finished tasks are forgotten; and only as many tasks run at once as fit
    /// whole.
    pub fn max_task_bytes(mut self, store_bytes: usize, task_bytes: usize) -> Self {
        self.max_task_store_bytes = store_bytes.max(1);
        self.max_task_bytes = task_bytes.max(1);
        self
    }

    /// How many tasks may work at once ([`DEFAULT_MAX_RUNS`] by default); one more is refused
    /// with 503 and `Retry-After`. Ignored when [`run_limit`](Self::run_limit) shares a limit.
    pub fn max_concurrent_runs(mut self, runs: usize) -> Self {
        self.runs = Some(Arc::new(Semaphore::new(runs.max(1))));
        self
    }

    /// Counts the tasks' runs against `runs`, a limit shared with other runs (a host server's
    /// `/run`): a task starts only with one of its permits.
    pub fn run_limit(mut self, runs: Arc<Semaphore>) -> Self {
        self.runs = Some(runs);
        self
    }

    /// Serialises the runs of each session with `locks` (shared with a host server's `/run`);
    /// process-local locks by default.
    pub fn session_locks(mut self, locks: Arc<dyn SessionLocks>) -> Self {
        self.locks = Some(locks);
        self
    }

    /// The `Retry-After` of a 503 answered because the server is full.
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after;
        self
    }

    /// How long a stream event may wait for its reader: a `message/stream` client that stops
    /// reading for longer is let go (the task goes on, and `tasks/get` shows it), so a slow
    /// reader never blocks the task or its cancellation.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// The largest JSON-RPC request body ([`DEFAULT_BODY_LIMIT`] by default); a larger one gets
    /// 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Reads request bodies with `reader`: its size limit, and its budget of bytes read at once
    /// (shared with a host server's other routes); by default its own budget of
    /// [`DEFAULT_BODY_BUDGET`] with the [`body_limit`](Self::body_limit).
    pub fn body_reader(mut self, reader: BodyReader) -> Self {
        self.body_limit = reader.limit();
        self.bodies = Some(reader);
        self
    }

    /// The gate of [`A2aServer::router`]: hosts, origins and authentication. By default the
    /// loopback host names, no foreign origin and no authentication; the agent card is public
    /// whatever the gate says, as A2A wants.
    pub fn gate(mut self, gate: Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The connection timeouts of [`serve`] (see [`ConnectionLimits`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection_limits = limits;
        self
    }

    /// Builds the server; fails when the URL is given but empty.
    pub fn build(self) -> Result<A2aServer, A2aError> {
        if self.url.as_deref().is_some_and(|url| url.trim().is_empty()) {
            return Err(A2aError::Config(
                "the A2A server's url is empty; give its public URL or leave it unset".to_owned(),
            ));
        }
        let gate = self.gate.unwrap_or_default();
        Ok(A2aServer {
            inner: Arc::new(Inner {
                runner: self.runner,
                url: self.url,
                description: self.description,
                version: self.version,
                provider: self.provider,
                tasks: tasks::TaskStore::new(tasks::TaskLimits {
                    tasks: self.max_tasks,
                    bytes: self.max_task_store_bytes,
                    task_bytes: self.max_task_bytes,
                }),
                runs: self
                    .runs
                    .unwrap_or_else(|| Arc::new(Semaphore::new(DEFAULT_MAX_RUNS))),
                locks: self
                    .locks
                    .unwrap_or_else(|| Arc::new(LocalSessionLocks::default())),
                retry_after: self.retry_after,
                write_timeout: self.write_timeout,
                bodies: match self.bodies {
                    Some(reader) => reader.with_limit(self.body_limit),
                    None => BodyReader::new(
                        self.body_limit,
                        DEFAULT_BODY_BUDGET,
                        DEFAULT_BODY_READ_TIMEOUT,
                    ),
                },
            }),
            gate: gate.with_public_path(AGENT_CARD_PATH),
            connection_limits: self.connection_limits,
        })
    }
}
