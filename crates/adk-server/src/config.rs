//! [`ServerConfig`]: the settings of a server that are not its apps — who may call it, how big a
//! body may be, how long a shutdown waits, where the dev UI's files are.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use adk_core::RunConfig;
use adk_session::{LocalSessionLocks, SessionLocks};

use crate::error::ServerError;
use crate::security::{Authorizer, OriginPolicy};

/// The default largest request body: 32 MiB (a message with a few images or a PDF).
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// The default time in-flight runs get to finish after a shutdown signal: 10 seconds.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The default number of finished spans the trace panel can show: 10,000.
pub const DEFAULT_SPAN_CAPACITY: usize = 10_000;

/// The default number of runs one server runs at once: 64; one more gets 503 with `Retry-After`.
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 64;

/// The default `Retry-After` of a 503 answered because the server is full: 1 second.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// The settings of a [`Server`](crate::Server).
///
/// ```
/// use adk_server::ServerConfig;
///
/// let config = ServerConfig::default()
///     .allow_origin("https://console.example.com")
///     .allow_origin("regex:https://.*\\.example\\.com")
///     .body_limit(4 * 1024 * 1024)
///     .bearer_token("s3cret");
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct ServerConfig {
    pub(crate) origins: Vec<String>,
    pub(crate) body_limit: usize,
    pub(crate) shutdown_grace: Duration,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) dev_ui_dir: Option<PathBuf>,
    pub(crate) span_capacity: usize,
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
            body_limit: DEFAULT_BODY_LIMIT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            authorizer: None,
            dev_ui_dir: None,
            span_capacity: DEFAULT_SPAN_CAPACITY,
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

    /// The largest request body accepted, in bytes; a larger one gets 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How long runs in flight may go on after a shutdown signal before they are cancelled.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Requires `Authorization: Bearer <token>` on every route but `/health` and the dev UI's
    /// static files.
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.authorizer(crate::security::BearerToken::new(token))
    }

    /// Checks every request but `/health` and the dev UI's static files with `authorizer`; a
    /// request it refuses gets 401.
    pub fn authorizer(mut self, authorizer: impl Authorizer + 'static) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// Serves the adk-web dev UI from `dir` at `/dev-ui/` (see
    /// [`dev_ui::fetch`](crate::dev_ui::fetch) for getting it), and redirects `/` to it.
    pub fn dev_ui_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dev_ui_dir = Some(dir.into());
        self
    }

    /// How many finished spans the in-memory trace store keeps for the debug routes.
    pub fn span_capacity(mut self, spans: usize) -> Self {
        self.span_capacity = spans;
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

    pub(crate) fn origin_policy(&self) -> Result<OriginPolicy, ServerError> {
        OriginPolicy::new(&self.origins)
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("origins", &self.origins)
            .field("body_limit", &self.body_limit)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("authorizer", &self.authorizer.as_ref().map(|_| "<set>"))
            .field("dev_ui_dir", &self.dev_ui_dir)
            .field("span_capacity", &self.span_capacity)
            .field("run_config", &self.run_config)
            .field("max_concurrent_runs", &self.max_concurrent_runs)
            .field("retry_after", &self.retry_after)
            .field("session_locks", &self.session_locks)
            .field("drain_delay", &self.drain_delay)
            .finish()
    }
}
