//! [`ServerState`]: what every handler sees — the apps, the trace store, the run limit and session
//! locks that admit a run (503 or 409 when they cannot), the shutdown flags, and the reader that
//! takes request bodies under the server's limits (413 past the size limit, 503 when the bytes of
//! all bodies being read would pass the budget, 408 when a body trickles in too slowly).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use adk_core::SessionKey;
use adk_gate::BodyError;
use adk_runner::Runner;
use adk_session::{LockError, SessionLease, SessionLocks};
use adk_telemetry::span_store::SpanStore;
use axum::extract::Request;
use bytes::Bytes;
use http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::names::check_name;
use crate::running::RunningRuns;

/// What every handler sees.
pub(crate) struct ServerState {
    /// The apps by name; the Builder tab's save swaps in an app rebuilt from its files, or adds
    /// the app it created. Each lookup clones a runner handle under the read lock, so a run keeps
    /// the runner it started with.
    apps: RwLock<BTreeMap<String, Runner>>,
    /// The YAML apps the Builder tab may edit (only `adk web` gives any).
    pub(crate) yaml_apps: Option<crate::builder::YamlApps>,
    pub(crate) spans: SpanStore,
    pub(crate) dev_ui_dir: Option<PathBuf>,
    /// Eval sets and results, and what runs of them score with.
    pub(crate) evals: crate::eval::Evals,
    /// The settings every run starts from.
    pub(crate) run_config: adk_core::RunConfig,
    /// Fires when runs in flight must stop (the shutdown grace ran out).
    pub(crate) cancel_runs: CancellationToken,
    /// Set once shutdown began: new runs are refused.
    draining: AtomicBool,
    /// Set as soon as a shutdown signal came: `/ready` answers 503 from then on, while runs are
    /// still taken until the drain delay ends.
    stopping: AtomicBool,
    /// One permit per run that may go on at once.
    pub(crate) runs: Arc<Semaphore>,
    /// The limit `runs` started with, for messages.
    max_runs: usize,
    /// Serialises the runs of each session.
    pub(crate) locks: Arc<dyn SessionLocks>,
    /// What a 503 for a full server answers in `Retry-After`.
    pub(crate) retry_after: std::time::Duration,
    /// How request bodies are read: their size limit, the bytes of all bodies at once, the time
    /// one may take.
    pub(crate) bodies: adk_gate::BodyReader,
    /// How long an SSE frame may wait for its client to read it.
    pub(crate) write_timeout: std::time::Duration,
    /// The runs going on here, by session, for cancel requests.
    pub(crate) running: Arc<RunningRuns>,
}

/// A run's place among the runs at once, taken before its body is read; dropping it frees the
/// place.
pub(crate) struct RunSlot {
    _permit: OwnedSemaphorePermit,
}

/// What a run holds while it goes on: its place among the runs at once and its session's lock.
/// Dropping it (the run ended or was dropped) frees both.
pub(crate) struct RunAdmission {
    _lease: SessionLease,
    _slot: RunSlot,
}

impl ServerState {
    /// The state of a server of `apps` with `config`, recording traces in `spans`.
    pub(crate) fn new(
        apps: BTreeMap<String, Runner>,
        spans: SpanStore,
        config: &ServerConfig,
        evals: crate::eval::Evals,
        yaml_apps: Option<crate::builder::YamlApps>,
    ) -> Self {
        Self {
            apps: RwLock::new(apps),
            yaml_apps,
            spans,
            dev_ui_dir: config.dev_ui_dir.clone(),
            evals,
            run_config: config.run_config.clone(),
            cancel_runs: CancellationToken::new(),
            draining: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            runs: Arc::new(Semaphore::new(config.max_concurrent_runs)),
            max_runs: config.max_concurrent_runs,
            locks: config.session_locks.clone(),
            retry_after: config.retry_after,
            bodies: adk_gate::BodyReader::new(
                config.body_limit,
                config.body_budget,
                config.body_read_timeout,
            ),
            write_timeout: config.connection_limits.write_timeout_value(),
            running: Arc::new(RunningRuns::default()),
        }
    }

    /// The runner of app `name` (a cheap handle: a run keeps the one it started with when the
    /// app is replaced), or a 404 that lists the apps.
    pub(crate) fn app(&self, name: &str) -> Result<Runner, ApiError> {
        check_name("app name", name)?;
        let apps = self.apps.read().unwrap_or_else(PoisonError::into_inner);
        apps.get(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = apps.keys().map(String::as_str).collect();
            ApiError::not_found(format!(
                "no app named {name:?}; this server serves: {}",
                names.join(", ")
            ))
        })
    }

    /// The apps, by name, as they are now.
    pub(crate) fn apps(&self) -> impl Iterator<Item = Runner> {
        let apps = self.apps.read().unwrap_or_else(PoisonError::into_inner);
        apps.values().cloned().collect::<Vec<_>>().into_iter()
    }

    /// Serves `runner` for its app from the next request on; `false` when no app has its name.
    pub(crate) fn replace_app(&self, runner: Runner) -> bool {
        let mut apps = self.apps.write().unwrap_or_else(PoisonError::into_inner);
        match apps.get_mut(runner.app_name()) {
            Some(slot) => {
                *slot = runner;
                true
            }
            None => false,
        }
    }

    /// Serves `runner` as a new app from the next request on; `false` when an app already has its
    /// name (and that app stays).
    pub(crate) fn add_app(&self, runner: Runner) -> bool {
        let mut apps = self.apps.write().unwrap_or_else(PoisonError::into_inner);
        match apps.entry(runner.app_name().to_owned()) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(runner);
                true
            }
            std::collections::btree_map::Entry::Occupied(_) => false,
        }
    }

    /// Answers `/ready` with 503 from now on (a shutdown signal came); runs are still taken.
    pub(crate) fn stop_being_ready(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    /// Refuses new runs from now on (the shutdown's drain delay ended).
    pub(crate) fn stop_taking_runs(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// A 503 when the server is shutting down and takes no new runs.
    pub(crate) fn check_accepting(&self) -> Result<(), ApiError> {
        if self.draining.load(Ordering::Acquire) {
            return Err(ApiError::unavailable(
                "shutting_down",
                "the server is shutting down and starts no new runs; retry at another replica",
                self.retry_after,
            ));
        }
        Ok(())
    }

    /// A place among the runs at once, or 503 with `Retry-After` when the server is shutting down
    /// or full. A run takes it before its body is read, so that the bodies being read are
    /// bounded by the run limit too.
    pub(crate) fn run_slot(&self) -> Result<RunSlot, ApiError> {
        self.check_accepting()?;
        let permit = self.runs.clone().try_acquire_owned().map_err(|_| {
            ApiError::unavailable(
                "too_many_runs",
                format!(
                    "this server already runs {} invocations at once, its limit; retry later or \
                     at another replica",
                    self.max_runs
                ),
                self.retry_after,
            )
        })?;
        Ok(RunSlot { _permit: permit })
    }

    /// Admits the run holding `slot` to session `key`: the session's lock (409 when another run
    /// held it for the whole wait, 503 when the lock store is full or unreachable).
    pub(crate) async fn admit(
        &self,
        slot: RunSlot,
        key: &SessionKey,
    ) -> Result<RunAdmission, ApiError> {
        let lease = self
            .locks
            .lock(key)
            .await
            .map_err(|error| self.lock_error(error))?;
        Ok(RunAdmission {
            _lease: lease,
            _slot: slot,
        })
    }

    pub(crate) fn lock_error(&self, error: LockError) -> ApiError {
        match error {
            LockError::Busy { .. } => ApiError::new(
                http::StatusCode::CONFLICT,
                "session_busy",
                error.to_string(),
            ),
            LockError::Saturated { .. } => {
                ApiError::unavailable("lock_pool_full", error.to_string(), self.retry_after)
            }
            error => {
                tracing::error!(error = %error, "cannot lock a session");
                ApiError::unavailable(
                    "session_store_unavailable",
                    error.to_string(),
                    self.retry_after,
                )
            }
        }
    }

    /// `/ready`: fine unless shutting down or the session store does not answer.
    pub(crate) async fn check_ready(&self) -> Result<(), ApiError> {
        if self.stopping.load(Ordering::Acquire) {
            return Err(ApiError::unavailable(
                "draining",
                "the server is shutting down; send new requests elsewhere",
                self.retry_after,
            ));
        }
        self.locks.check_ready().await.map_err(|error| {
            ApiError::unavailable(
                "session_store_unavailable",
                error.to_string(),
                self.retry_after,
            )
        })
    }

    /// Reads a request's body with the server's [`BodyReader`](adk_gate::BodyReader): its size
    /// limit, the bytes of all bodies at once, the time one may take. The bytes stay counted
    /// until the reservation is dropped.
    pub(crate) async fn read_body(
        &self,
        request: Request,
    ) -> Result<(Bytes, adk_gate::BodyReservation), ApiError> {
        self.bodies
            .read(request)
            .await
            .map_err(|error| self.body_error(error))
    }

    fn body_error(&self, error: BodyError) -> ApiError {
        match error {
            BodyError::TooLarge { .. } => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the server accepts (ServerConfig::body_limit)",
            ),
            BodyError::Busy { .. } => ApiError::unavailable(
                "too_many_bytes",
                format!("{error} (ServerConfig::body_budget)"),
                self.retry_after,
            ),
            BodyError::Timeout { .. } => ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!("{error} (ServerConfig::body_read_timeout)"),
            ),
            error => ApiError::bad_request(error.to_string()),
        }
    }
}
