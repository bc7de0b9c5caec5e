//! [`EvalCase`]: one conversation to replay and what the agent should do in it, and the
//! [`SessionInput`] it starts from.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ConversationScenario, Invocation, Rubric, is_zero};
use crate::error::{EvalError, parse_json};

/// One eval case: a conversation to replay and what the agent should do in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalCase {
    /// The case's id, unique in its set.
    #[serde(alias = "evalId")]
    pub eval_id: String,
    /// The user's messages, one per invocation, with the expected answers and tool uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Vec<Invocation>>,
    /// A scenario for a simulated user, who makes up the conversation as it goes (see
    /// [`Evaluator::user_simulator`](crate::Evaluator::user_simulator)).
    #[serde(
        default,
        alias = "conversationScenario",
        skip_serializing_if = "Option::is_none"
    )]
    pub conversation_scenario: Option<ConversationScenario>,
    /// The session the case starts in.
    #[serde(
        default,
        alias = "sessionInput",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_input: Option<SessionInput>,
    /// When the case was made, in seconds since the Unix epoch.
    #[serde(default, alias = "creationTimestamp", skip_serializing_if = "is_zero")]
    pub creation_timestamp: f64,
    /// Rubrics for every invocation of the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubrics: Option<Vec<Rubric>>,
    /// The state expected at the end.
    #[serde(
        default,
        alias = "finalSessionState",
        skip_serializing_if = "is_empty_state"
    )]
    pub final_session_state: Option<Map<String, Value>>,
}

impl EvalCase {
    /// The rubrics of this case, then those of `expected` (one of its invocations), as ADK
    /// gathers them for an invocation.
    pub fn rubrics_with<'a>(
        &'a self,
        expected: Option<&'a Invocation>,
    ) -> impl Iterator<Item = &'a Rubric> + 'a {
        self.rubrics.iter().flatten().chain(
            expected
                .and_then(|invocation| invocation.rubrics.as_ref())
                .into_iter()
                .flatten(),
        )
    }

    /// A case `eval_id` of the invocations in `conversation`.
    pub fn new(eval_id: impl Into<String>, conversation: Vec<Invocation>) -> Self {
        Self {
            eval_id: eval_id.into(),
            conversation: Some(conversation),
            conversation_scenario: None,
            session_input: None,
            creation_timestamp: 0.0,
            rubrics: None,
            final_session_state: None,
        }
    }

    /// A case `eval_id` in which a simulated user follows `scenario`.
    pub fn simulated(eval_id: impl Into<String>, scenario: ConversationScenario) -> Self {
        Self {
            conversation: None,
            conversation_scenario: Some(scenario),
            ..Self::new(eval_id, Vec::new())
        }
    }

    /// Starts the case in a session with `input`.
    pub fn with_session_input(mut self, input: SessionInput) -> Self {
        self.session_input = Some(input);
        self
    }
}

/// The session an eval case starts in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionInput {
    /// The app name the session is created under.
    #[serde(alias = "appName")]
    pub app_name: String,
    /// The user the session belongs to.
    #[serde(alias = "userId")]
    pub user_id: String,
    /// A fixed session id; a fresh one when absent.
    #[serde(default, alias = "sessionId", skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The state the session starts with (scoped keys such as `user:last_city` included).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub state: Map<String, Value>,
}

impl SessionInput {
    /// A session of `user_id` in app `app_name` with no state.
    pub fn new(app_name: impl Into<String>, user_id: impl Into<String>) -> Self {
        Self {
            app_name: app_name.into(),
            user_id: user_id.into(),
            session_id: None,
            state: Map::new(),
        }
    }

    /// Sets the starting state.
    pub fn with_state(mut self, state: Map<String, Value>) -> Self {
        self.state = state;
        self
    }

    /// Reads a session input from JSON text, as ADK's `--session_input_file` holds it
    /// (`{"app_name": ..., "user_id": ..., "state": {...}}`); `source` names the text in errors.
    ///
    /// ```
    /// use adk_eval::SessionInput;
    ///
    /// let input = SessionInput::from_json(
    ///     r#"{"app_name": "weather", "user_id": "eval_user", "state": {"units": "metric"}}"#,
    ///     "session_input.json",
    /// )
    /// .unwrap();
    /// assert_eq!(input.user_id, "eval_user");
    /// assert_eq!(input.state["units"], "metric");
    /// ```
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed) naming `source` and the JSON
    /// path of the first problem.
    pub fn from_json(text: &str, source: &str) -> Result<Self, EvalError> {
        parse_json(text, source)
    }

    /// Reads the session input file at `path`.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Io`](crate::EvalErrorKind::Io) when the file cannot be read, or
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed) as
    /// [`from_json`](Self::from_json).
    pub async fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let (text, source) = crate::error::read_source(path.as_ref()).await?;
        Self::from_json(&text, &source)
    }
}

/// Whether a final state is absent or empty, so that it is left out when written.
fn is_empty_state(state: &Option<Map<String, Value>>) -> bool {
    state.as_ref().is_none_or(Map::is_empty)
}
