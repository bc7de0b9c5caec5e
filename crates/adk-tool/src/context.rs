//! [`ToolContext`]: what a running tool can see and change.

use std::sync::Arc;

use adk_core::{
    CallbackContext, Content, Error, ErrorKind, EventActions, FunctionCallId, InvocationContext,
    InvocationId, Part, Result, SearchMemoryResponse, SessionKey, ToolConfirmation,
};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a running tool can see and change: the session state, artifacts, memory, and the actions
/// of the event that carries its response.
///
/// A handle: cloning it is cheap, and clones record into the same actions. The flow (an
/// `LlmAgent`'s tool calls) and the orchestrator (its tool processor and run loop) make one per
/// function call; state changes, artifact saves and requested actions travel in the response
/// event.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{Agent, EventStream, InvocationContext, Session, SessionKey};
/// use adk_tool::ToolContext;
/// # struct Echo;
/// # impl Agent for Echo {
/// #     fn name(&self) -> &str { "echo" }
/// #     fn description(&self) -> &str { "" }
/// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
/// # }
/// # let invocation = InvocationContext::builder(Echo, Session::new(SessionKey::new("app", "u", "s")))
/// #     .build()
/// #     .unwrap();
///
/// let ctx = ToolContext::new(invocation, Some("call-1".into()));
/// ctx.set_state("last_city", "Paris")?;
/// ctx.skip_summarization();
/// let actions = ctx.take_actions();
/// assert_eq!(actions.state_delta["last_city"], "Paris");
/// assert_eq!(actions.skip_summarization, Some(true));
/// # Ok::<(), adk_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ToolContext {
    call: Arc<Call>,
}

#[derive(Debug)]
struct Call {
    callback: CallbackContext,
    call_id: Option<FunctionCallId>,
    confirmation: Option<ToolConfirmation>,
}

impl ToolContext {
    /// The context of a call with id `call_id` in `invocation` (no id while a tool changes a
    /// model request).
    pub fn new(invocation: InvocationContext, call_id: Option<FunctionCallId>) -> Self {
        Self::with_confirmation(invocation, call_id, None)
    }

    /// The context of a call that the user answered a confirmation for, when the call resumes.
    pub fn with_confirmation(
        invocation: InvocationContext,
        call_id: Option<FunctionCallId>,
        confirmation: Option<ToolConfirmation>,
    ) -> Self {
        Self {
            call: Arc::new(Call {
                callback: CallbackContext::new(invocation),
                call_id,
                confirmation,
            }),
        }
    }

    /// The invocation the call runs in (an agent run as a tool nests its own invocation in it).
    pub fn invocation(&self) -> &InvocationContext {
        self.call.callback.invocation()
    }

    /// The call's callback context: what a plugin's agent and model hooks see.
    pub fn callback_context(&self) -> &CallbackContext {
        &self.call.callback
    }

    /// The id of the function call being answered.
    pub fn function_call_id(&self) -> Option<&FunctionCallId> {
        self.call.call_id.as_ref()
    }

    /// The key that identifies this function call to an external API, so that a call run again
    /// (on resume, on another replica) acts once: the same for every run of this call, different
    /// for every other call. `None` outside a function call. Its format is documented at
    /// [`idempotency_key`](crate::idempotency_key).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use adk_core::{Agent, EventStream, InvocationContext, Session, SessionKey};
    /// use adk_tool::ToolContext;
    /// # struct Shop;
    /// # impl Agent for Shop {
    /// #     fn name(&self) -> &str { "shop" }
    /// #     fn description(&self) -> &str { "" }
    /// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
    /// # }
    /// # let invocation = InvocationContext::builder(Shop, Session::new(SessionKey::new("app", "u", "s")))
    /// #     .build()
    /// #     .unwrap();
    ///
    /// let ctx = ToolContext::new(invocation.clone(), Some("call-1".into()));
    /// let key = ctx.idempotency_key().unwrap();
    /// // Sent as the `Idempotency-Key` header of a payment API, say.
    /// assert_eq!(Some(key), ToolContext::new(invocation, Some("call-1".into())).idempotency_key());
    /// ```
    pub fn idempotency_key(&self) -> Option<String> {
        let call_id = self.function_call_id()?;
        Some(crate::idempotency_key(
            self.session_key(),
            self.invocation_id(),
            call_id,
        ))
    }

    /// The user's answer to a confirmation this call requested earlier, when resuming.
    pub fn tool_confirmation(&self) -> Option<&ToolConfirmation> {
        self.call.confirmation.as_ref()
    }

    /// The id of the invocation.
    pub fn invocation_id(&self) -> &InvocationId {
        self.invocation().invocation_id()
    }

    /// The name of the agent that called the tool.
    pub fn agent_name(&self) -> &str {
        self.invocation().agent_name()
    }

    /// The user message that started the invocation.
    pub fn user_content(&self) -> Option<&Content> {
        self.invocation().user_content()
    }

    /// The identity of the session.
    pub fn session_key(&self) -> &SessionKey {
        self.invocation().session_key()
    }

    /// The session state's value of `key`, with this call's own changes applied.
    pub fn state(&self, key: &str) -> Option<Value> {
        self.call.callback.state(key)
    }

    /// Sets state `key` to `value` as JSON; the change travels in the response event's state
    /// delta.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Serialization`] when `value` cannot be written as JSON.
    pub fn set_state(&self, key: impl Into<String>, value: impl Serialize) -> Result<()> {
        self.call.callback.set_state(key, value)
    }

    /// Changes the actions of the response event in `change` (the actions are locked while it
    /// runs, so it must not block).
    pub fn update_actions<R>(&self, change: impl FnOnce(&mut EventActions) -> R) -> R {
        self.call.callback.update_actions(change)
    }

    /// Takes the actions recorded so far, leaving none: what the response event carries.
    pub fn take_actions(&self) -> EventActions {
        self.call.callback.take_actions()
    }

    /// Asks the flow not to call the model on this response: it is shown to the user as it is.
    pub fn skip_summarization(&self) {
        self.update_actions(|actions| actions.skip_summarization = Some(true));
    }

    /// Asks the enclosing loop agent to stop.
    pub fn escalate(&self) {
        self.update_actions(|actions| actions.escalate = Some(true));
    }

    /// Hands the conversation to the agent named `agent_name` after this step.
    pub fn transfer_to_agent(&self, agent_name: &str) {
        self.update_actions(|actions| actions.transfer_to_agent = Some(agent_name.to_owned()));
    }

    /// Asks the user to confirm this call before it takes effect; the run pauses until they answer.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Tool`] outside a function call (no call id to confirm).
    pub fn request_confirmation(&self, hint: &str, payload: Option<Value>) -> Result<()> {
        let call_id = self.function_call_id().cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::Tool,
                "a confirmation can only be requested while answering a function call",
            )
        })?;
        let confirmation = ToolConfirmation {
            hint: hint.to_owned(),
            confirmed: false,
            payload,
        };
        self.update_actions(|actions| {
            actions
                .requested_tool_confirmations
                .insert(call_id, confirmation)
        });
        Ok(())
    }

    /// Loads version `version` of artifact `filename` (the latest when `None`).
    pub async fn load_artifact(
        &self,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<Part>> {
        self.call.callback.load_artifact(filename, version).await
    }

    /// Saves a new version of artifact `filename`, recorded in the artifact delta.
    pub async fn save_artifact(&self, filename: &str, artifact: Part) -> Result<u64> {
        self.call.callback.save_artifact(filename, artifact).await
    }

    /// The names of the session's artifacts.
    pub async fn list_artifacts(&self) -> Result<Vec<String>> {
        self.call.callback.list_artifacts().await
    }

    /// Searches the user's memory.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] when the runner has no memory service.
    pub async fn search_memory(&self, query: &str) -> Result<SearchMemoryResponse> {
        let memory = self.invocation().memory_service().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "no memory service is configured; give the runner one to search memory",
            )
        })?;
        let key = self.session_key();
        memory
            .search_memory(&key.app_name, &key.user_id, query)
            .await
    }

    /// Cancelled when the run is abandoned; long-running work should stop when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        self.invocation().cancellation()
    }
}
