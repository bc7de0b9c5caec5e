//! [`Runner`]: runs an app's agent tree on new messages, storing every event in the session; its
//! builder, and the [`RunRequest`] that says what to run.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use adk_core::{
    Agent, AgentProgress, AgentTree, ArtifactService, Clock, Content, CreateSessionRequest, Error,
    ErrorKind, Event, EventActions, FunctionResponse, GetSessionRequest, IdGen, InvocationContext,
    InvocationId, MemoryService, Part, PartData, Result, Role, RunConfig, Session, SessionId,
    SessionKey, SessionService, SystemClock, USER_AUTHOR, UuidIdGen,
};
use adk_flow::{LlmAgent, OverflowCompaction, Plugin, Plugins, ToolStateScopes};
use async_stream::try_stream;
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use serde_json::{Map, Value};

use crate::agent_to_run::agent_to_run;
use crate::cancel_on_drop::CancelOnDrop;
use crate::client_state::ClientStateScopes;
use crate::compaction::{CompactionConfig, OverflowCompactor};
use crate::credentials;
use crate::persist::{persist_event, persist_with_stored_copy};
use crate::resume::{self, Continuation};
use crate::rewind;

/// The events of a started run ([`Runner::start`]): dropping it cancels the run.
pub type RunStream = std::pin::Pin<Box<dyn Stream<Item = Result<Event>> + Send + 'static>>;

/// Runs an app's agent tree on users' messages, each within a stored session.
///
/// Built once with [`Runner::builder`]; cheap to clone, and every clone serves any number of runs
/// at once. See the [crate documentation](crate) for what a run does.
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    app_name: String,
    tree: AgentTree,
    sessions: Arc<dyn SessionService>,
    artifacts: Option<Arc<dyn ArtifactService>>,
    memory: Option<Arc<dyn MemoryService>>,
    plugins: Plugins,
    auto_create_session: bool,
    resumable: bool,
    client_state: ClientStateScopes,
    tool_state: ToolStateScopes,
    ids: Arc<dyn IdGen>,
    clock: Arc<dyn Clock>,
    compaction: Option<CompactionConfig>,
    /// Compaction on a context overflow, for the flow: set when `compaction` is.
    overflow: OverflowCompaction,
}

impl Runner {
    /// Starts building the runner of app `app_name` whose root agent is `root_agent`.
    pub fn builder(app_name: impl Into<String>, root_agent: Arc<dyn Agent>) -> RunnerBuilder {
        RunnerBuilder {
            app_name: app_name.into(),
            root_agent,
            sessions: None,
            artifacts: None,
            memory: None,
            plugins: Vec::new(),
            auto_create_session: false,
            resumable: false,
            client_state: ClientStateScopes::default(),
            tool_state: ToolStateScopes::default(),
            ids: Arc::new(UuidIdGen),
            clock: Arc::new(SystemClock),
            compaction: None,
        }
    }

    /// The app's name.
    pub fn app_name(&self) -> &str {
        &self.inner.app_name
    }

    /// The root agent.
    pub fn root_agent(&self) -> &Arc<dyn Agent> {
        self.inner.tree.root()
    }

    /// The session service.
    pub fn session_service(&self) -> &Arc<dyn SessionService> {
        &self.inner.sessions
    }

    /// Checks a state delta that a client sent (with a message, when creating a session, or on
    /// its own): `app:` and `temp:` keys are refused with
    /// [`ErrorKind::InvalidInput`](adk_core::ErrorKind::InvalidInput) unless the app allows them
    /// ([`RunnerBuilder::allow_app_state_from_clients`],
    /// [`RunnerBuilder::allow_temp_state_from_clients`]). The runner checks the delta of every
    /// [`RunRequest`] itself; a server calls this for the state it writes without a run.
    pub fn check_client_state(&self, delta: &Map<String, Value>) -> Result<()> {
        self.inner.client_state.check(delta)
    }

    /// Runs the agent tree on `message` in session `session_id` of `user_id`, yielding the events
    /// as they come (partial ones included when streaming) and storing every non-partial one.
    ///
    /// The stream ends after the invocation's last event, or with the error that ended it. Drop it
    /// to cancel the run: the invocation's cancellation token fires, which tools can watch.
    pub fn run(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
        message: Content,
        config: RunConfig,
    ) -> impl Stream<Item = Result<Event>> + Send + 'static {
        self.run_request(
            RunRequest::new(user_id, session_id)
                .message(message)
                .run_config(config),
        )
    }

    /// Runs what `request` asks: a new message with a state delta, function responses that
    /// continue a paused invocation, or the resumption of an invocation by its id.
    pub fn run_request(
        &self,
        request: RunRequest,
    ) -> impl Stream<Item = Result<Event>> + Send + 'static {
        let runner = self.clone();
        // The start (loading the session, storing the message) lives in its own allocation, freed
        // when the agent's events take over, so a run waiting on its model does not carry it.
        futures::stream::once(Box::pin(async move { runner.start(request).await })).try_flatten()
    }

    /// Runs what `request` asks in two phases: the returned future loads the session, checks the
    /// new message and stores it, failing before anything runs when the session is missing or the
    /// message is refused (a forged continuation, say); the stream it gives then runs the agent.
    ///
    /// A server uses this to answer a bad request with an HTTP error instead of a broken stream.
    /// Dropping the stream cancels the run, as with [`run_request`](Self::run_request).
    pub async fn start(&self, request: RunRequest) -> Result<RunStream> {
        let inner = self.inner.clone();
        let Some(ctx) = inner.prepare(request).await? else {
            return Ok(Box::pin(futures::stream::empty()));
        };
        let guard = ctx.cancellation().clone().drop_guard();
        // The whole run, plugins and storage included, is traced in its `invocation` span.
        let events = adk_telemetry::trace_invocation(ctx.clone(), Box::pin(inner.run_agent(ctx)));
        Ok(Box::pin(CancelOnDrop::new(events, guard)))
    }

    /// The app's agent tree.
    pub fn agent_tree(&self) -> &AgentTree {
        &self.inner.tree
    }

    /// The artifact service, when the runner has one.
    pub fn artifact_service(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.inner.artifacts.as_ref()
    }

    /// The memory service, when the runner has one.
    pub fn memory_service(&self) -> Option<&Arc<dyn MemoryService>> {
        self.inner.memory.as_ref()
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
            rewind::artifact_delta(inner.artifacts.as_ref(), &session, point).await?;
        actions.rewind_before_invocation_id = Some(before_invocation_id.clone());
        let event = Event::with_seams(
            inner.ids.invocation_id(),
            USER_AUTHOR,
            inner.ids.as_ref(),
            inner.clock.as_ref(),
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

impl Inner {
    /// Everything before the agent runs: loads the session, checks and stores the new message,
    /// and builds the invocation with the agent that takes the turn. `None` when there is nothing
    /// to run (a resumed invocation that ended, or one still waiting for answers).
    async fn prepare(self: &Arc<Self>, request: RunRequest) -> Result<Option<InvocationContext>> {
        self.client_state.check(&request.state_delta)?;
        let key = SessionKey::new(self.app_name.clone(), request.user_id, request.session_id);
        let session = self.load_session(&key, self.auto_create_session).await?;
        let mut continuation = match &request.new_message {
            Some(message) => resume::check_message(&self.tree, &session.events, message)?,
            None => None,
        };
        let resumed = self.invocation_to_resume(&session, request.invocation_id, &continuation)?;
        let invocation_id = resumed.clone().unwrap_or_else(|| self.ids.invocation_id());
        let user_content = match (&request.new_message, &resumed) {
            (Some(message), _) => Some(message.clone()),
            (None, Some(id)) => resume::original_message(&session.events, id),
            (None, None) => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "a run needs a new message or the id of an invocation to resume",
                ));
            }
        };
        let mut ctx = self.invocation(
            session,
            invocation_id.clone(),
            user_content,
            &request.run_config,
        )?;

        if let Some(message) = request.new_message {
            let mut message = message;
            for plugin in self.plugins.iter() {
                if let Some(replaced) = plugin.on_user_message(&ctx, &message).await? {
                    message = replaced;
                    continuation =
                        self.check_replaced_message(&ctx, plugin.name(), &message, continuation)?;
                    break;
                }
            }
            if ctx.user_content() != Some(&message) {
                let session = ctx.session().clone();
                ctx = self.invocation(
                    session,
                    invocation_id.clone(),
                    Some(message.clone()),
                    &request.run_config,
                )?;
            }
            let branch = continuation.and_then(|continuation| continuation.branch);
            self.store_user_message(&ctx, message, request.state_delta, branch)
                .await?;
        }

        if resumed.is_none() {
            let agent = agent_to_run(&self.tree, &ctx.session().events);
            return Ok(Some(self.placed(ctx, agent)));
        }
        resume::restore_progress(&ctx);
        let root = self.tree.root().clone();
        if matches!(ctx.agent_progress(root.name()), Some(AgentProgress::Ended)) {
            return Ok(None);
        }
        if !resume::unanswered_calls(&ctx.session().events, &invocation_id).is_empty() {
            return Ok(None);
        }
        // Workflow agents resume from their checkpoints, so the root runs again; an LlmAgent root
        // checkpoints nothing, so the agent that was speaking continues.
        let agent = if root.downcast_ref::<LlmAgent>().is_some() {
            agent_to_run(&self.tree, &ctx.session().events)
        } else {
            root
        };
        Ok(Some(self.placed(ctx, agent)))
    }

    /// The invocation's context for running `agent`. Under an `LlmAgent` root, which runs as a
    /// node as in ADK 2.x, the run has a node path: the agent's place in the tree
    /// (`assistant@1`, `coordinator@1/helper@1`), stamped on its events. A workflow root makes
    /// its own paths; the deprecated sequential, parallel and loop agents have none.
    fn placed(&self, ctx: InvocationContext, agent: Arc<dyn Agent>) -> InvocationContext {
        if self.tree.root().downcast_ref::<LlmAgent>().is_none() {
            return ctx.with_agent(agent);
        }
        let path = adk_flow::agent_path(&ctx, &self.tree, agent.as_ref());
        ctx.with_agent(agent).with_node_path(path)
    }

    /// Checks the message a plugin's `on_user_message` put in place of the user's as the user's own
    /// was checked: it may not answer calls that do not wait for an answer, nor continue another
    /// invocation than the user's message chose. Returns what the replacement continues.
    fn check_replaced_message(
        &self,
        ctx: &InvocationContext,
        plugin: &str,
        message: &Content,
        original: Option<Continuation>,
    ) -> Result<Option<Continuation>> {
        let replaced = resume::check_message(&self.tree, &ctx.session().events, message)?;
        let invocation = |continuation: &Option<Continuation>| {
            continuation
                .as_ref()
                .map(|continuation| continuation.invocation_id.clone())
        };
        if invocation(&replaced) != invocation(&original) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "plugin '{plugin}' replaced the user's message with one that continues another                      invocation than the user's did; the message was not stored and no tool ran"
                ),
            ));
        }
        Ok(replaced)
    }

    /// The session of `key`, created when it does not exist and `create` is set.
    async fn load_session(&self, key: &SessionKey, create: bool) -> Result<Session> {
        if let Some(session) = self
            .sessions
            .get_session(GetSessionRequest::new(key.clone()))
            .await?
        {
            return Ok(session);
        }
        if !create {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "session '{}' of user '{}' in app '{}' does not exist; create it first, or build the runner with auto_create_session(true)",
                    key.session_id, key.user_id, key.app_name
                ),
            ));
        }
        self.sessions
            .create_session(
                CreateSessionRequest::new(key.app_name.clone(), key.user_id.clone())
                    .with_session_id(key.session_id.clone()),
            )
            .await
    }

    /// The invocation to resume: the one named, or the one whose paused calls the message
    /// answers; `None` for a new invocation.
    fn invocation_to_resume(
        &self,
        session: &Session,
        named: Option<InvocationId>,
        continuation: &Option<Continuation>,
    ) -> Result<Option<InvocationId>> {
        let Some(named) = named else {
            return Ok(continuation
                .as_ref()
                .filter(|_| self.resumable)
                .map(|continuation| continuation.invocation_id.clone()));
        };
        if !self.resumable {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "cannot resume invocation '{named}': the runner is not resumable; build it with resumable(true)"
                ),
            ));
        }
        if !session
            .events
            .iter()
            .any(|event| event.invocation_id == named)
        {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "session '{}' has no invocation '{named}' to resume",
                    session.id
                ),
            ));
        }
        if resume::is_rewound(&session.events, &named) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("invocation '{named}' was undone by a rewind and cannot be resumed"),
            ));
        }
        if let Some(continuation) = continuation
            && continuation.invocation_id != named
        {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the message answers calls of invocation '{}', not of invocation '{named}'",
                    continuation.invocation_id
                ),
            ));
        }
        Ok(Some(named))
    }

    /// A context for invocation `invocation_id` of the root agent on `session`.
    fn invocation(
        &self,
        session: Session,
        invocation_id: InvocationId,
        user_content: Option<Content>,
        config: &RunConfig,
    ) -> Result<InvocationContext> {
        let mut builder = InvocationContext::builder(self.tree.root().clone(), session)
            .invocation_id(invocation_id)
            .run_config(config.clone())
            .agent_tree(self.tree.clone())
            .session_service(self.sessions.clone())
            .ids(self.ids.clone())
            .clock(self.clock.clone())
            .resumable(self.resumable)
            .invocation_data(self.plugins.clone())
            .invocation_data(self.tool_state)
            .invocation_data(self.overflow.clone());
        if let Some(content) = user_content {
            builder = builder.user_content(content);
        }
        if let Some(artifacts) = &self.artifacts {
            builder = builder.artifact_service(artifacts.clone());
        }
        if let Some(memory) = &self.memory {
            builder = builder.memory_service(memory.clone());
        }
        builder.build()
    }

    /// Stores the user's message as an event of the invocation, with `state_delta`, on `branch`
    /// (the branch of the calls it answers); inline bytes become artifacts when the run config
    /// asks for it.
    async fn store_user_message(
        &self,
        ctx: &InvocationContext,
        mut message: Content,
        state_delta: Map<String, Value>,
        branch: Option<String>,
    ) -> Result<()> {
        let mut actions = EventActions::default();
        actions.state_delta = state_delta;
        if ctx.run_config().save_input_blobs_as_artifacts {
            self.save_input_blobs(ctx, &mut message, &mut actions)
                .await?;
        }
        // A message that answers no call joins the conversation of the task that waits for the
        // user, if one does (ADK 2.x's Task API): only that task's agent sees it.
        let scope = if message.function_responses().next().is_none() {
            adk_flow::task::active_task_scope(&ctx.session().events)
        } else {
            None
        };
        let mut event = Event::with_seams(
            ctx.invocation_id().clone(),
            USER_AUTHOR,
            ctx.ids(),
            ctx.clock(),
        )
        .with_content(message)
        .with_actions(actions)
        .with_branch(branch);
        event.isolation_scope = scope;
        event.add_run_metadata(&ctx.run_config().custom_metadata);
        if credentials::holds_credentials(&event) {
            // The invocation's copy keeps the secret for the call it resumes; storage never sees
            // it.
            let mut stored = event.clone();
            credentials::redact(&mut stored);
            return persist_with_stored_copy(&self.sessions, ctx, &event, stored).await;
        }
        persist_event(&self.sessions, ctx, &event).await
    }

    /// Saves each inline blob of `message` as an artifact and replaces it with a note naming it
    /// (ADK's `save_input_blobs_as_artifacts`).
    async fn save_input_blobs(
        &self,
        ctx: &InvocationContext,
        message: &mut Content,
        actions: &mut EventActions,
    ) -> Result<()> {
        let artifacts = self.artifacts.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "RunConfig::save_input_blobs_as_artifacts needs an artifact service; give the runner one",
            )
        })?;
        for (index, part) in message.parts.iter_mut().enumerate() {
            if !matches!(part.data, PartData::InlineData(_)) {
                continue;
            }
            let filename = format!("artifact_{}_{index}", ctx.invocation_id());
            let blob = std::mem::replace(
                part,
                Part::text(format!(
                    "Uploaded file: {filename}. It is saved into artifacts"
                )),
            );
            let version = artifacts
                .save_artifact(ctx.session_key(), &filename, blob, Map::new())
                .await?;
            actions.artifact_delta.insert(filename, version);
        }
        Ok(())
    }

    /// Runs the invocation's agent between the run-level plugin hooks, storing each event.
    fn run_agent(
        self: &Arc<Self>,
        ctx: InvocationContext,
    ) -> impl Stream<Item = Result<Event>> + Send + 'static {
        let inner = self.clone();
        // The larger futures it awaits (the hooks before the run, storing each event, compaction)
        // are boxed: this stream's state is as large as the largest of them, and it waits on the
        // agent for most of the run.
        try_stream! {
            let before = Box::pin(inner.before_run(&ctx)).await;
            match before {
                Ok(Some(event)) => {
                    yield *event;
                    return;
                }
                Ok(None) => {}
                Err(error) => {
                    inner.on_run_error(&ctx, &error).await;
                    Err(error)?;
                }
            }
            let mut events = ctx.agent().clone().run(ctx.clone());
            let mut failure = None;
            loop {
                let Some(event) = events.next().await else {
                    break;
                };
                let accepted = Box::pin(inner.accept_event(&ctx, event)).await;
                match accepted {
                    Ok(event) => yield *event,
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            // The agent's stream is dropped before the error hooks run, so nothing of the failed
            // run is still going on when they see it.
            drop(events);
            if let Some(error) = failure {
                inner.on_run_error(&ctx, &error).await;
                Err(error)?;
            }
            for plugin in inner.plugins.iter() {
                plugin.after_run(&ctx).await?;
            }
            Box::pin(inner.compact(&ctx)).await;
        }
    }

    /// After an invocation, appends the compaction event the config calls for, if any. It is not
    /// yielded: the invocation's answer is already out. A failure is logged and loses nothing, as
    /// the events stay and the next invocation tries again.
    async fn compact(&self, ctx: &InvocationContext) {
        let Some(config) = &self.compaction else {
            return;
        };
        // The window is copied under the session lock, which is not held while the summary is
        // written.
        let Some(window) = config.window(&ctx.session().events) else {
            return;
        };
        let stored = match config.summarize(&window).await {
            Ok(Some(event)) => {
                let mut event = event;
                event.id = self.ids.event_id();
                event.invocation_id = self.ids.invocation_id();
                event.timestamp = self.clock.now();
                persist_event(&self.sessions, ctx, &event).await
            }
            Ok(None) => Ok(()),
            Err(error) => Err(error),
        };
        if let Err(error) = stored {
            tracing::warn!(%error, "events compaction failed; the events stay as they are");
        }
    }

    /// The before-run hooks: the first plugin that returns content ends the run with it, as an
    /// event of the root agent that is stored and yielded.
    async fn before_run(&self, ctx: &InvocationContext) -> Result<Option<Box<Event>>> {
        for plugin in self.plugins.iter() {
            if let Some(content) = plugin.before_run(ctx).await? {
                let mut event = ctx
                    .with_agent(self.tree.root().clone())
                    .new_event()
                    .with_content(content);
                event.add_run_metadata(&ctx.run_config().custom_metadata);
                persist_event(&self.sessions, ctx, &event).await?;
                return Ok(Some(Box::new(event)));
            }
        }
        Ok(None)
    }

    /// One event of the agent: the on-event hooks (the first that returns an event replaces it),
    /// the run's custom metadata, then storage unless it is partial.
    async fn accept_event(
        &self,
        ctx: &InvocationContext,
        event: Result<Event>,
    ) -> Result<Box<Event>> {
        // Boxed: the run's stream holds it across its yield, and inline it would take room in
        // that stream's state for the whole run.
        let mut event = Box::new(event?);
        for plugin in self.plugins.iter() {
            if let Some(replaced) = plugin.on_event(ctx, &event).await? {
                *event = replaced;
                break;
            }
        }
        event.add_run_metadata(&ctx.run_config().custom_metadata);
        if !event.is_partial() {
            persist_event(&self.sessions, ctx, &event).await?;
        }
        Ok(event)
    }

    /// Tells every plugin that the run failed; a plugin's own failure here is logged, as the run's
    /// error is the one to report.
    async fn on_run_error(&self, ctx: &InvocationContext, error: &Error) {
        for plugin in self.plugins.iter() {
            if let Err(hook_error) = plugin.on_run_error(ctx, error).await {
                tracing::warn!(plugin = plugin.name(), error = %hook_error, "on_run_error hook failed");
            }
        }
    }
}

/// Builds a [`Runner`]; made by [`Runner::builder`].
#[must_use]
pub struct RunnerBuilder {
    app_name: String,
    root_agent: Arc<dyn Agent>,
    sessions: Option<Arc<dyn SessionService>>,
    artifacts: Option<Arc<dyn ArtifactService>>,
    memory: Option<Arc<dyn MemoryService>>,
    plugins: Vec<Arc<dyn Plugin>>,
    auto_create_session: bool,
    resumable: bool,
    client_state: ClientStateScopes,
    tool_state: ToolStateScopes,
    ids: Arc<dyn IdGen>,
    clock: Arc<dyn Clock>,
    compaction: Option<CompactionConfig>,
}

impl RunnerBuilder {
    /// Where sessions are kept (required).
    pub fn session_service(mut self, service: Arc<dyn SessionService>) -> Self {
        self.sessions = Some(service);
        self
    }

    /// Where artifacts are kept; tools and callbacks can save artifacts only with one.
    pub fn artifact_service(mut self, service: Arc<dyn ArtifactService>) -> Self {
        self.artifacts = Some(service);
        self
    }

    /// The long-term memory that memory tools search.
    pub fn memory_service(mut self, service: Arc<dyn MemoryService>) -> Self {
        self.memory = Some(service);
        self
    }

    /// Adds a plugin; plugins run in the order they were added, before the agents' callbacks.
    pub fn plugin(mut self, plugin: Arc<dyn Plugin>) -> Self {
        self.plugins.push(plugin);
        self
    }

    /// Creates a session that does not exist yet when a run names it, instead of failing.
    pub fn auto_create_session(mut self, create: bool) -> Self {
        self.auto_create_session = create;
        self
    }

    /// Makes the app resumable: invocations pause after long-running calls, agents checkpoint
    /// their progress, and runs can resume a paused invocation.
    pub fn resumable(mut self, resumable: bool) -> Self {
        self.resumable = resumable;
        self
    }

    /// Accepts `app:` keys in the state deltas of clients' requests (default: refused with
    /// [`ErrorKind::InvalidInput`](adk_core::ErrorKind::InvalidInput)). `app:` state is shared by
    /// every user of the app, so only turn this on when every client is trusted.
    pub fn allow_app_state_from_clients(mut self, allow: bool) -> Self {
        self.client_state.app = allow;
        self
    }

    /// Accepts `temp:` keys in the state deltas of clients' requests (default: refused). `temp:`
    /// state is never stored, but it steers the invocation that reads it.
    pub fn allow_temp_state_from_clients(mut self, allow: bool) -> Self {
        self.client_state.temp = allow;
        self
    }

    /// Lets tools write `app:` state (default: allowed, as in ADK Python). When off, the `app:`
    /// keys a tool sets are dropped from its response event with a warning, so a tool that takes
    /// its key from the model cannot change what every user of the app sees.
    pub fn allow_app_state_from_tools(mut self, allow: bool) -> Self {
        self.tool_state = ToolStateScopes::default().app(allow);
        self
    }

    /// Where invocation, event and call ids come from (tests use a deterministic generator).
    pub fn ids(mut self, ids: Arc<dyn IdGen>) -> Self {
        self.ids = ids;
        self
    }

    /// Where event timestamps come from (tests use a deterministic clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Compacts each session's events after invocations, as `config` says (ADK Python's
    /// `EventsCompactionConfig`): the model then sees summaries instead of old events.
    pub fn compaction(mut self, config: CompactionConfig) -> Self {
        self.compaction = Some(config);
        self
    }

    /// Builds the runner; fails when no session service was given, the agent tree is invalid
    /// (empty or duplicate names, an agent named `user`), or two plugins share a name.
    pub fn build(self) -> Result<Runner> {
        let sessions = self.sessions.ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "the runner needs a session service; set one with RunnerBuilder::session_service (InMemorySessionService for tests)",
            )
        })?;
        let tree = AgentTree::new(self.root_agent)?;
        if let Some(config) = &self.compaction {
            config.check()?;
        }
        let mut names = HashSet::new();
        for plugin in &self.plugins {
            if !names.insert(plugin.name().to_owned()) {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "two plugins are named '{}'; plugin names must be unique",
                        plugin.name()
                    ),
                ));
            }
        }
        Ok(Runner {
            inner: Arc::new(Inner {
                app_name: self.app_name,
                tree,
                artifacts: self.artifacts,
                memory: self.memory,
                plugins: Plugins::new(self.plugins),
                auto_create_session: self.auto_create_session,
                resumable: self.resumable,
                client_state: self.client_state,
                tool_state: self.tool_state,
                overflow: self.compaction.clone().map_or_else(
                    OverflowCompaction::default,
                    |config| {
                        OverflowCompaction::new(Arc::new(OverflowCompactor {
                            config,
                            sessions: sessions.clone(),
                            ids: self.ids.clone(),
                            clock: self.clock.clone(),
                        }))
                    },
                ),
                sessions,
                ids: self.ids,
                clock: self.clock,
                compaction: self.compaction,
            }),
        })
    }
}

/// What one run does: the session, the new message with an optional state delta, the invocation
/// to resume, and the run's settings.
///
/// ```
/// use adk_core::FunctionResponse;
/// use adk_runner::RunRequest;
/// use serde_json::json;
///
/// // Answer a paused long-running call; with a resumable runner this resumes its invocation.
/// let request = RunRequest::new("ada", "s-1").function_responses([
///     FunctionResponse::new("approve_expense", json!({"approved": true})).with_id("call-1"),
/// ]);
/// # let _ = request;
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunRequest {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: SessionId,
    /// The user's message; `None` only when resuming an invocation by id.
    pub new_message: Option<Content>,
    /// State to set with the user's message; `app:` and `temp:` keys are refused unless the app
    /// allows them (see [`Runner::check_client_state`]).
    pub state_delta: Map<String, Value>,
    /// The invocation to resume (the runner must be resumable).
    pub invocation_id: Option<InvocationId>,
    /// The run's settings.
    pub run_config: RunConfig,
}

impl RunRequest {
    /// A run in session `session_id` of `user_id`, with nothing to run yet.
    pub fn new(user_id: impl Into<String>, session_id: impl Into<SessionId>) -> Self {
        Self {
            user_id: user_id.into(),
            session_id: session_id.into(),
            ..Self::default()
        }
    }

    /// The user's message.
    pub fn message(mut self, message: Content) -> Self {
        self.new_message = Some(message);
        self
    }

    /// A user message made of these function responses, answering paused calls.
    pub fn function_responses(self, responses: impl IntoIterator<Item = FunctionResponse>) -> Self {
        self.message(Content::new(
            Role::User,
            responses.into_iter().map(Part::function_response),
        ))
    }

    /// State to set with the user's message.
    pub fn state_delta(mut self, delta: Map<String, Value>) -> Self {
        self.state_delta = delta;
        self
    }

    /// Resumes invocation `invocation_id` where it stopped.
    pub fn resume(mut self, invocation_id: InvocationId) -> Self {
        self.invocation_id = Some(invocation_id);
        self
    }

    /// The run's settings.
    pub fn run_config(mut self, config: RunConfig) -> Self {
        self.run_config = config;
        self
    }
}
