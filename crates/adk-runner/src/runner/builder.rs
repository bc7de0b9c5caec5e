//! [`RunnerBuilder`]: a runner's services, plugins and policies besides its agent tree and session
//! service, which [`Runner::builder`] takes.

use std::collections::HashSet;
use std::sync::Arc;

use adk_core::{
    Agent, AgentTree, Clock, Error, ErrorKind, IdGen, IntoArtifactService, IntoCredentialService,
    IntoMemoryService, Result, Services, SessionService,
};
use adk_flow::IntoPlugin;
use adk_flow::internal::{OverflowCompaction, Plugins, ToolStateScopes};

use super::{Inner, Runner};
use crate::client_state::ClientStateScopes;
use crate::compaction::{CompactionConfig, IntoSummarizer, OverflowCompactor, Summarizer};

/// Builds a [`Runner`]; made by [`Runner::builder`].
///
/// ```
/// use adk_core::testing::ScriptedModel;
/// use adk_flow::LlmAgent;
/// use adk_runner::Runner;
/// use adk_session::{InMemoryArtifactService, InMemorySessionService};
///
/// let agent = LlmAgent::builder("assistant").model(ScriptedModel::new("scripted")).build()?;
/// let runner = Runner::builder("app", agent, InMemorySessionService::new())
///     .artifact_service(InMemoryArtifactService::new())
///     .resumable(true)
///     .build()?;
/// assert_eq!(runner.app_name(), "app");
/// # Ok::<(), adk_core::Error>(())
/// ```
#[must_use]
pub struct RunnerBuilder {
    app_name: String,
    root_agent: Arc<dyn Agent>,
    sessions: Arc<dyn SessionService>,
    services: Services,
    plugins: Vec<Arc<dyn adk_flow::Plugin>>,
    auto_create_session: bool,
    resumable: bool,
    resume_interrupted: bool,
    client_state: ClientStateScopes,
    tool_state: ToolStateScopes,
    compaction: Option<CompactionConfig>,
    /// The summarizer of compaction on a context overflow alone, when `compaction` is not set.
    overflow_summarizer: Option<Arc<dyn Summarizer>>,
}

impl RunnerBuilder {
    pub(super) fn new(
        app_name: String,
        root_agent: Arc<dyn Agent>,
        sessions: Arc<dyn SessionService>,
    ) -> Self {
        Self {
            app_name,
            root_agent,
            sessions,
            services: Services::default(),
            plugins: Vec::new(),
            auto_create_session: false,
            resumable: false,
            resume_interrupted: false,
            client_state: ClientStateScopes::default(),
            tool_state: ToolStateScopes::default(),
            compaction: None,
            overflow_summarizer: None,
        }
    }

    /// Where artifacts are kept; tools and callbacks can save artifacts only with one.
    pub fn artifact_service(mut self, service: impl IntoArtifactService) -> Self {
        self.services.artifact_service = Some(service.into_artifact_service());
        self
    }

    /// The long-term memory that memory tools search.
    pub fn memory_service(mut self, service: impl IntoMemoryService) -> Self {
        self.services.memory_service = Some(service.into_memory_service());
        self
    }

    /// Where the credentials tools act with on a user's behalf are kept: the OAuth2 tokens of
    /// `adk_tool::oauth2`, encrypted at rest by `adk-session`'s SQL credential services.
    pub fn credential_service(mut self, service: impl IntoCredentialService) -> Self {
        self.services.credential_service = Some(service.into_credential_service());
        self
    }

    /// Adds a plugin; plugins run in the order they were added, before the agents' callbacks.
    pub fn plugin(mut self, plugin: impl IntoPlugin) -> Self {
        self.plugins.push(plugin.into_plugin());
        self
    }

    /// Creates a session that does not exist yet when a run names it, instead of failing.
    /// [`Runner::in_memory`] turns it on.
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

    /// Continues an invocation cut off by a crash when the next message comes to its session:
    /// the run first resumes that invocation from its last stored event (model calls whose
    /// answers are stored are not made again; calls cut off are handled as the effect journal
    /// says), then runs the new message. An invocation counts as cut off when its last event is
    /// the user's message, an unanswered call or a tool's result (see `docs/durability.md`), so
    /// a run whose stream was dropped counts too unless it was ended with
    /// [`Runner::cancel_invocation`]. Under an `LlmAgent` root this works without
    /// [`resumable`](Self::resumable); a workflow root resumes from its checkpoints, so it needs
    /// `resumable(true)` as well. Off by default.
    pub fn resume_interrupted(mut self, resume: bool) -> Self {
        self.resume_interrupted = resume;
        self
    }

    /// Accepts `app:` keys in the state deltas of clients' requests (default: refused with
    /// [`ErrorKind::InvalidInput`]). `app:` state is shared by every user of the app, so only turn
    /// this on when every client is trusted.
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
        self.services.ids = ids;
        self
    }

    /// Where event timestamps come from (tests use a deterministic clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.services.clock = clock;
        self
    }

    /// Compacts each session's events after invocations, as `config` says (ADK Python's
    /// `EventsCompactionConfig`): the model then sees summaries instead of old events.
    pub fn compaction(mut self, config: CompactionConfig) -> Self {
        self.compaction = Some(config);
        self
    }

    /// Answers a context overflow by compaction, without compacting after invocations: when the
    /// model refuses a request as longer than its context window, `summarizer` summarizes the
    /// session's events before the current invocation once and the request is sent again. A
    /// [`compaction`](Self::compaction) config does this already (with its own summarizer); this
    /// is for apps that want the rescue but not the regular compaction, as `adk run` sets up.
    ///
    /// ```
    /// use adk_core::testing::ScriptedModel;
    /// use adk_flow::LlmAgent;
    /// use adk_runner::{LlmSummarizer, Runner};
    /// use adk_session::InMemorySessionService;
    ///
    /// let model = ScriptedModel::new("scripted");
    /// let agent = LlmAgent::builder("assistant").model(model.clone()).build()?;
    /// let runner = Runner::builder("app", agent, InMemorySessionService::new())
    ///     .overflow_compaction(LlmSummarizer::new(model))
    ///     .build()?;
    /// # let _ = runner;
    /// # Ok::<(), adk_core::Error>(())
    /// ```
    pub fn overflow_compaction(mut self, summarizer: impl IntoSummarizer) -> Self {
        self.overflow_summarizer = Some(summarizer.into_summarizer());
        self
    }

    /// Builds the runner; fails when the agent tree is invalid (empty or duplicate names, an
    /// agent named `user`), two plugins share a name, or the compaction config is invalid.
    pub fn build(self) -> Result<Runner> {
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
        let mut services = self.services;
        services.session_service = Some(self.sessions.clone());
        // Compaction on overflow needs no trigger: only the summarizer and the overflow window of
        // a config are used.
        let overflow_config = self
            .compaction
            .clone()
            .or_else(|| self.overflow_summarizer.clone().map(CompactionConfig::new));
        let overflow = match overflow_config {
            Some(config) => OverflowCompaction::new(Arc::new(OverflowCompactor {
                config,
                sessions: self.sessions.clone(),
                ids: services.ids.clone(),
                clock: services.clock.clone(),
            })),
            None => OverflowCompaction::default(),
        };
        Ok(Runner {
            inner: Arc::new(Inner {
                app_name: self.app_name,
                tree,
                sessions: self.sessions,
                services,
                plugins: Plugins::new(self.plugins),
                auto_create_session: self.auto_create_session,
                resumable: self.resumable,
                resume_interrupted: self.resume_interrupted,
                client_state: self.client_state,
                tool_state: self.tool_state,
                compaction: self.compaction,
                overflow,
            }),
        })
    }
}

impl std::fmt::Debug for RunnerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerBuilder")
            .field("app_name", &self.app_name)
            .field("root_agent", &self.root_agent.name())
            .finish_non_exhaustive()
    }
}
