//! [`RunRequest`]: what one run does.

use adk_core::{Content, FunctionResponse, InvocationId, Part, Role, RunConfig, SessionId};
use serde_json::{Map, Value};

/// What one run does: the session, the new message with an optional state delta, the invocation
/// to resume, and the run's settings.
///
/// ```
/// use adk_core::{FunctionResponse, RunConfig, StreamingMode};
/// use adk_runner::RunRequest;
/// use serde_json::json;
///
/// // A message, streamed.
/// let request = RunRequest::new("ada", "s-1")
///     .message("What is the weather in Paris?")
///     .run_config(RunConfig::default().with_streaming_mode(StreamingMode::Sse));
/// # let _ = request;
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
    /// allows them (see [`Runner::check_client_state`](crate::Runner::check_client_state)).
    pub state_delta: Map<String, Value>,
    /// The invocation to resume (the runner must be resumable).
    pub invocation_id: Option<InvocationId>,
    /// The run's settings.
    pub run_config: RunConfig,
    /// Set on the runner's own requests that resume an invocation cut off by a crash, or that
    /// follow one: they neither look for another cut-off invocation nor need a resumable runner
    /// under an `LlmAgent` root.
    pub(crate) cut_off_handled: bool,
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

    /// The user's message (text is a user message: `.message("Hello")`).
    pub fn message(mut self, message: impl Into<Content>) -> Self {
        self.new_message = Some(message.into());
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
