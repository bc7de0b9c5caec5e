//! Serves adk-rs agents over HTTP: ADK's REST + SSE API, wire-compatible with ADK Python's
//! `adk api_server`, and the adk-web dev UI.
//!
//! A [`Server`] serves one or many apps; an app is a [`Runner`](adk_runner::Runner) (a name, a root
//! agent and its session, artifact and memory services). The routes, bodies and SSE framing are
//! ADK Python's, so the adk-web UI and ADK clients work unchanged:
//!
//! | route | what |
//! |---|---|
//! | `GET /health`, `GET /ready`, `GET /version` | liveness; readiness (session store answers, not draining); version, language |
//! | `GET /list-apps` (`?detailed=true`), `GET /apps/{app}/app-info` | the apps and their agent trees |
//! | `GET`/`POST /apps/{app}/users/{user}/sessions` | list / create (optional id, state, events) |
//! | `GET`/`PATCH`/`DELETE .../sessions/{session}` | get with events / `{"stateDelta"}` / delete |
//! | `.../sessions/{session}/artifacts...` | list, save, load (by version), versions and metadata, delete |
//! | `PATCH /apps/{app}/users/{user}/memory` | add a session to memory |
//! | `POST /run`, `POST /run_sse` | run: all events as a JSON array, or one SSE frame per event |
//! | `GET /dev/apps/{app}/debug/trace/...` | spans of a session, attributes of an event's step |
//! | `GET /dev/apps/{app}/graph`, `.../events/{event}/graph` | the agent graph in DOT |
//! | `GET /dev-ui/` | the dev UI (with [`ServerConfig::dev_ui_dir`]; see [`dev_ui::fetch`]) |
//! | `/a2a/{app}`, `GET /a2a/{app}/.well-known/agent-card.json` | A2A JSON-RPC and the agent card (feature `a2a`, `ServerBuilder::a2a`) |
//!
//! Anything else answers 404 with `{"error", "detail"}`.
//!
//! # Guarantees
//!
//! - **Bad input** gets a clear JSON error and changes nothing: an unknown app, user or session is a
//!   404; malformed JSON or a missing field a 400 naming it; a body over
//!   [`ServerConfig::body_limit`] a 413; a name with `/`, `\`, `..`, NUL or a control character a
//!   400; a function response that answers nothing pending (a forged continuation) a 400, with
//!   nothing stored.
//! - **Who may call**: a state-changing request from an origin that is neither the server's own nor
//!   allowed ([`ServerConfig::allow_origin`], `regex:` patterns) gets 403; CORS answers the same
//!   list; an optional [`Authorizer`] (such as a bearer token) guards every route but `/health`
//!   and the UI's files.
//! - **Cancellation**: a client that disconnects drops its run, which cancels it; events already
//!   stored stay, partial events are never stored. [`Server::serve`] shuts down gracefully: no new
//!   runs, in-flight runs finish within [`ServerConfig::shutdown_grace`] or are cancelled.
//! - **Replicas and backpressure**: the runs of one session are serialised by
//!   [`ServerConfig::session_locks`] (a run waiting too long for its session gets 409
//!   `session_busy`); at most [`ServerConfig::max_concurrent_runs`] run at once and one more gets
//!   503 with `Retry-After`; `/ready` answers 503 from a shutdown signal on (see
//!   [`ServerConfig::drain_delay`]) and while the session store does not answer.
//! - **Traces**: the debug routes read a bounded in-memory [`SpanStore`](adk_telemetry::span_store::SpanStore);
//!   add [`Server::span_store`]'s layer to the process's `tracing` subscriber.
//!
//! ```no_run
//! use std::sync::Arc;
//! use adk_server::{Server, shutdown_signal};
//! # async fn serve(root_agent: Arc<dyn adk_core::Agent>, sessions: Arc<dyn adk_core::SessionService>)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! let runner = adk_runner::Runner::builder("weather", root_agent)
//!     .session_service(sessions)
//!     .build()?;
//! let server = Server::builder().app(runner).build()?;
//! server.bind_and_serve("127.0.0.1:8000", shutdown_signal()).await?;
//! # Ok(()) }
//! ```

mod app_info;
mod config;
pub mod dev_ui;
mod error;
mod extract;
mod routes;
mod security;
mod server;

pub use config::{
    DEFAULT_BODY_LIMIT, DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_RETRY_AFTER, DEFAULT_SHUTDOWN_GRACE,
    DEFAULT_SPAN_CAPACITY, ServerConfig,
};
pub use error::{ApiError, ServerError};
pub use security::{Authorizer, BearerToken};
pub use server::{Server, ServerBuilder, shutdown_signal};
