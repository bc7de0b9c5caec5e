//! [`Server`]: the apps and the settings of a server, built into the state its handlers share;
//! its router; serving with graceful shutdown.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use adk_gate::Gate;
use adk_runner::Runner;
use adk_telemetry::span_store::SpanStore;
use axum::Router;
use tokio::net::TcpListener;

use crate::config::ServerConfig;
use crate::error::ServerError;
use crate::names::check_name;
use crate::routes;
use crate::state::ServerState;

/// Serves apps (each a [`Runner`]: a name, an agent tree and its services) over ADK's REST + SSE
/// API, with the dev UI when it has its files.
///
/// ```no_run
/// # async fn serve(runner: adk_runner::Runner) -> Result<(), adk_server::ServerError> {
/// use adk_server::{Server, ServerConfig, shutdown_signal};
///
/// let server = Server::builder()
///     .app(runner)
///     .config(ServerConfig::default().allow_origin("http://localhost:4200"))
///     .build()?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await.unwrap();
/// server.serve(listener, shutdown_signal()).await
/// # }
/// ```
#[derive(Clone)]
pub struct Server {
    state: Arc<ServerState>,
    config: ServerConfig,
    #[cfg(feature = "a2a")]
    a2a: bool,
}

impl Server {
    /// Starts building a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            apps: Vec::new(),
            config: ServerConfig::default(),
            spans: None,
            eval_metrics: BTreeMap::new(),
            eval_judge: None,
            eval_user_simulator: None,
            yaml_apps: None,
            #[cfg(feature = "a2a")]
            a2a: false,
        }
    }

    /// The store the trace routes read; add its [`layer`](SpanStore::layer) to the process's
    /// `tracing` subscriber so that runs are recorded in it.
    pub fn span_store(&self) -> &SpanStore {
        &self.state.spans
    }

    /// The router with every route behind the server's gate, for mounting in a larger axum app or
    /// for tests. It answers to the configured hosts and the loopback names; [`serve`](Self::serve)
    /// also answers to the address it is bound to.
    pub fn router(&self) -> Result<Router, ServerError> {
        self.router_behind(&self.config.gate()?)
    }

    fn router_behind(&self, gate: &Gate) -> Result<Router, ServerError> {
        let router = routes::router(self.state.clone());
        #[cfg(feature = "a2a")]
        let router = self.with_a2a(router)?;
        Ok(gate.apply(router))
    }

    /// Every route the server serves and who may call it: for audits, and for the test that
    /// checks each route against a caller acting for another user.
    pub fn routes(&self) -> Vec<routes::RouteInfo> {
        // Without the `a2a` feature nothing is added to the table.
        #[cfg_attr(not(feature = "a2a"), allow(unused_mut))]
        let mut routes = routes::route_table();
        #[cfg(feature = "a2a")]
        if self.a2a {
            routes.extend(routes::a2a_routes());
        }
        routes
    }

    /// Mounts each app's A2A server at `/a2a/{app}` (its card at
    /// `/a2a/{app}/.well-known/agent-card.json`), when A2A is on. Its runs share this server's
    /// run limit and session locks, and it sits behind this server's gate.
    #[cfg(feature = "a2a")]
    fn with_a2a(&self, mut router: Router) -> Result<Router, ServerError> {
        if !self.a2a {
            return Ok(router);
        }
        for runner in self.state.apps() {
            let a2a = adk_a2a::A2aServer::builder(runner.clone())
                .run_limit(self.state.runs.clone())
                .session_locks(self.state.locks.clone())
                .retry_after(self.state.retry_after)
                .write_timeout(self.state.write_timeout)
                .body_reader(self.state.bodies.clone())
                .build()
                .map_err(|error| ServerError::Config(error.to_string()))?;
            router = router.nest(&format!("/a2a/{}", runner.app_name()), a2a.ungated_router());
        }
        Ok(router)
    }

    /// Serves on `listener` until `shutdown` completes, then shuts down gracefully: `/ready`
    /// answers 503 at once, the server goes on serving for [`ServerConfig::drain_delay`], then takes
    /// no new connections or runs, runs in flight get [`ServerConfig::shutdown_grace`] to finish and are
    /// cancelled after it (their streams end with an error frame), and this returns once every
    /// connection closed.
    pub async fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let mut gate = self.config.gate()?;
        if let Ok(local) = listener.local_addr()
            && !local.ip().is_unspecified()
        {
            gate = gate.with_host(&local.ip().to_string());
        }
        let router = self.router_behind(&gate)?;
        let limits = self.config.connection_limits;
        let state = self.state.clone();
        let grace = self.config.shutdown_grace;
        let delay = self.config.drain_delay;
        let drain = async move {
            shutdown.await;
            // Not ready from now on, so that load balancers send new requests elsewhere; the
            // requests still arriving meanwhile are served.
            state.stop_being_ready();
            if !delay.is_zero() {
                tracing::info!(
                    ?delay,
                    "shutting down: not ready, serving until the drain delay ends"
                );
                tokio::time::sleep(delay).await;
            }
            tracing::info!(?grace, "shutting down: finishing runs in flight");
            state.stop_taking_runs();
            let cancel = state.cancel_runs.clone();
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                cancel.cancel();
            });
        };
        adk_gate::serve(listener, router, limits, drain)
            .await
            .map_err(ServerError::Serve)
    }

    /// Binds `address` (`host:port`) and [`serve`](Self::serve)s until `shutdown` completes.
    pub async fn bind_and_serve(
        &self,
        address: &str,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| ServerError::Bind {
                address: address.to_owned(),
                source,
            })?;
        self.serve(listener, shutdown).await
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field(
                "apps",
                &self
                    .state
                    .apps()
                    .map(|app| app.app_name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Server`]; made by [`Server::builder`].
#[must_use]
pub struct ServerBuilder {
    apps: Vec<Runner>,
    config: ServerConfig,
    spans: Option<SpanStore>,
    eval_metrics: BTreeMap<String, Arc<dyn adk_eval::Metric>>,
    eval_judge: Option<Arc<dyn adk_eval::Judge>>,
    eval_user_simulator: Option<Arc<dyn adk_core::Llm>>,
    yaml_apps: Option<crate::builder::YamlApps>,
    #[cfg(feature = "a2a")]
    a2a: bool,
}

impl ServerBuilder {
    /// Serves `runner`'s app under its name.
    pub fn app(mut self, runner: Runner) -> Self {
        self.apps.push(runner);
        self
    }

    /// Serves each of `runners`.
    pub fn apps(mut self, runners: impl IntoIterator<Item = Runner>) -> Self {
        self.apps.extend(runners);
        self
    }

    /// The server's settings.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Reads traces from `store` instead of a new one (share one store between servers, or with a
    /// subscriber set up before the server).
    pub fn span_store(mut self, store: SpanStore) -> Self {
        self.spans = Some(store);
        self
    }

    /// Offers `metric` under `name` to the eval routes' runs (and lists it in `metrics-info`),
    /// besides the built-in metrics; see `adk_eval::Metric`.
    pub fn eval_metric(
        mut self,
        name: impl Into<String>,
        metric: impl adk_eval::IntoMetric,
    ) -> Self {
        self.eval_metrics.insert(name.into(), metric.into_metric());
        self
    }

    /// Judges the judged metrics (`final_response_match_v2`, the rubric metrics and
    /// `per_turn_user_simulator_quality_v1`) of the eval routes' runs with `judge`; without one
    /// they are not offered.
    pub fn eval_judge(mut self, judge: impl adk_eval::IntoJudge) -> Self {
        self.eval_judge = Some(judge.into_judge());
        self
    }

    /// Plays the user of eval cases with a conversation scenario with `model` in the eval routes'
    /// runs (see `adk_eval::Evaluator::user_simulator`); without one, such cases fail saying so.
    pub fn eval_user_simulator(mut self, model: impl adk_core::IntoLlm) -> Self {
        self.eval_user_simulator = Some(model.into_llm());
        self
    }

    /// Lets adk-web's Builder tab read and save the agent files of `apps` (apps described in
    /// YAML, each served under its name too): the dev UI's mode, which `adk web` turns on and
    /// `adk api_server` does not, as in ADK Python. Saving checks the files with
    /// [`AgentFiles::check`](crate::builder::AgentFiles::check), writes them atomically and serves
    /// the app [`AgentFiles::reload`](crate::builder::AgentFiles::reload) builds from the next run
    /// on. Only callers that may act for every user reach these routes.
    pub fn yaml_apps(mut self, apps: crate::builder::YamlApps) -> Self {
        self.yaml_apps = Some(apps);
        self
    }

    /// Also serves each app over A2A at `/a2a/{app}`, with its agent card at
    /// `/a2a/{app}/.well-known/agent-card.json` (see `adk_a2a::A2aServer`). The server's gate
    /// (hosts, origins, authentication) guards these routes too, and their runs count against
    /// the server's run limit and take the session locks `/run` takes.
    #[cfg(feature = "a2a")]
    pub fn a2a(mut self, enabled: bool) -> Self {
        self.a2a = enabled;
        self
    }

    /// Builds the server; fails when no app was given, two apps share a name, an app name is not a
    /// plain name, or an allowed-origin pattern is not a valid regex.
    pub fn build(self) -> Result<Server, ServerError> {
        if self.apps.is_empty() {
            return Err(ServerError::Config(
                "a server needs at least one app (ServerBuilder::app)".to_owned(),
            ));
        }
        let mut apps = BTreeMap::new();
        for runner in self.apps {
            let name = runner.app_name().to_owned();
            check_name("app name", &name)
                .map_err(|error| ServerError::Config(error.message().to_owned()))?;
            if apps.insert(name.clone(), runner).is_some() {
                return Err(ServerError::Config(format!(
                    "two apps are named {name:?}; app names must be unique"
                )));
            }
        }
        self.config.gate()?;
        let spans = self.spans.unwrap_or_else(|| {
            SpanStore::with_max_bytes(self.config.span_capacity, self.config.span_bytes)
        });
        let evals = crate::eval::Evals::new(
            adk_eval::EvalStore::new(self.config.eval_storage.clone()),
            self.eval_metrics,
            self.eval_judge,
            self.eval_user_simulator,
        );
        Ok(Server {
            state: Arc::new(ServerState::new(
                apps,
                spans,
                &self.config,
                evals,
                self.yaml_apps,
            )),
            config: self.config,
            #[cfg(feature = "a2a")]
            a2a: self.a2a,
        })
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM: the usual shutdown trigger for [`Server::serve`].
///
/// The signals are listened for from the call on, not from the first poll: call it before
/// announcing the server, so that a signal sent as soon as the announcement is seen stops the
/// server gracefully instead of killing the process. Call it inside a tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        async fn received(signal: std::io::Result<Signal>) {
            match signal {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                // A signal that cannot be listened for never comes.
                Err(_) => std::future::pending::<()>().await,
            }
        }
        let interrupt = received(signal(SignalKind::interrupt()));
        let terminate = received(signal(SignalKind::terminate()));
        async move {
            tokio::select! {
                () = interrupt => {}
                () = terminate => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
