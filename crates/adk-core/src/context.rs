//! The contexts an agent run sees: [`InvocationContext`] (everything about one invocation),
//! [`ReadonlyContext`] (what instruction providers may read) and [`CallbackContext`] (what callbacks
//! may read and change).
//!
//! An invocation starts with a user message and ends with a final response; it can span several
//! agent runs (transfers, workflow children), each seeing a context derived from the first one that
//! shares the session, the services and the invocation-wide flags.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::SessionService;
use crate::ids::{Clock, IdGen, SystemClock, UuidIdGen};
use crate::{Agent, AgentTree, ArtifactService, Content, Error, ErrorKind, Event, EventActions};
use crate::{InvocationId, MemoryService, NodePath, Part, Result, Session, SessionKey};

/// How a run streams model output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StreamingMode {
    /// One event per model response.
    #[default]
    None,
    /// Partial events with text deltas as they arrive, then the aggregated event.
    Sse,
}

/// Settings of one run.
///
/// ```
/// use adk_core::{RunConfig, StreamingMode};
///
/// let config = RunConfig::default().with_streaming_mode(StreamingMode::Sse);
/// assert_eq!(config.max_llm_calls, 500);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunConfig {
    /// Whether model output is streamed.
    pub streaming_mode: StreamingMode,
    /// The most model calls one invocation may make; past it the run fails with
    /// [`ErrorKind::LlmCallsLimitExceeded`]. `0` means no limit.
    pub max_llm_calls: u32,
    /// Metadata attached to the events of the run.
    pub custom_metadata: Map<String, Value>,
    /// Save inline bytes of the user's message as artifacts instead of sending them in history.
    pub save_input_blobs_as_artifacts: bool,
    /// For every agent of the run that sets no limit of its own: how many times one agent may run
    /// one tool with the same arguments in one invocation; later calls are answered with an error
    /// instead of running the tool. `None` (the default) means no limit.
    pub max_repeated_tool_calls: Option<u32>,
    /// How many function calls of one model response run at once; the others wait for a slot.
    /// `0` means no cap. A model can ask for any number of calls in one response, and each may
    /// open connections or processes, so the default caps them at 16.
    pub max_concurrent_tool_calls: usize,
    /// The largest tool result, in bytes of its JSON, that reaches the history (and so the model
    /// and storage) whole; a larger one is cut to this size with a note saying so. Default
    /// [`DEFAULT_MAX_TOOL_RESULT_BYTES`] (512 KiB); `0` means no limit.
    pub max_tool_result_bytes: usize,
}

/// The default of [`RunConfig::max_tool_result_bytes`]: 512 KiB, about 130 000 tokens.
pub const DEFAULT_MAX_TOOL_RESULT_BYTES: usize = 512 * 1024;

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            streaming_mode: StreamingMode::None,
            max_llm_calls: 500,
            custom_metadata: Map::new(),
            save_input_blobs_as_artifacts: false,
            max_repeated_tool_calls: None,
            max_concurrent_tool_calls: 16,
            max_tool_result_bytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
        }
    }
}

impl RunConfig {
    /// Sets the streaming mode.
    pub fn with_streaming_mode(mut self, mode: StreamingMode) -> Self {
        self.streaming_mode = mode;
        self
    }

    /// Sets the model-call limit.
    pub fn with_max_llm_calls(mut self, limit: u32) -> Self {
        self.max_llm_calls = limit;
        self
    }

    /// Sets how many function calls of one model response run at once (`0`: no cap).
    pub fn with_max_concurrent_tool_calls(mut self, limit: usize) -> Self {
        self.max_concurrent_tool_calls = limit;
        self
    }

    /// Sets how many times an agent may run one tool with the same arguments in one invocation
    /// (at least 1), for agents that set no limit of their own.
    pub fn with_max_repeated_tool_calls(mut self, limit: u32) -> Self {
        self.max_repeated_tool_calls = Some(limit.max(1));
        self
    }

    /// Sets the largest tool result kept whole, in bytes of its JSON (`0`: no limit).
    pub fn with_max_tool_result_bytes(mut self, limit: usize) -> Self {
        self.max_tool_result_bytes = limit;
        self
    }
}

/// The progress an agent checkpointed in this invocation, for resuming.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentProgress {
    /// Running, with the state it saved (a workflow agent's child index, a loop count, ...).
    Running(Value),
    /// Finished.
    Ended,
}

/// Everything about one invocation that the agents of the tree share.
struct Invocation {
    invocation_id: InvocationId,
    session_key: SessionKey,
    session: RwLock<Session>,
    user_content: Option<Content>,
    run_config: RunConfig,
    agent_tree: AgentTree,
    session_service: Option<Arc<dyn SessionService>>,
    artifact_service: Option<Arc<dyn ArtifactService>>,
    memory_service: Option<Arc<dyn MemoryService>>,
    ids: Arc<dyn IdGen>,
    clock: Arc<dyn Clock>,
    ended: AtomicBool,
    resumable: bool,
    paused: AtomicBool,
    /// Shared with the invocations nested in this one (agents run as tools), so that they all
    /// draw on one model-call budget.
    llm_calls: Arc<AtomicU32>,
    agent_progress: Mutex<HashMap<String, AgentProgress>>,
    cancellation: CancellationToken,
    data: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

/// What one agent run knows about its invocation: the session, the services, the user's message,
/// the run settings, which agent runs and on which branch.
///
/// Cloning is cheap; clones and the contexts derived for other agents share the session and the
/// invocation-wide flags.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{Agent, Content, EventStream, InvocationContext, Session, SessionKey};
/// # struct Echo;
/// # impl Agent for Echo {
/// #     fn name(&self) -> &str { "echo" }
/// #     fn description(&self) -> &str { "" }
/// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
/// # }
/// let session = Session::new(SessionKey::new("app", "user-1", "s-1"));
/// let ctx = InvocationContext::builder(Arc::new(Echo), session)
///     .user_content(Content::user("hi"))
///     .build()
///     .unwrap();
/// assert!(ctx.invocation_id().as_str().starts_with("e-"));
/// assert_eq!(ctx.new_event().author, "echo");
/// ```
#[derive(Clone)]
pub struct InvocationContext {
    invocation: Arc<Invocation>,
    agent: Arc<dyn Agent>,
    branch: Option<Arc<str>>,
    /// The node run this context runs, stamped on its events (`nodeInfo.path`).
    node_path: NodePath,
    /// The conversation this run's events belong to when it is kept apart (a delegated task's).
    isolation_scope: Option<Arc<str>>,
}

impl InvocationContext {
    /// Starts building the context for running `agent` on `session`.
    pub fn builder(agent: Arc<dyn Agent>, session: Session) -> InvocationContextBuilder {
        InvocationContextBuilder {
            agent,
            session,
            invocation_id: None,
            user_content: None,
            run_config: RunConfig::default(),
            agent_tree: None,
            branch: None,
            node_path: NodePath::default(),
            session_service: None,
            artifact_service: None,
            memory_service: None,
            ids: Arc::new(UuidIdGen),
            clock: Arc::new(SystemClock),
            cancellation: None,
            resumable: false,
            data: HashMap::new(),
            llm_calls: None,
        }
    }

    /// The id of this invocation.
    pub fn invocation_id(&self) -> &InvocationId {
        &self.invocation.invocation_id
    }

    /// The agent this context runs.
    pub fn agent(&self) -> &Arc<dyn Agent> {
        &self.agent
    }

    /// The name of the agent this context runs.
    pub fn agent_name(&self) -> &str {
        self.agent.name()
    }

    /// The dotted branch (`root.child`) this run's events belong to; `None` at the top.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// The path of the node run this context runs (`wf@1/classify@1`, `assistant@1`); empty
    /// outside every node (the deprecated sequential, parallel and loop agents).
    pub fn node_path(&self) -> &NodePath {
        &self.node_path
    }

    /// The isolation scope of this run: set for a delegated task, whose events are kept apart
    /// from the rest of the session.
    pub fn isolation_scope(&self) -> Option<&Arc<str>> {
        self.isolation_scope.as_ref()
    }

    /// This context for the node run at `path` (same agent, branch and scope).
    pub fn with_node_path(&self, path: NodePath) -> Self {
        Self {
            node_path: path,
            ..self.clone()
        }
    }

    /// This context with the isolation scope `scope`.
    pub fn with_isolation_scope(&self, scope: Option<Arc<str>>) -> Self {
        Self {
            isolation_scope: scope,
            ..self.clone()
        }
    }

    /// This context on the branch `branch` (`None`: the top).
    pub fn with_branch(&self, branch: Option<&str>) -> Self {
        Self {
            branch: branch.map(Into::into),
            ..self.clone()
        }
    }

    /// The identity of the session.
    pub fn session_key(&self) -> &SessionKey {
        &self.invocation.session_key
    }

    /// The session, for reading. Do not hold the guard across an `.await`.
    pub fn session(&self) -> RwLockReadGuard<'_, Session> {
        self.invocation.session.read()
    }

    /// The session, for changing (the runner applies stored events through it). Do not hold the
    /// guard across an `.await`.
    pub fn session_mut(&self) -> RwLockWriteGuard<'_, Session> {
        self.invocation.session.write()
    }

    /// The user message that started the invocation.
    pub fn user_content(&self) -> Option<&Content> {
        self.invocation.user_content.as_ref()
    }

    /// The run settings.
    pub fn run_config(&self) -> &RunConfig {
        &self.invocation.run_config
    }

    /// The whole agent tree, for finding transfer targets and parents.
    pub fn agent_tree(&self) -> &AgentTree {
        &self.invocation.agent_tree
    }

    /// The session service, when the invocation has one.
    pub fn session_service(&self) -> Option<&Arc<dyn SessionService>> {
        self.invocation.session_service.as_ref()
    }

    /// The artifact service, when the invocation has one.
    pub fn artifact_service(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.invocation.artifact_service.as_ref()
    }

    /// The memory service, when the invocation has one.
    pub fn memory_service(&self) -> Option<&Arc<dyn MemoryService>> {
        self.invocation.memory_service.as_ref()
    }

    /// The id generator of the run.
    pub fn ids(&self) -> &dyn IdGen {
        self.invocation.ids.as_ref()
    }

    /// The clock of the run.
    pub fn clock(&self) -> &dyn Clock {
        self.invocation.clock.as_ref()
    }

    /// Cancelled when the run is abandoned; long work in tools can watch it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.invocation.cancellation
    }

    /// A new event of this agent in this invocation, branch, node run and isolation scope, with an
    /// id and timestamp from the run's seams.
    pub fn new_event(&self) -> Event {
        let mut event = Event::with_seams(
            self.invocation_id().clone(),
            self.agent_name(),
            self.ids(),
            self.clock(),
        )
        .with_branch(self.branch.as_deref().map(str::to_owned));
        event.node_info.path = self.node_path.clone();
        event.isolation_scope = self.isolation_scope.clone();
        event
    }

    /// A context for running `agent` in the same invocation and branch (a transfer, a sequential
    /// child).
    pub fn with_agent(&self, agent: Arc<dyn Agent>) -> Self {
        Self {
            agent,
            ..self.clone()
        }
    }

    /// A context for running `agent` on a branch of its own below this one (`branch.agent`), so
    /// its history stays apart from its siblings' (a parallel child).
    pub fn sub_agent_context(&self, agent: Arc<dyn Agent>) -> Self {
        let suffix = agent.name().to_owned();
        self.branched(agent, &suffix)
    }

    /// A context for running `agent` on the branch `suffix` below this one (`branch.suffix`; a
    /// suffix may itself be dotted).
    pub fn branched(&self, agent: Arc<dyn Agent>, suffix: &str) -> Self {
        let branch = match &self.branch {
            Some(branch) => format!("{branch}.{suffix}"),
            None => suffix.to_owned(),
        };
        Self {
            agent,
            branch: Some(branch.into()),
            ..self.clone()
        }
    }

    /// Ends the invocation: no agent takes another step after the current one.
    pub fn end_invocation(&self) {
        self.invocation.ended.store(true, Ordering::Release);
    }

    /// Whether the invocation was ended.
    pub fn is_ended(&self) -> bool {
        self.invocation.ended.load(Ordering::Acquire)
    }

    /// Whether the app is resumable: agents checkpoint their progress in events, and the invocation
    /// pauses after an event with long-running calls (seed 001's `is_resumable`).
    pub fn is_resumable(&self) -> bool {
        self.invocation.resumable
    }

    /// Whether the invocation should pause right after `event`: it is resumable and the event holds
    /// a long-running function call (a tool that answers later, or the flow's request for a
    /// confirmation or a credential) that the user must answer first.
    pub fn should_pause_after(&self, event: &Event) -> bool {
        if !self.is_resumable() {
            return false;
        }
        let Some(long_running) = &event.long_running_tool_ids else {
            return false;
        };
        event
            .function_calls()
            .any(|call| call.id.as_ref().is_some_and(|id| long_running.contains(id)))
    }

    /// Marks the invocation paused: an agent yielded an event after which it
    /// [should pause](Self::should_pause_after). The agents on the path of that event stop and do
    /// not checkpoint that they ended, so that the invocation can be resumed where it stopped.
    pub fn pause(&self) {
        self.invocation.paused.store(true, Ordering::Release);
    }

    /// Whether an agent of the invocation paused it.
    pub fn is_paused(&self) -> bool {
        self.invocation.paused.load(Ordering::Acquire)
    }

    /// Counts one model call, failing with [`ErrorKind::LlmCallsLimitExceeded`] past the limit.
    pub fn count_llm_call(&self) -> Result<()> {
        let limit = self.run_config().max_llm_calls;
        let calls = self.invocation.llm_calls.fetch_add(1, Ordering::AcqRel) + 1;
        if limit > 0 && calls > limit {
            return Err(Error::new(
                ErrorKind::LlmCallsLimitExceeded,
                format!(
                    "the invocation exceeded its limit of {limit} model calls; raise RunConfig::max_llm_calls if this is expected"
                ),
            ));
        }
        Ok(())
    }

    /// The progress agent `agent_name` checkpointed in this invocation.
    pub fn agent_progress(&self, agent_name: &str) -> Option<AgentProgress> {
        self.invocation
            .agent_progress
            .lock()
            .get(agent_name)
            .cloned()
    }

    /// Records the progress of `agent_name`; `None` forgets it.
    pub fn set_agent_progress(&self, agent_name: &str, progress: Option<AgentProgress>) {
        let mut all = self.invocation.agent_progress.lock();
        match progress {
            Some(progress) => all.insert(agent_name.to_owned(), progress),
            None => all.remove(agent_name),
        };
    }

    /// Data of type `T` that every context of this invocation shares, made with `T::default()` on
    /// first use. Upper layers keep invocation-scoped caches here (the flow keeps the history it
    /// built for each branch, so that each step only adds what is new).
    pub fn invocation_data<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let shared = self
            .invocation
            .data
            .lock()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()))
            .clone();
        shared
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("the entry of a TypeId holds that type"))
    }

    /// Forgets the progress of every agent below `agent_name`, so that they start afresh (a loop
    /// agent's next iteration).
    pub fn reset_sub_agent_progress(&self, agent_name: &str) {
        let Some(agent) = self.agent_tree().find(agent_name) else {
            return;
        };
        let mut all = self.invocation.agent_progress.lock();
        let mut pending: Vec<&Arc<dyn Agent>> = agent.sub_agents().iter().collect();
        while let Some(sub_agent) = pending.pop() {
            all.remove(sub_agent.name());
            pending.extend(sub_agent.sub_agents());
        }
    }
}

impl fmt::Debug for InvocationContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvocationContext")
            .field("invocation_id", self.invocation_id())
            .field("agent", &self.agent_name())
            .field("branch", &self.branch)
            .field("node_path", &self.node_path)
            .field("session", self.session_key())
            .finish_non_exhaustive()
    }
}

/// Builds an [`InvocationContext`]; made by [`InvocationContext::builder`].
#[must_use]
pub struct InvocationContextBuilder {
    agent: Arc<dyn Agent>,
    session: Session,
    invocation_id: Option<InvocationId>,
    user_content: Option<Content>,
    run_config: RunConfig,
    agent_tree: Option<AgentTree>,
    branch: Option<String>,
    node_path: NodePath,
    session_service: Option<Arc<dyn SessionService>>,
    artifact_service: Option<Arc<dyn ArtifactService>>,
    memory_service: Option<Arc<dyn MemoryService>>,
    ids: Arc<dyn IdGen>,
    clock: Arc<dyn Clock>,
    cancellation: Option<CancellationToken>,
    resumable: bool,
    data: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    llm_calls: Option<Arc<AtomicU32>>,
}

impl InvocationContextBuilder {
    /// Runs the invocation inside `parent`, as an agent called as a tool runs: it takes the
    /// parent's run settings, id generator and clock, draws on the parent's model-call budget (so
    /// nesting agents cannot multiply [`RunConfig::max_llm_calls`]), and is cancelled with it.
    pub fn nested_in(mut self, parent: &InvocationContext) -> Self {
        let invocation = &parent.invocation;
        self.run_config = invocation.run_config.clone();
        self.ids = invocation.ids.clone();
        self.clock = invocation.clock.clone();
        self.cancellation = Some(invocation.cancellation.child_token());
        self.llm_calls = Some(invocation.llm_calls.clone());
        self
    }

    /// Seeds the invocation data of type `T` (see [`InvocationContext::invocation_data`]): how an
    /// upper layer hands the whole invocation something, such as the runner its plugins.
    pub fn invocation_data<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.data.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Uses this invocation id (when resuming) instead of a fresh one.
    pub fn invocation_id(mut self, id: InvocationId) -> Self {
        self.invocation_id = Some(id);
        self
    }

    /// The user message that starts the invocation.
    pub fn user_content(mut self, content: Content) -> Self {
        self.user_content = Some(content);
        self
    }

    /// The run settings.
    pub fn run_config(mut self, config: RunConfig) -> Self {
        self.run_config = config;
        self
    }

    /// The whole agent tree, when the agent to run is not its root; by default the tree under the
    /// agent.
    pub fn agent_tree(mut self, tree: AgentTree) -> Self {
        self.agent_tree = Some(tree);
        self
    }

    /// The branch the run starts on.
    pub fn branch(mut self, branch: impl Into<String>) -> Self {
        self.branch = Some(branch.into());
        self
    }

    /// The path of the node run the context starts with (`assistant@1` for a root agent); empty
    /// by default.
    pub fn node_path(mut self, path: NodePath) -> Self {
        self.node_path = path;
        self
    }

    /// The session service.
    pub fn session_service(mut self, service: Arc<dyn SessionService>) -> Self {
        self.session_service = Some(service);
        self
    }

    /// The artifact service.
    pub fn artifact_service(mut self, service: Arc<dyn ArtifactService>) -> Self {
        self.artifact_service = Some(service);
        self
    }

    /// The memory service.
    pub fn memory_service(mut self, service: Arc<dyn MemoryService>) -> Self {
        self.memory_service = Some(service);
        self
    }

    /// The id generator (tests use a deterministic one).
    pub fn ids(mut self, ids: Arc<dyn IdGen>) -> Self {
        self.ids = ids;
        self
    }

    /// The clock (tests use a deterministic one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The token that cancels the run; by default a fresh one.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Makes the invocation resumable (see [`InvocationContext::is_resumable`]); off by default.
    pub fn resumable(mut self, resumable: bool) -> Self {
        self.resumable = resumable;
        self
    }

    /// Builds the context; fails when the agent tree is invalid.
    pub fn build(self) -> Result<InvocationContext> {
        let agent_tree = match self.agent_tree {
            Some(tree) => tree,
            None => AgentTree::new(self.agent.clone())?,
        };
        if agent_tree.find(self.agent.name()).is_none() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "agent '{}' is not in the agent tree rooted at '{}'",
                    self.agent.name(),
                    agent_tree.root().name()
                ),
            ));
        }
        let invocation_id = self
            .invocation_id
            .unwrap_or_else(|| self.ids.invocation_id());
        let invocation = Invocation {
            invocation_id,
            session_key: self.session.key(),
            session: RwLock::new(self.session),
            user_content: self.user_content,
            run_config: self.run_config,
            agent_tree,
            session_service: self.session_service,
            artifact_service: self.artifact_service,
            memory_service: self.memory_service,
            ids: self.ids,
            clock: self.clock,
            ended: AtomicBool::new(false),
            resumable: self.resumable,
            paused: AtomicBool::new(false),
            llm_calls: self.llm_calls.unwrap_or_default(),
            agent_progress: Mutex::new(HashMap::new()),
            cancellation: self.cancellation.unwrap_or_default(),
            data: Mutex::new(self.data),
        };
        Ok(InvocationContext {
            invocation: Arc::new(invocation),
            agent: self.agent,
            branch: self.branch.map(Into::into),
            node_path: self.node_path,
            isolation_scope: None,
        })
    }
}

/// What an instruction provider may read: the invocation's identity, the user's message and the
/// session state, but nothing it could change.
#[derive(Clone, Debug)]
pub struct ReadonlyContext {
    invocation: InvocationContext,
}

impl ReadonlyContext {
    /// A read-only view of `invocation`.
    pub fn new(invocation: InvocationContext) -> Self {
        Self { invocation }
    }

    /// The id of the invocation.
    pub fn invocation_id(&self) -> &InvocationId {
        self.invocation.invocation_id()
    }

    /// The name of the running agent.
    pub fn agent_name(&self) -> &str {
        self.invocation.agent_name()
    }

    /// The branch of the running agent.
    pub fn branch(&self) -> Option<&str> {
        self.invocation.branch()
    }

    /// The user message that started the invocation.
    pub fn user_content(&self) -> Option<&Content> {
        self.invocation.user_content()
    }

    /// The identity of the session.
    pub fn session_key(&self) -> &SessionKey {
        self.invocation.session_key()
    }

    /// The session state's value of `key` (any scope, prefix included).
    pub fn state(&self, key: &str) -> Option<Value> {
        self.invocation.session().state.get(key).cloned()
    }
}

/// What a callback may read and change: the session state (changes are recorded as the state delta
/// of the next event), artifacts, and the actions of that event.
///
/// It reads like a [`ReadonlyContext`] (through `Deref`), except that [`state`](Self::state) sees the
/// callback's own changes.
pub struct CallbackContext {
    readonly: ReadonlyContext,
    actions: Mutex<EventActions>,
}

impl CallbackContext {
    /// A callback context for `invocation`, with no changes yet.
    pub fn new(invocation: InvocationContext) -> Self {
        Self {
            readonly: ReadonlyContext::new(invocation),
            actions: Mutex::new(EventActions::default()),
        }
    }

    /// The invocation this callback runs in.
    pub fn invocation(&self) -> &InvocationContext {
        &self.readonly.invocation
    }

    /// The value of `key`, with this context's own changes applied.
    pub fn state(&self, key: &str) -> Option<Value> {
        if let Some(value) = self.actions.lock().state_delta.get(key) {
            return Some(value.clone());
        }
        self.readonly.state(key)
    }

    /// Sets `key`, recording the change in the state delta.
    pub fn set_state(&self, key: impl Into<String>, value: Value) {
        self.actions.lock().state_delta.insert(key.into(), value);
    }

    /// The actions recorded so far, to read or change (escalate, transfer, ...).
    pub fn actions(&self) -> MutexGuard<'_, EventActions> {
        self.actions.lock()
    }

    /// Takes the recorded actions, leaving none.
    pub fn take_actions(&self) -> EventActions {
        std::mem::take(&mut *self.actions.lock())
    }

    /// Loads version `version` of artifact `filename` (the latest when `None`).
    pub async fn load_artifact(
        &self,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<Part>> {
        self.artifacts()?
            .load_artifact(self.session_key(), filename, version)
            .await
    }

    /// Saves `artifact` as a new version of `filename`, recording it in the artifact delta.
    pub async fn save_artifact(&self, filename: &str, artifact: Part) -> Result<u64> {
        let version = self
            .artifacts()?
            .save_artifact(self.session_key(), filename, artifact, Map::new())
            .await?;
        self.actions
            .lock()
            .artifact_delta
            .insert(filename.to_owned(), version);
        Ok(version)
    }

    /// The names of the session's artifacts.
    pub async fn list_artifacts(&self) -> Result<Vec<String>> {
        self.artifacts()?
            .list_artifact_keys(self.session_key())
            .await
    }

    fn artifacts(&self) -> Result<&Arc<dyn ArtifactService>> {
        self.invocation().artifact_service().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "no artifact service is configured; give the runner one to use artifacts",
            )
        })
    }
}

impl Deref for CallbackContext {
    type Target = ReadonlyContext;

    fn deref(&self) -> &ReadonlyContext {
        &self.readonly
    }
}

impl fmt::Debug for CallbackContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackContext")
            .field("invocation", self.invocation())
            .field("actions", &*self.actions.lock())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventStream;
    use serde_json::json;

    struct Named(&'static str, Vec<Arc<dyn Agent>>);

    impl Agent for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn sub_agents(&self) -> &[Arc<dyn Agent>] {
            &self.1
        }
        fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
            Box::pin(futures::stream::empty())
        }
    }

    fn tree() -> (Arc<dyn Agent>, Arc<dyn Agent>) {
        let leaf: Arc<dyn Agent> = Arc::new(Named("leaf", vec![]));
        let child: Arc<dyn Agent> = Arc::new(Named("child", vec![leaf]));
        (Arc::new(Named("root", vec![child.clone()])), child)
    }

    fn context() -> InvocationContext {
        let mut session = Session::new(SessionKey::new("app", "u", "s"));
        session.state.insert("user:name".into(), json!("Ada"));
        InvocationContext::builder(tree().0, session)
            .build()
            .unwrap()
    }

    #[test]
    fn sub_agent_contexts_extend_the_branch_and_share_flags() {
        let root = context();
        let (_, child) = tree();
        let child_ctx = root.sub_agent_context(child.clone());
        assert_eq!(child_ctx.branch(), Some("child"));
        let leaf = child.sub_agents()[0].clone();
        let leaf_ctx = child_ctx.sub_agent_context(leaf);
        assert_eq!(leaf_ctx.branch(), Some("child.leaf"));
        assert_eq!(leaf_ctx.new_event().branch.as_deref(), Some("child.leaf"));
        assert_eq!(root.with_agent(child).branch(), None);
        leaf_ctx.end_invocation();
        assert!(root.is_ended());
    }

    #[test]
    fn llm_call_limit_is_enforced() {
        let ctx = InvocationContext::builder(tree().0, Session::default())
            .run_config(RunConfig::default().with_max_llm_calls(2))
            .build()
            .unwrap();
        assert!(ctx.count_llm_call().is_ok());
        assert!(ctx.count_llm_call().is_ok());
        let error = ctx.count_llm_call().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::LlmCallsLimitExceeded);
    }

    #[test]
    fn a_nested_invocation_shares_the_budget_seams_and_cancellation() {
        let parent = InvocationContext::builder(tree().0, Session::default())
            .run_config(RunConfig::default().with_max_llm_calls(2))
            .build()
            .unwrap();
        let nested = InvocationContext::builder(tree().0, Session::default())
            .nested_in(&parent)
            .build()
            .unwrap();
        assert!(parent.count_llm_call().is_ok());
        assert!(nested.count_llm_call().is_ok());
        assert_eq!(
            parent.count_llm_call().unwrap_err().kind(),
            ErrorKind::LlmCallsLimitExceeded
        );
        assert!(std::ptr::addr_eq(parent.ids(), nested.ids()));
        assert!(std::ptr::addr_eq(parent.clock(), nested.clock()));
        parent.cancellation().cancel();
        assert!(nested.cancellation().is_cancelled());
    }

    #[test]
    fn a_resumable_invocation_pauses_after_long_running_calls() {
        use crate::{FunctionCall, Part, Role};
        let mut event = Event::new(InvocationId::from("e-1"), "root").with_content(Content::new(
            Role::Model,
            [Part::function_call(
                FunctionCall::new("approve", json!({})).with_id("c1"),
            )],
        ));
        event.long_running_tool_ids = Some(vec!["c1".into()]);
        assert!(!context().should_pause_after(&event));
        let ctx = InvocationContext::builder(tree().0, Session::default())
            .resumable(true)
            .build()
            .unwrap();
        assert!(ctx.should_pause_after(&event));
        event.long_running_tool_ids = Some(vec![]);
        assert!(!ctx.should_pause_after(&event));
        ctx.pause();
        assert!(ctx.is_paused() && !ctx.is_ended());
    }

    #[test]
    fn callback_state_sees_its_own_changes() {
        let ctx = CallbackContext::new(context());
        assert_eq!(ctx.state("user:name"), Some(json!("Ada")));
        ctx.set_state("user:name", json!("Grace"));
        assert_eq!(ctx.state("user:name"), Some(json!("Grace")));
        assert_eq!(ctx.readonly.state("user:name"), Some(json!("Ada")));
        assert_eq!(ctx.take_actions().state_delta["user:name"], json!("Grace"));
    }

    #[test]
    fn progress_of_sub_agents_is_reset() {
        let ctx = context();
        ctx.set_agent_progress("leaf", Some(AgentProgress::Running(json!({"i": 1}))));
        ctx.set_agent_progress("child", Some(AgentProgress::Ended));
        ctx.reset_sub_agent_progress("root");
        assert_eq!(ctx.agent_progress("leaf"), None);
        assert_eq!(ctx.agent_progress("child"), None);
    }

    #[test]
    fn invocation_data_is_shared_by_derived_contexts() {
        #[derive(Default)]
        struct Counter(AtomicU32);
        let ctx = context();
        let (_, child) = tree();
        ctx.invocation_data::<Counter>()
            .0
            .fetch_add(1, Ordering::Relaxed);
        let seen = ctx.sub_agent_context(child).invocation_data::<Counter>();
        assert_eq!(seen.0.load(Ordering::Relaxed), 1);

        let seeded = InvocationContext::builder(tree().0, Session::default())
            .invocation_data(Counter(AtomicU32::new(7)))
            .build()
            .unwrap();
        assert_eq!(
            seeded
                .invocation_data::<Counter>()
                .0
                .load(Ordering::Relaxed),
            7
        );
    }

    #[tokio::test]
    async fn artifacts_without_a_service_are_a_config_error() {
        let ctx = CallbackContext::new(context());
        let error = ctx.list_artifacts().await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
    }

    #[test]
    fn an_agent_outside_the_tree_is_rejected() {
        let (root, _) = tree();
        let stranger: Arc<dyn Agent> = Arc::new(Named("stranger", vec![]));
        let error = InvocationContext::builder(stranger, Session::default())
            .agent_tree(AgentTree::new(root).unwrap())
            .build()
            .unwrap_err();
        assert!(error.message().contains("'stranger'"));
    }
}
