//! [`CallbackContext`]: what a callback may read and change: the session state (its changes go
//! into the next event's state delta), artifacts, and that event's actions.

use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Map, Value};

use super::InvocationContext;
use crate::{ArtifactService, Content, Error, ErrorKind, EventActions, InvocationId, Part};
use crate::{Result, SessionKey};

/// What a callback may read and change: the session state (changes are recorded as the state delta
/// of the next event), artifacts, and the actions of that event.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{Agent, CallbackContext, EventStream, InvocationContext, Session, SessionKey};
/// # struct Echo;
/// # impl Agent for Echo {
/// #     fn name(&self) -> &str { "echo" }
/// #     fn description(&self) -> &str { "" }
/// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
/// # }
/// # let invocation = InvocationContext::builder(Echo, Session::new(SessionKey::new("app", "u", "s")))
/// #     .build()
/// #     .unwrap();
/// let ctx = CallbackContext::new(invocation);
/// ctx.set_state("user:visits", 3)?;
/// assert_eq!(ctx.state("user:visits"), Some(serde_json::json!(3)));
/// ctx.update_actions(|actions| actions.escalate = Some(true));
/// assert_eq!(ctx.take_actions().state_delta["user:visits"], 3);
/// # Ok::<(), adk_core::Error>(())
/// ```
pub struct CallbackContext {
    invocation: InvocationContext,
    actions: Mutex<EventActions>,
}

impl CallbackContext {
    /// A callback context for `invocation`, with no changes yet.
    pub fn new(invocation: InvocationContext) -> Self {
        Self {
            invocation,
            actions: Mutex::new(EventActions::default()),
        }
    }

    /// The invocation this callback runs in.
    pub fn invocation(&self) -> &InvocationContext {
        &self.invocation
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

    /// The value of `key` (any scope, prefix included), with this context's own changes applied.
    pub fn state(&self, key: &str) -> Option<Value> {
        if let Some(value) = self.actions.lock().state_delta.get(key) {
            return Some(value.clone());
        }
        self.invocation
            .with_session(|session| session.state.get(key).cloned())
    }

    /// Sets `key` to `value` as JSON, recording the change in the state delta.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Serialization`] when `value` cannot be written as JSON (a map whose keys are
    /// not strings, say); the state is then unchanged.
    pub fn set_state(&self, key: impl Into<String>, value: impl Serialize) -> Result<()> {
        let value = serde_json::to_value(value)?;
        self.actions.lock().state_delta.insert(key.into(), value);
        Ok(())
    }

    /// Changes the actions recorded so far (escalate, transfer, ...) in `change`, and returns
    /// what it returns. The actions are locked while `change` runs, so it must not block.
    pub fn update_actions<R>(&self, change: impl FnOnce(&mut EventActions) -> R) -> R {
        change(&mut self.actions.lock())
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
        self.invocation.artifact_service().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "no artifact service is configured; give the runner one to use artifacts",
            )
        })
    }
}

impl fmt::Debug for CallbackContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackContext")
            .field("invocation", &self.invocation)
            .field("actions", &*self.actions.lock())
            .finish()
    }
}
