//! [`InvocationContext`]: what one agent run knows about its invocation, shared with every agent
//! the invocation runs.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use parking_lot::{Mutex, RwLock};
use tokio_util::sync::CancellationToken;

use super::{RunConfig, Services};
use crate::ids::{Clock, IdGen};
use crate::{
    Agent, AgentTree, ArtifactService, Content, CredentialService, Event, InvocationId,
    MemoryService,
};
use crate::{NodePath, Session, SessionKey, SessionService};

/// The progress an agent checkpointed in this invocation, for resuming.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentProgress {
    /// Running, with the state it saved (a workflow agent's child index, a loop count, ...).
    Running(serde_json::Value),
    /// Finished.
    Ended,
}

/// Everything about one invocation that the agents of the tree share.
pub(super) struct Invocation {
    pub(super) invocation_id: InvocationId,
    pub(super) session_key: SessionKey,
    pub(super) session: RwLock<Session>,
    pub(super) user_content: Option<Content>,
    pub(super) run_config: RunConfig,
    pub(super) agent_tree: AgentTree,
    pub(super) services: Services,
    pub(super) ended: AtomicBool,
    pub(super) resumable: bool,
    pub(super) paused: AtomicBool,
    /// Shared with the invocations nested in this one (agents run as tools), so that they all
    /// draw on one model-call budget.
    pub(super) llm_calls: Arc<AtomicU32>,
    pub(super) agent_progress: Mutex<HashMap<String, AgentProgress>>,
    pub(super) cancellation: CancellationToken,
    pub(super) data: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
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
/// let ctx = InvocationContext::builder(Echo, session)
///     .user_content(Content::user("hi"))
///     .build()
///     .unwrap();
/// assert!(ctx.invocation_id().as_str().starts_with("e-"));
/// assert_eq!(ctx.new_event().author, "echo");
/// ```
#[derive(Clone)]
pub struct InvocationContext {
    pub(super) invocation: Arc<Invocation>,
    pub(super) agent: Arc<dyn Agent>,
    pub(super) branch: Option<Arc<str>>,
    /// The node run this context runs, stamped on its events (`nodeInfo.path`).
    pub(super) node_path: NodePath,
    /// The conversation this run's events belong to when it is kept apart (a delegated task's).
    pub(super) isolation_scope: Option<Arc<str>>,
}

impl InvocationContext {
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

    /// Reads the session: `read` sees it as it is now, with every event stored so far applied.
    ///
    /// The session is locked while `read` runs, so `read` should be short and must not block.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use adk_core::{Agent, EventStream, InvocationContext, Session, SessionKey};
    /// # struct Echo;
    /// # impl Agent for Echo {
    /// #     fn name(&self) -> &str { "echo" }
    /// #     fn description(&self) -> &str { "" }
    /// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
    /// # }
    /// let ctx = InvocationContext::builder(Echo, Session::new(SessionKey::new("app", "u", "s")))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(ctx.with_session(|session| session.events.len()), 0);
    /// ```
    pub fn with_session<R>(&self, read: impl FnOnce(&Session) -> R) -> R {
        read(&self.invocation.session.read())
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
        self.invocation.services.session_service.as_ref()
    }

    /// The artifact service, when the invocation has one.
    pub fn artifact_service(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.invocation.services.artifact_service.as_ref()
    }

    /// The memory service, when the invocation has one.
    pub fn memory_service(&self) -> Option<&Arc<dyn MemoryService>> {
        self.invocation.services.memory_service.as_ref()
    }

    /// The credential service, when the invocation has one.
    pub fn credential_service(&self) -> Option<&Arc<dyn CredentialService>> {
        self.invocation.services.credential_service.as_ref()
    }

    /// The services and seams of the invocation.
    pub fn services(&self) -> &Services {
        &self.invocation.services
    }

    /// The id generator of the run.
    pub fn ids(&self) -> &dyn IdGen {
        self.invocation.services.ids.as_ref()
    }

    /// The clock of the run.
    pub fn clock(&self) -> &dyn Clock {
        self.invocation.services.clock.as_ref()
    }

    /// Cancelled when the run is abandoned; long work in tools can watch it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.invocation.cancellation
    }

    /// A new event of this agent in this invocation, branch, node run and isolation scope, with an
    /// id and timestamp from the run's id generator and clock.
    pub fn new_event(&self) -> Event {
        let mut event = Event::with_ids_and_clock(
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

    /// Whether the invocation was ended: no agent takes another step after the current one.
    pub fn is_ended(&self) -> bool {
        self.invocation.ended.load(Ordering::Acquire)
    }

    /// Whether the app is resumable: agents checkpoint their progress in events, and the invocation
    /// pauses after an event with long-running calls.
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

    /// Whether an agent of the invocation paused it after an event it should
    /// [pause after](Self::should_pause_after).
    pub fn is_paused(&self) -> bool {
        self.invocation.paused.load(Ordering::Acquire)
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
