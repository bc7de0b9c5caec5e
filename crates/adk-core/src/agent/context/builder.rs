//! [`InvocationContextBuilder`]: how the runner (and a test) starts an invocation, from
//! [`InvocationContext::builder`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32};

use parking_lot::{Mutex, RwLock};
use tokio_util::sync::CancellationToken;

use super::invocation::Invocation;
use super::{InvocationContext, RunConfig, Services};
use crate::{Agent, AgentTree, Content, Error, ErrorKind, InvocationId, NodePath, Result, Session};

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
    services: Services,
    cancellation: Option<CancellationToken>,
    resumable: bool,
    data: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    llm_calls: Option<Arc<AtomicU32>>,
}

impl InvocationContext {
    /// Starts building the context for running `agent` on `session`.
    pub fn builder(agent: impl crate::IntoAgent, session: Session) -> InvocationContextBuilder {
        InvocationContextBuilder::new(agent.into_agent(), session)
    }
}

impl InvocationContextBuilder {
    fn new(agent: Arc<dyn Agent>, session: Session) -> Self {
        Self {
            agent,
            session,
            invocation_id: None,
            user_content: None,
            run_config: RunConfig::default(),
            agent_tree: None,
            branch: None,
            node_path: NodePath::default(),
            services: Services::default(),
            cancellation: None,
            resumable: false,
            data: HashMap::new(),
            llm_calls: None,
        }
    }

    /// Runs the invocation inside `parent`, as an agent called as a tool runs: it takes the
    /// parent's run settings, id generator and clock, draws on the parent's model-call budget (so
    /// nesting agents cannot multiply [`RunConfig::max_llm_calls`]), and is cancelled with it.
    #[doc(hidden)]
    pub fn nested_in(mut self, parent: &InvocationContext) -> Self {
        let invocation = &parent.invocation;
        self.run_config = invocation.run_config.clone();
        self.services.ids = invocation.services.ids.clone();
        self.services.clock = invocation.services.clock.clone();
        self.cancellation = Some(invocation.cancellation.child_token());
        self.llm_calls = Some(invocation.llm_calls.clone());
        self
    }

    /// Seeds the invocation data of type `T`: how an upper layer hands the whole invocation
    /// something, such as the runner its plugins.
    #[doc(hidden)]
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
    pub fn user_content(mut self, content: impl Into<Content>) -> Self {
        self.user_content = Some(content.into());
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

    /// The storage services, id generator and clock (by default no services, random ids and the
    /// system clock).
    pub fn services(mut self, services: Services) -> Self {
        self.services = services;
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
            .unwrap_or_else(|| self.services.ids.invocation_id());
        let invocation = Invocation {
            invocation_id,
            session_key: self.session.key(),
            session: RwLock::new(self.session),
            user_content: self.user_content,
            run_config: self.run_config,
            agent_tree,
            services: self.services,
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

impl std::fmt::Debug for InvocationContextBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InvocationContextBuilder")
            .field("agent", &self.agent.name())
            .field("session", &self.session.key())
            .finish_non_exhaustive()
    }
}
