//! [`ToolContext`]: what a running tool can see and change.

use adk_core::{
    CallbackContext, Error, ErrorKind, EventActions, FunctionCallId, Part, Result,
    SearchMemoryResponse, ToolConfirmation,
};
use async_trait::async_trait;
use parking_lot::MutexGuard;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a running tool can see and change, implemented by the flow.
///
/// Three methods are required; the rest are built on them. State changes, artifact saves and
/// requested actions are recorded in the actions of the event that carries the tool's response.
#[async_trait]
pub trait ToolContext: Send + Sync {
    /// The callback context of the call: state, artifacts and the event's actions.
    fn callback_context(&self) -> &CallbackContext;

    /// The id of the function call being answered.
    fn function_call_id(&self) -> Option<&FunctionCallId>;

    /// The user's answer to a confirmation this call requested earlier, when resuming.
    fn tool_confirmation(&self) -> Option<&ToolConfirmation>;

    /// The session state's value of `key`, with this call's own changes applied.
    fn state(&self, key: &str) -> Option<Value> {
        self.callback_context().state(key)
    }

    /// Sets state `key`; the change travels in the response event's state delta.
    fn set_state(&self, key: &str, value: Value) {
        self.callback_context().set_state(key, value);
    }

    /// The actions of the response event, to read or change.
    fn actions(&self) -> MutexGuard<'_, EventActions> {
        self.callback_context().actions()
    }

    /// Asks the flow not to call the model on this response: it is shown to the user as it is.
    fn skip_summarization(&self) {
        self.actions().skip_summarization = Some(true);
    }

    /// Asks the enclosing loop agent to stop.
    fn escalate(&self) {
        self.actions().escalate = Some(true);
    }

    /// Hands the conversation to the agent named `agent_name` after this step.
    fn transfer_to_agent(&self, agent_name: &str) {
        self.actions().transfer_to_agent = Some(agent_name.to_owned());
    }

    /// Asks the user to confirm this call before it takes effect; the run pauses until they answer.
    fn request_confirmation(&self, hint: &str, payload: Option<Value>) -> Result<()> {
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
        self.actions()
            .requested_tool_confirmations
            .insert(call_id, confirmation);
        Ok(())
    }

    /// Loads version `version` of artifact `filename` (the latest when `None`).
    async fn load_artifact(&self, filename: &str, version: Option<u64>) -> Result<Option<Part>> {
        self.callback_context()
            .load_artifact(filename, version)
            .await
    }

    /// Saves a new version of artifact `filename`, recorded in the artifact delta.
    async fn save_artifact(&self, filename: &str, artifact: Part) -> Result<u64> {
        self.callback_context()
            .save_artifact(filename, artifact)
            .await
    }

    /// The names of the session's artifacts.
    async fn list_artifacts(&self) -> Result<Vec<String>> {
        self.callback_context().list_artifacts().await
    }

    /// Searches the user's memory.
    async fn search_memory(&self, query: &str) -> Result<SearchMemoryResponse> {
        let ctx = self.callback_context();
        let memory = ctx.invocation().memory_service().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "no memory service is configured; give the runner one to search memory",
            )
        })?;
        let key = ctx.session_key();
        memory
            .search_memory(&key.app_name, &key.user_id, query)
            .await
    }

    /// Cancelled when the run is abandoned; long-running work should stop when it fires.
    fn cancellation(&self) -> &CancellationToken {
        self.callback_context().invocation().cancellation()
    }
}
