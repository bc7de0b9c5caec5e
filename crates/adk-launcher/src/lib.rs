//! The command line of a program that runs agents: `run`, `web`, `api_server`, `a2a` and `create`, for
//! a user's own binary in a few lines, exactly as the `adk` binary offers them (it is built on
//! this crate).
//!
//! | subcommand | what it does |
//! |---|---|
//! | `run [AGENT]` | an interactive terminal session: streamed answers, visible tool calls, tool confirmations; `AGENT` may be a folder holding a `root_agent.yaml` |
//! | `web [DIR]` | ADK's REST + SSE API with the adk-web dev UI at `/dev-ui/` |
//! | `api_server [DIR]` | the same API without the UI (`--a2a` adds A2A at `/a2a/{app}` to both) |
//! | `a2a [AGENT]` | one agent over the Agent2Agent protocol: its card and JSON-RPC |
//! | `create NAME` | a new project: a Cargo binary on the launcher, or a YAML agent (`--yaml`) |
//! | `eval AGENT EVALSET...` | runs ADK eval sets on an app and scores it (see `adk-eval`); non-zero exit when a case fails |
//!
//! Services are chosen by URL, as ADK Python's `--session_service_uri` does:
//! `--session-service-uri` (`sqlite://path`, the default `.adk/sessions.db`; `postgres://...`;
//! `memory://`), `--artifact-service-uri` (`file://dir`, `memory://`), `--memory-service-uri`
//! (`memory://`, `sqlite://path`), or `--in-memory` for all three. The model comes from
//! `--provider`/`--model` or the environment (`GOOGLE_API_KEY`, `OPENAI_API_KEY`,
//! `OPENAI_BASE_URL`), else a local model that needs no key (see `adk-local-model`).
//!
//! Agents described in YAML (ADK Python's `root_agent.yaml`, loaded by `adk-config`) run with no
//! compiling: `run path/to/agent_dir`, or `web path/to/agents_dir` for every app of a folder; a
//! config's `model: local` is the launcher's local model, and its `tools:` find the function
//! tools registered with [`Launcher::function_tool`].
//!
//! ```no_run
//! use std::process::ExitCode;
//! use std::sync::Arc;
//!
//! use adk_flow::LlmAgent;
//! use adk_launcher::Launcher;
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     Launcher::new()
//!         .app_on_model("assistant", |model| {
//!             let agent = LlmAgent::builder("assistant").model(model).instruction("Be brief.").build()?;
//!             Ok(Arc::new(agent))
//!         })
//!         .run()
//!         .await
//! }
//! ```

// A command line reports to the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod a2a;
mod apps;
mod args;
mod create;
mod error;
mod eval;
mod launcher;
mod model;
mod serve;
mod store;
mod terminal;

pub use error::{LaunchError, LaunchErrorKind};
pub use launcher::Launcher;
