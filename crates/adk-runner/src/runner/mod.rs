//! [`Runner`]: runs an app's agent tree on new messages, storing every event in the session.
//!
//! `builder.rs` holds its builder, `request.rs` the [`RunRequest`] that says what to run,
//! `prepare.rs` what happens before the agent runs (the session loaded, the message checked and
//! stored, the agent picked), and `run.rs` the run itself (plugin hooks, storage, compaction).

mod builder;
mod cancel;
mod prepare;
mod request;
mod run;

use std::fmt;
use std::sync::Arc;

use adk_core::{
    AgentTree, ArtifactService, CredentialService, Event, EventActions, GetSessionRequest,
    IntoAgent, IntoSessionService, InvocationId, MemoryService, Result, Services, Session,
    SessionId, SessionKey, SessionService, USER_AUTHOR,
};
use adk_flow::internal::{OverflowCompaction, Plugins, ToolStateScopes};
use adk_session::InMemorySessionService;
use futures::{StreamExt as _, TryStreamExt as _};
use serde_json::{Map, Value};

pub use builder::RunnerBuilder;
pub use request::RunRequest;

use crate::RunStream;
use crate::cancel_on_drop::CancelOnDrop;
use crate::client_state::ClientStateScopes;
use crate::compaction::CompactionConfig;
use crate::rewind;
use prepare::Prepared;

/// Runs an app's agent tree on users' messages, each within a stored session.
///
/// [`Runner::in_memory`] is the common case: sessions in memory, created on first use.
/// [`Runner::builder`] takes any session service and sets the rest (artifacts, memory, plugins,
/// resumability, compaction). A runner is cheap to clone, and every clone serves any number of
/// runs at once. See the [crate documentation](crate) for what a run does.
///
/// ```
/// # use adk_core::testing::ScriptedModel;
/// use adk_flow::LlmAgent;
/// use adk_runner::Runner;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> adk_core::Result<()> {
/// # let model = ScriptedModel::new("scripted").then_text("Hello, Ada!");
/// let agent = LlmAgent::builder("greeter").model(model).build()?;
/// let runner = Runner::in_memory("greetings", agent)?;
/// let answer = runner.run("ada", "s-1", "Hi, I am Ada.").final_text().await?;
/// assert_eq!(answer, "Hello, Ada!");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    app_name: String,
    tree: AgentTree,
    sessions: Arc<dyn SessionService>,
    /// The services every invocation gets: `sessions`, the optional artifact and memory
    /// services, ids and clock.
    services: Services,
    plugins: Plugins,
    auto_create_session: bool,
    resumable: bool,
    resume_interrupted: bool,
    client_state: ClientStateScopes,
    tool_state: ToolStateScopes,
    compaction: Option<CompactionConfig>,
    /// Compaction on a context overflow, for the flow: set when `compaction` is.
    overflow: OverflowCompaction,
}

impl Runner {
    /// The runner of app `app_name` whose root agent is `root_agent`, with sessions kept in
    /// memory and created when a run first names them: for scripts, tests and examples.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](adk_core::ErrorKind::Config) when the agent tree is invalid (empty or duplicate names, an agent
    /// named `user`).
    pub fn in_memory(app_name: impl Into<String>, root_agent: impl IntoAgent) -> Result<Self> {
        Self::builder(app_name, root_agent, InMemorySessionService::new())
            .auto_create_session(true)
            .build()
    }

    /// Starts building the runner of app `app_name` whose root agent is `root_agent`, keeping
    /// sessions in `sessions` (`InMemorySessionService`, `SqliteSessionService`, ...).
    pub fn builder(
        app_name: impl Into<String>,
        root_agent: impl IntoAgent,
        sessions: impl IntoSessionService,
    ) -> RunnerBuilder {
        RunnerBuilder::new(
            app_name.into(),
            root_agent.into_agent(),
            sessions.into_session_service(),
        )
    }

    /// The app's name.
    pub fn app_name(&self) -> &str {
        &self.inner.app_name
    }

    /// The root agent.
    pub fn root_agent(&self) -> &Arc<dyn adk_core::Agent> {
        self.inner.tree.root()
    }

    /// The app's agent tree.
    pub fn agent_tree(&self) -> &AgentTree {
        &self.inner.tree
    }

    /// The session service.
    pub fn session_service(&self) -> &Arc<dyn SessionService> {
        &self.inner.sessions
    }

    /// The artifact service, when the runner has one.
    pub fn artifact_service(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.inner.services.artifact_service.as_ref()
    }

    /// The memory service, when the runner has one.
    pub fn memory_service(&self) -> Option<&Arc<dyn MemoryService>> {
        self.inner.services.memory_service.as_ref()
    }

    /// The credential service, when the runner has one.
    pub fn credential_service(&self) -> Option<&Arc<dyn CredentialService>> {
        self.inner.services.credential_service.as_ref()
    }

    /// Session `session_id` of `user_id` as stored, with every event; `None` when it does not
    /// exist.
    pub async fn session(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
    ) -> Result<Option<Session>> {
        let key = SessionKey::new(self.inner.app_name.clone(), user_id, session_id);
        self.inner
            .sessions
            .get_session(GetSessionRequest::new(key))
            .await
    }

    /// Checks a state delta that a client sent (with a message, when creating a session, or on
    /// its own): `app:` and `temp:` keys are refused with [`ErrorKind::InvalidInput`](adk_core::ErrorKind::InvalidInput) unless the
    /// app allows them ([`RunnerBuilder::allow_app_state_from_clients`],
    /// [`RunnerBuilder::allow_temp_state_from_clients`]). The runner checks the delta of every
    /// [`RunRequest`] itself; a server calls this for the state it writes without a run.
    pub fn check_client_state(&self, delta: &Map<String, Value>) -> Result<()> {
        self.inner.client_state.check(delta)
    }

    /// Runs the agent tree on `message` (text is a user message) in session `session_id` of
    /// `user_id`, yielding the events as they come and storing every non-partial one. The run's
    /// settings go on a [`RunRequest`] instead ([`run_request`](Self::run_request)).
    ///
    /// The stream ends after the invocation's last event, or with the error that ended it;
    /// [`RunStream::final_text`] waits for the answer. Drop it to cancel the run: the
    /// invocation's cancellation token fires, which tools can watch.
    pub fn run(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
        message: impl Into<adk_core::Content>,
    ) -> RunStream {
        self.run_request(RunRequest::new(user_id, session_id).message(message))
    }

    /// Runs what `request` asks: a new message with a state delta and run settings, function
    /// responses that continue a paused invocation, or the resumption of an invocation by its id.
    pub fn run_request(&self, request: RunRequest) -> RunStream {
        let runner = self.clone();
        // The start (loading the session, storing the message) lives in its own allocation, freed
        // when the agent's events take over, so a run waiting on its model does not carry it.
        RunStream::new(
            futures::stream::once(Box::pin(async move { runner.start(request).await }))
                .try_flatten(),
        )
    }

    /// Runs what `request` asks in two phases: the returned future loads the session, checks the
    /// new message and stores it, failing before anything runs when the session is missing or the
    /// message is refused (a forged continuation, say); the stream it gives then runs the agent.
    ///
    /// A server uses this to answer a bad request with an HTTP error instead of a broken stream.
    /// Dropping the stream cancels the run, as with [`run_request`](Self::run_request).
    pub async fn start(&self, request: RunRequest) -> Result<RunStream> {
        let (cut_off, request) = match self.inner.prepare(request).await? {
            Prepared::Run(ctx) => return Ok(self.run_prepared(*ctx)),
            Prepared::Nothing => return Ok(RunStream::new(futures::stream::empty())),
            Prepared::CutOffFirst(cut_off, request) => (cut_off, request),
        };
        let mut resume = RunRequest::new(request.user_id.clone(), request.session_id.clone())
            .resume(cut_off)
            .run_config(request.run_config.clone());
        resume.cut_off_handled = true;
        let resumed = self.start_handled(resume).await?;
        let first = resumed.invocation_id().cloned();
        let mut request = *request;
        request.cut_off_handled = true;
        let runner = self.clone();
        // The new message runs once the invocation it found cut off has ended, so that it reads
        // that invocation's events. A resumed invocation that fails again is logged and left
        // behind: the new message still runs, and once it is answered that invocation is no
        // longer the session's last, so a failure never blocks the session.
        let events = RunStream::new(async_stream::try_stream! {
            let mut resumed = resumed;
            while let Some(event) = resumed.next().await {
                match event {
                    Ok(event) => yield event,
                    Err(error) => {
                        tracing::warn!(%error, "the invocation a crash cut off failed again on resume");
                        break;
                    }
                }
            }
            drop(resumed);
            let mut next = runner.start_handled(request).await?;
            while let Some(event) = next.next().await {
                yield event?;
            }
        });
        Ok(match first {
            Some(first) => events.with_invocation_id(first),
            None => events,
        })
    }

    /// [`start`](Self::start) for a request that looks for no cut-off invocation.
    async fn start_handled(&self, request: RunRequest) -> Result<RunStream> {
        debug_assert!(request.cut_off_handled);
        Ok(match self.inner.prepare(request).await? {
            Prepared::Run(ctx) => self.run_prepared(*ctx),
            Prepared::Nothing | Prepared::CutOffFirst(..) => {
                RunStream::new(futures::stream::empty())
            }
        })
    }

    /// Resumes the invocation of session `session_id` of `user_id` that a crash cut off (its last
    /// event is the user's message, an unanswered call or a tool's result the model has not
    /// read), from its last stored event; `None` when the session's last invocation ended.
    /// Runs with `config`. This is what [`RunnerBuilder::resume_interrupted`] does before a new
    /// message, for a caller that wants it without one (`adk sessions resume`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotFound`](adk_core::ErrorKind::NotFound) when the session does not exist;
    /// [`ErrorKind::Config`](adk_core::ErrorKind::Config) when the root is a workflow agent and
    /// the runner is not resumable; the session service's errors.
    pub async fn resume_interrupted(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
        config: adk_core::RunConfig,
    ) -> Result<Option<RunStream>> {
        let user_id = user_id.into();
        let session_id = session_id.into();
        let key = SessionKey::new(
            self.inner.app_name.clone(),
            user_id.clone(),
            session_id.clone(),
        );
        let session = self.inner.load_session(&key, false).await?;
        let Some(cut_off) = crate::cut_off::cut_off_invocation(&session.events).cloned() else {
            return Ok(None);
        };
        drop(session);
        let mut request = RunRequest::new(user_id, session_id)
            .resume(cut_off)
            .run_config(config);
        request.cut_off_handled = true;
        self.start_handled(request).await.map(Some)
    }

    /// The stream of a prepared invocation: its agent's run, traced, cancelled when dropped.
    fn run_prepared(&self, ctx: adk_core::InvocationContext) -> RunStream {
        let guard = ctx.cancellation().clone().drop_guard();
        let invocation_id = ctx.invocation_id().clone();
        // The whole run, plugins and storage included, is traced in its `invocation` span.
        let events =
            adk_telemetry::trace_invocation(ctx.clone(), Box::pin(self.inner.run_agent(ctx)));
        RunStream::new(CancelOnDrop::new(events, guard)).with_invocation_id(invocation_id)
    }

    /// Appends an event to session `session_id` of `user_id` that undoes the changes made since
    /// invocation `before_invocation_id` began, and returns it.
    ///
    /// - **State**: every session-scoped key changed since then is set back to its value before
    ///   that invocation; a key that did not exist then is set to JSON `null` (state deltas cannot
    ///   remove keys, so after a rewind such a key reads as `null`). `app:` and `user:` keys are
    ///   shared with other sessions and are not rewound; `temp:` keys are never stored.
    /// - **Artifacts**: every session artifact saved since then gets a new version that copies the
    ///   version it had before (an empty `application/octet-stream` part when it did not exist
    ///   yet), named in the event's artifact delta. `user:` artifacts are not rewound.
    /// - The event is the user's, in an invocation of its own, with
    ///   `actions.rewindBeforeInvocationId` set. History is kept: nothing is deleted.
    pub async fn rewind(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
        before_invocation_id: &InvocationId,
    ) -> Result<Event> {
        let inner = &self.inner;
        let key = SessionKey::new(inner.app_name.clone(), user_id, session_id);
        let mut session = inner.load_session(&key, false).await?;
        let point = rewind::rewind_point(&session, before_invocation_id)?;
        let mut actions = EventActions::default();
        actions.state_delta = rewind::state_delta(&session, point);
        actions.artifact_delta =
            rewind::artifact_delta(inner.services.artifact_service.as_ref(), &session, point)
                .await?;
        actions.rewind_before_invocation_id = Some(before_invocation_id.clone());
        let ids = inner.services.ids.as_ref();
        let event = Event::with_ids_and_clock(
            ids.invocation_id(),
            USER_AUTHOR,
            ids,
            inner.services.clock.as_ref(),
        )
        .with_actions(actions);
        inner.sessions.append_event(&mut session, event).await
    }

    /// Closes the plugins, in order; the first failure is returned after all were closed.
    pub async fn close(&self) -> Result<()> {
        let mut first_error = None;
        for plugin in self.inner.plugins.iter() {
            if let Err(error) = plugin.close().await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("app_name", &self.inner.app_name)
            .field("root_agent", &self.inner.tree.root().name())
            .field(
                "plugins",
                &self
                    .inner
                    .plugins
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>(),
            )
            .field("resumable", &self.inner.resumable)
            .finish_non_exhaustive()
    }
}
