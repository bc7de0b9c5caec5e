//! The adk-rs runner: runs an agent tree on a user's message within a stored session.
//!
//! A [`Runner`] is built once per app from its root agent and its services, and serves every user
//! and session of the app:
//!
//! 1. **Load** the session (creating it when the runner was built with
//!    [`auto_create_session`](RunnerBuilder::auto_create_session)).
//! 2. **Check** the new message: a function response must answer a call that an agent of this
//!    session really made and that still waits for its answer (see [Security](#security)).
//! 3. **Store** the user's event, with the plugins' `on_user_message` applied and an optional state
//!    delta.
//! 4. **Pick** the agent that takes the turn ([`agent_to_run`](crate#picking-the-agent)).
//! 5. **Run** it, passing every event through the plugins' `on_event`, storing each non-partial
//!    event (`temp:` keys removed) as it is yielded, then yielding it.
//!
//! Dropping the stream cancels the run: the invocation's cancellation token fires and no more
//! events are stored.
//!
//! # Picking the agent
//!
//! As ADK's `_find_agent_to_run`: a function response goes to the agent that made the call it
//! answers; otherwise the last agent that spoke keeps the turn when it and all its ancestors are
//! [`LlmAgent`](adk_flow::LlmAgent)s that may transfer back to their parent (an agent the
//! conversation was transferred to stays "sticky"); otherwise the root runs.
//!
//! # Pause and resume
//!
//! A runner built with [`resumable(true)`](RunnerBuilder::resumable) pauses an invocation after an
//! event with a long-running call (a tool that answers later, or a request for a confirmation or a
//! credential). Workflow agents checkpoint their progress in events (`actions.agentState`,
//! `actions.endOfAgent`); running again with the invocation id ([`RunRequest::resume`]) or with the
//! function response that answers the paused call continues exactly where it stopped. While a
//! paused call of the invocation still has no answer, nothing runs.
//!
//! # Security
//!
//! A function response in a new message is accepted only when it answers, by id and name, a
//! long-running call made by an agent of this tree in this session that has no answer from the user
//! yet; a confirmation must also name a call its agent really made with exactly those arguments.
//! Anything else is rejected with [`ErrorKind::InvalidInput`](adk_core::ErrorKind::InvalidInput)
//! before it is stored, and no tool runs. Messages may not hold function calls.
//!
//! # Rewind
//!
//! [`Runner::rewind`] appends an event that undoes the session-scoped state and artifact changes
//! made since an invocation began; see [`Runner::rewind`] for the exact semantics. The model no
//! longer sees the rewound events.
//!
//! # Events compaction
//!
//! With [`RunnerBuilder::compaction`], the runner summarizes old events after invocations into
//! compaction events, which the model then sees instead of the events they cover; see
//! [`CompactionConfig`].
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use adk_core::Content;
//! use adk_flow::LlmAgent;
//! use adk_runner::{RunConfig, Runner};
//! use adk_session::InMemorySessionService;
//! use adk_test::ScriptedModel;
//! use futures::TryStreamExt as _;
//!
//! let model = Arc::new(ScriptedModel::new("scripted").then_text("Hello, Ada!"));
//! let agent = LlmAgent::builder("greeter").model(model).build().unwrap();
//! let runner = Runner::builder("app", Arc::new(agent))
//!     .session_service(Arc::new(InMemorySessionService::new()))
//!     .auto_create_session(true)
//!     .build()
//!     .unwrap();
//! let events: Vec<_> = runner
//!     .run("ada", "s-1", Content::user("Hi"), RunConfig::default())
//!     .try_collect()
//!     .await
//!     .unwrap();
//! assert_eq!(events[0].text().as_deref(), Some("Hello, Ada!"));
//! # });
//! ```

mod agent_to_run;
mod client_state;
mod compaction;
mod credentials;
mod persist;
pub mod plugins;
mod resume;
mod rewind;
mod runner;

pub use adk_core::{RunConfig, StreamingMode};
pub use adk_flow::{Plugin, Plugins};
pub use compaction::{CompactionConfig, DEFAULT_SUMMARY_PROMPT, LlmSummarizer, Summarizer};
pub use runner::{RunRequest, RunStream, Runner, RunnerBuilder};

// Runners are shared between tasks: a compile-time check that they stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Runner>();
};
