//! [`ServerConfig`]: the settings of a server that are not its apps — who may call it and by
//! which host names, how big a body may be and how many bytes of bodies may be read at once, how
//! long a connection may wait, how long a shutdown waits, where the dev UI's files are.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use adk_core::RunConfig;
use adk_gate::{Authentication, ConnectionLimits, Gate, GateError};
use adk_session::{LocalSessionLocks, SessionLocks};

use crate::error::{DEFAULT_RETRY_AFTER, ServerError};

/// The default largest request body: 32 MiB (a message with a few images or a PDF).
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// The default number of bytes of request bodies the server holds at once, all requests
/// together: 128 MiB. A body that would go past it is refused with 503 and `Retry-After`, so a
/// flood of large bodies in parallel cannot exhaust memory.
pub const DEFAULT_BODY_BUDGET: usize = 128 * 1024 * 1024;

/// The default time a request's body may take to arrive: 60 seconds; a slower one gets 408.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The default number of bytes the trace store keeps: 64 MiB (see
/// [`SpanStore::with_max_bytes`](adk_telemetry::span_store::SpanStore::with_max_bytes)).
pub const DEFAULT_SPAN_BYTES: usize = adk_telemetry::span_store::DEFAULT_MAX_BYTES;

/// The scope that lets a principal act for every user unless [`ServerConfig::admin_scope`] names
/// another.
pub const DEFAULT_ADMIN_SCOPE: &str = "adk:admin";

/// The default time in-flight runs get to finish after a shutdown signal: 10 seconds.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The default number of finished spans the trace panel can show: 10,000.
pub const DEFAULT_SPAN_CAPACITY: usize = 10_000;

/// The default folder of eval sets and results: `.adk/evals` in the working directory.
pub const DEFAULT_EVAL_STORAGE: &str = ".adk/evals";

/// The default number of runs one server runs at once: 64; one more gets 503 with `Retry-After`.
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 64;

/// The settings of a [`Server`](crate::Server).
///
/// ```
/// use adk_server::ServerConfig;
///
/// use adk_gate::{ApiKeys, Authentication, Principal};
///
/// let keys = ApiKeys::new().key("a-long-random-key", Principal::new("ada"));
/// let config = ServerConfig::default()
///     .allowed_host("agents.example.com")
///     .allow_origin("https://console.example.com")
///     .allow_origin("regex:https://.*\\.example\\.com")
///     .body_limit(4 * 1024 * 1024)
///     .authentication(Authentication::new().api_keys(keys));
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct ServerConfig {
    pub(crate) origins: Vec<String>,
    pub(crate) hosts: Vec<String>,
    pub(crate) body_limit: usize,
    pub(crate) body_budget: usize,
    pub(crate) body_read_timeout: Duration,
    pub(crate) connection_limits: ConnectionLimits,
    pub(crate) shutdown_grace: Duration,
    pub(crate) authentication: Authentication,
    pub(crate) admin_scope: String,
    pub(crate) dev_ui_dir: Option<PathBuf>,
    pub(crate) eval_storage: PathBuf,
    pub(crate) span_capacity: usize,
    pub(crate) span_bytes: usize,
    pub(crate) run_config: RunConfig,
    pub(crate) max_concurrent_runs: usize,
    pub(crate) retry_after: Duration,
    pub(crate) session_locks: Arc<dyn SessionLocks>,
    pub(crate) drain_delay: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            origins: Vec::new(),
            hosts: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            body_budget: DEFAULT_BODY_BUDGET,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            connection_limits: ConnectionLimits::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            authentication: Authentication::new(),
            admin_scope: DEFAULT_ADMIN_SCOPE.to_owned(),
            dev_ui_dir: None,
            eval_storage: PathBuf::from(DEFAULT_EVAL_STORAGE),
            span_capacity: DEFAULT_SPAN_CAPACITY,
            span_bytes: DEFAULT_SPAN_BYTES,
            run_config: RunConfig::default(),
            max_concurrent_runs: DEFAULT_MAX_CONCURRENT_RUNS,
            retry_after: DEFAULT_RETRY_AFTER,
            session_locks: Arc::new(LocalSessionLocks::default()),
            drain_delay: Duration::ZERO,
        }
    }
}

impl ServerConfig {
    /// Allows cross-origin requests from `origin` (`https://host:port`), or from every origin a
    /// pattern matches when it is written `regex:<pattern>` (anchored at both ends), or from any
    /// origin with `*`. Same-origin requests and requests without an `Origin` header (curl, other
    /// servers) are always allowed; a state-changing request from any other origin gets 403.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into());
        self
    }

    /// Allows each of `origins`, as [`allow_origin`](Self::allow_origin) does.
    pub fn allow_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.origins.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Also answers to requests whose `Host` is `host` (a name, `*.domain` for its subdomains, or
    /// `*` for any). A server answers to `localhost`, `127.0.0.1`, `[::1]` and the address it is
    /// bound to; every other host gets 403, which closes DNS rebinding (a web page whose name was
    /// rebound to this machine still sends its own name).
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into());
        self
    }

    /// Also answers to each of `hosts`, as [`allowed_host`](Self::allowed_host) does.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// The largest request body accepted, in bytes; a larger one gets 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How many bytes of request bodies the server holds at once, all requests together
    /// ([`DEFAULT_BODY_BUDGET`] by default); a body that would go past it gets 503 with
    /// `Retry-After`.
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.body_budget = bytes;
        self
    }

    /// How long a request's body may take to arrive ([`DEFAULT_BODY_READ_TIMEOUT`] by default); a
    /// slower one gets 408, so that a client trickling a body cannot hold a run's place.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The header read, idle and write timeouts of connections (see [`ConnectionLimits`]); a
    /// `/run_sse` client that stops reading for the write timeout is cut off, its run cancelled
    /// and its session unlocked.
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection_limits = limits;
        self
    }

    /// How long runs in flight may go on after a shutdown signal before they are cancelled.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Authenticates every request but `/health`, `/ready`, the dev UI's files and agent cards
    /// with `authentication` (JWT bearer tokens, API keys, or an authenticator of your own); a
    /// request without valid credentials gets 401. Each caller then reaches only its own user's
    /// sessions, artifacts, runs and traces (403 otherwise), unless it holds the
    /// [`admin_scope`](Self::admin_scope).
    pub fn authentication(mut self, authentication: Authentication) -> Self {
        self.authentication = authentication;
        self
    }

    /// The scope that lets a principal act for every user; [`DEFAULT_ADMIN_SCOPE`] by default.
    pub fn admin_scope(mut self, scope: impl Into<String>) -> Self {
        self.admin_scope = scope.into();
        self
    }

    /// Whether the server authenticates its callers.
    pub fn authenticates(&self) -> bool {
        !self.authentication.is_empty()
    }

    /// Serves the adk-web dev UI from `dir` at `/dev-ui/` (see
    /// [`dev_ui::fetch`](crate::dev_ui::fetch) for getting it), and redirects `/` to it.
    pub fn dev_ui_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dev_ui_dir = Some(dir.into());
        self
    }

    /// Keeps the eval sets and results of the eval routes (adk-web's Evals tab) in `dir`
    /// ([`DEFAULT_EVAL_STORAGE`] unless set), laid out as ADK Python's local eval managers lay
    /// them out: `<dir>/<app>/<set>.evalset.json` and
    /// `<dir>/<app>/.adk/eval_history/<result>.evalset_result.json`. Folders are made when
    /// something is first written.
    pub fn eval_storage(mut self, dir: impl Into<PathBuf>) -> Self {
        self.eval_storage = dir.into();
        self
    }

    /// How many finished spans the in-memory trace store keeps for the debug routes.
    pub fn span_capacity(mut self, spans: usize) -> Self {
        self.span_capacity = spans;
        self
    }

    /// How many bytes of spans the in-memory trace store keeps ([`DEFAULT_SPAN_BYTES`] by
    /// default); with message content captured, one span can be large.
    pub fn span_bytes(mut self, bytes: usize) -> Self {
        self.span_bytes = bytes;
        self
    }

    /// The settings every run starts from (limits such as
    /// [`RunConfig::max_llm_calls`](adk_core::RunConfig) or the loop guard); a request's
    /// `streaming` and `customMetadata` are set on top.
    pub fn run_config(mut self, config: RunConfig) -> Self {
        self.run_config = config;
        self
    }

    /// How many runs (`/run`, `/run_sse`) this server runs at once; one more is refused at once
    /// with 503 and `Retry-After` instead of queueing without bound. At least 1.
    pub fn max_concurrent_runs(mut self, runs: usize) -> Self {
        self.max_concurrent_runs = runs.max(1);
        self
    }

    /// The `Retry-After` answered with a 503 because the server is full or its session store is
    /// unavailable (rounded up to whole seconds).
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after;
        self
    }

    /// Serialises the runs of each session with `locks`: a run takes its session's lock before it
    /// loads the session and holds it until its last event is stored. The default,
    /// [`LocalSessionLocks`], serialises within this process; replicas sharing a PostgreSQL
    /// database need `adk_session::PostgresSessionLocks`. A run that waits longer than the locks'
    /// wait limit gets 409 (`session_busy`).
    pub fn session_locks(mut self, locks: Arc<dyn SessionLocks>) -> Self {
        self.session_locks = locks;
        self
    }

    /// How long the server goes on serving after a shutdown signal before it stops taking
    /// connections and runs, with `/ready` answering 503 meanwhile: the time a load balancer needs
    /// to notice and send requests elsewhere. Zero by default.
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.drain_delay = delay;
        self
    }

    /// The gate of the server's routes: its hosts, origins and authentication, with `/health`,
    /// `/ready`, the dev UI's files and agent cards public.
    pub(crate) fn gate(&self) -> Result<Gate, ServerError> {
        let mut gate = Gate::builder()
            .allowed_hosts(&self.hosts)
            .authentication(self.authentication.clone())
            .admin_scope(self.admin_scope.clone())
            .public_path("/health")
            .public_path("/ready")
            .public_path("/")
            .public_prefix("/dev-ui")
            .public_suffix("/.well-known/agent-card.json");
        for origin in &self.origins {
            gate = gate.allow_origin(origin.clone());
        }
        gate.build().map_err(|error| match error {
            GateError::Config(message) => ServerError::Config(message),
            other => ServerError::Config(other.to_string()),
        })
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("body_limit", &self.body_limit)
            .field("body_budget", &self.body_budget)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("connection_limits", &self.connection_limits)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("authentication", &self.authentication)
            .field("admin_scope", &self.admin_scope)
            .field("dev_ui_dir", &self.dev_ui_dir)
            .field("eval_storage", &self.eval_storage)
            .field("span_capacity", &self.span_capacity)
            .field("span_bytes", &self.span_bytes)
            .field("run_config", &self.run_config)
            .field("max_concurrent_runs", &self.max_concurrent_runs)
            .field("retry_after", &self.retry_after)
            .field("session_locks", &self.session_locks)
            .field("drain_delay", &self.drain_delay)
            .finish()
    }
}
