//! Everything before an invocation's agent runs: load the session, check and store the user's
//! message, decide which invocation this is (new or resumed) and which agent takes the turn.

use std::sync::Arc;

use adk_core::internal::{AgentProgress, InvocationControl as _};
use adk_core::{
    Agent, Content, CreateSessionRequest, Error, ErrorKind, Event, EventActions, GetSessionRequest,
    InvocationContext, InvocationId, Part, PartData, Result, RunConfig, Session, SessionKey,
    USER_AUTHOR,
};
use adk_flow::LlmAgent;
use serde_json::{Map, Value};

use super::{Inner, RunRequest};

/// What of a [`RunRequest`] is used once the invocation is chosen.
struct PreparedRequest {
    new_message: Option<Content>,
    state_delta: Map<String, Value>,
    run_config: RunConfig,
}
use crate::agent_to_run::agent_to_run;
use crate::credentials;
use crate::persist::{persist_event, persist_with_stored_copy};
use crate::resume::{self, Continuation};

/// What [`Inner::prepare`] found to do.
pub(super) enum Prepared {
    /// Run this invocation.
    Run(Box<InvocationContext>),
    /// Nothing to run: a resumed invocation that ended, or one still waiting for answers.
    Nothing,
    /// The session's last invocation was cut off by a crash: resume it first, then prepare the
    /// request again. Nothing was stored.
    CutOffFirst(InvocationId, Box<RunRequest>),
}

impl Inner {
    /// Everything before the agent runs: loads the session, checks and stores the new message,
    /// and builds the invocation with the agent that takes the turn.
    pub(super) async fn prepare(self: &Arc<Self>, request: RunRequest) -> Result<Prepared> {
        self.client_state.check(&request.state_delta)?;
        let key = SessionKey::new(
            self.app_name.clone(),
            request.user_id.clone(),
            request.session_id.clone(),
        );
        let session = self.load_session(&key, self.auto_create_session).await?;
        let mut continuation = match &request.new_message {
            Some(message) => resume::check_message(&self.tree, &session.events, message)?,
            None => None,
        };
        if let Some(cut_off) = self.cut_off_to_resume(&session, &request, &continuation) {
            return Ok(Prepared::CutOffFirst(cut_off, Box::new(request)));
        }
        let RunRequest {
            new_message,
            state_delta,
            invocation_id,
            run_config,
            cut_off_handled,
            ..
        } = request;
        let request = PreparedRequest {
            new_message,
            state_delta,
            run_config,
        };
        let resumed =
            self.invocation_to_resume(&session, invocation_id, &continuation, cut_off_handled)?;
        let invocation_id = resumed
            .clone()
            .unwrap_or_else(|| self.services.ids.invocation_id());
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
                let session = ctx.with_session(Session::clone);
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
            let agent = ctx.with_session(|session| agent_to_run(&self.tree, &session.events));
            return Ok(Prepared::Run(Box::new(self.placed(ctx, agent))));
        }
        resume::restore_progress(&ctx);
        let root = self.tree.root().clone();
        if matches!(ctx.agent_progress(root.name()), Some(AgentProgress::Ended)) {
            return Ok(Prepared::Nothing);
        }
        if ctx.with_session(|session| {
            !resume::unanswered_calls(&session.events, &invocation_id).is_empty()
        }) {
            return Ok(Prepared::Nothing);
        }
        // Workflow agents resume from their checkpoints, so the root runs again; an LlmAgent root
        // checkpoints nothing, so the agent that was speaking continues.
        let agent = if root.downcast_ref::<LlmAgent>().is_some() {
            ctx.with_session(|session| agent_to_run(&self.tree, &session.events))
        } else {
            root
        };
        Ok(Prepared::Run(Box::new(self.placed(ctx, agent))))
    }

    /// The invocation to resume before `request` runs: with
    /// [`resume_interrupted`](super::RunnerBuilder::resume_interrupted) on, a new message that
    /// continues no paused call finds the session's last invocation cut off by a crash.
    fn cut_off_to_resume(
        &self,
        session: &Session,
        request: &RunRequest,
        continuation: &Option<Continuation>,
    ) -> Option<InvocationId> {
        if !self.resume_interrupted
            || request.cut_off_handled
            || request.invocation_id.is_some()
            || continuation.is_some()
            || !self.may_resume_cut_off()
        {
            return None;
        }
        crate::cut_off::cut_off_invocation(&session.events).cloned()
    }

    /// Whether an invocation cut off by a crash can be resumed: an `LlmAgent` root continues
    /// from the stored events alone; a workflow root needs the checkpoints of a resumable runner.
    fn may_resume_cut_off(&self) -> bool {
        self.resumable || self.tree.root().downcast_ref::<LlmAgent>().is_some()
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
        let replaced = ctx
            .with_session(|session| resume::check_message(&self.tree, &session.events, message))?;
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
    pub(super) async fn load_session(&self, key: &SessionKey, create: bool) -> Result<Session> {
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
        cut_off: bool,
    ) -> Result<Option<InvocationId>> {
        let Some(named) = named else {
            return Ok(continuation
                .as_ref()
                .filter(|_| self.resumable)
                .map(|continuation| continuation.invocation_id.clone()));
        };
        if !(self.resumable || cut_off && self.may_resume_cut_off()) {
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
            .services(self.services.clone())
            .resumable(self.resumable)
            .invocation_data(self.plugins.clone())
            .invocation_data(self.tool_state)
            .invocation_data(self.overflow.clone());
        if let Some(content) = user_content {
            builder = builder.user_content(content);
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
            ctx.with_session(|session| adk_flow::task::active_task_scope(&session.events))
        } else {
            None
        };
        let mut event = Event::with_ids_and_clock(
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
        let artifacts = self.services.artifact_service.as_ref().ok_or_else(|| {
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
}
