//! Running an eval case: each user message of its conversation (or each message its simulated
//! user makes up) through the real runner, in a session of its own, and the events turned into the
//! [`Invocation`]s the metrics score, as ADK Python's eval does.
//!
//! Per invocation, the final answer is the content of the last final-response event; the events
//! kept in between are those with text, inline data or tool calls and responses (the final event
//! appears without its content unless it also calls tools).

use std::sync::Arc;
use std::time::Instant;

use adk_core::{
    Agent, ArtifactService, Content, CreateSessionRequest, Event, GetSessionRequest, IdGen, Llm,
    MemoryService, PartData, RunConfig, Session, SessionKey, SessionService, USER_AUTHOR,
    UuidIdGen,
};
use adk_runner::{RunRequest, Runner};
use futures::StreamExt as _;
use serde_json::Value;

use crate::error::{EvalError, EvalErrorKind};
use crate::eval_set::{
    ConversationScenario, EvalCase, IntermediateData, Invocation, InvocationEvent, InvocationEvents,
};
use crate::simulation::{NextMessage, SimulatedUser, UserSimulatorConfig};

/// The user id of a case whose session input names none, as ADK uses.
pub(crate) const DEFAULT_USER_ID: &str = "test_user_id";

/// What a case's run needs: the agent tree and where its sessions and artifacts live.
#[derive(Clone)]
pub(crate) struct Harness {
    pub(crate) root_agent: Arc<dyn Agent>,
    pub(crate) app_name: String,
    pub(crate) run_config: RunConfig,
    pub(crate) sessions: Arc<dyn SessionService>,
    /// What the ids of the sessions it makes start with.
    pub(crate) session_prefix: &'static str,
    pub(crate) artifacts: Arc<dyn ArtifactService>,
    pub(crate) memory: Arc<dyn MemoryService>,
    /// The model that plays the user of scenario cases, if any.
    pub(crate) user_simulator: Option<Arc<dyn Llm>>,
    pub(crate) user_simulator_config: UserSimulatorConfig,
}

/// A case's run: where it ran and what came of it.
pub(crate) struct Inference {
    pub(crate) session_id: String,
    pub(crate) user_id: String,
    /// The invocations, or why the run failed.
    pub(crate) invocations: Result<Vec<Invocation>, EvalError>,
    /// The session as the run left it.
    pub(crate) session: Option<Session>,
}

impl Harness {
    /// Runs `case`'s conversation; a failure is kept in the result, not returned, so that the
    /// other cases still run.
    pub(crate) async fn run(&self, case: &EvalCase) -> Inference {
        let input = case.session_input.as_ref();
        let app_name = input
            .map(|input| input.app_name.clone())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| self.app_name.clone());
        let user_id = input
            .map(|input| input.user_id.clone())
            .filter(|user| !user.is_empty())
            .unwrap_or_else(|| DEFAULT_USER_ID.to_owned());
        let session_id = input
            .and_then(|input| input.session_id.clone())
            .unwrap_or_else(|| format!("{}{}", self.session_prefix, UuidIdGen.new_uuid()));
        let key = SessionKey::new(app_name.clone(), user_id.clone(), session_id.clone());
        let invocations = self.converse(case, &key).await;
        let session = self
            .sessions
            .get_session(GetSessionRequest::new(key))
            .await
            .ok()
            .flatten();
        Inference {
            session_id,
            user_id,
            invocations,
            session,
        }
    }

    async fn converse(
        &self,
        case: &EvalCase,
        key: &SessionKey,
    ) -> Result<Vec<Invocation>, EvalError> {
        self.open_session(case, key).await?;
        let runner = Runner::builder(
            key.app_name.clone(),
            self.root_agent.clone(),
            self.sessions.clone(),
        )
        .artifact_service(self.artifacts.clone())
        .memory_service(self.memory.clone())
        .build()
        .map_err(|error| run_error(case, "cannot set up the runner", error))?;
        let mut invocations = match (&case.conversation, &case.conversation_scenario) {
            (Some(conversation), _) => {
                let mut invocations = Vec::with_capacity(conversation.len());
                for expected in conversation {
                    let (invocation, _) = self
                        .turn(&runner, case, key, expected.user_content.clone())
                        .await?;
                    invocations.push(invocation);
                }
                invocations
            }
            (None, Some(scenario)) => self.simulate(&runner, case, key, scenario).await?,
            (None, None) => {
                return Err(EvalError::config(format!(
                    "eval case `{}` has neither a conversation nor a conversation scenario",
                    case.eval_id
                )));
            }
        };
        let session = self
            .sessions
            .get_session(GetSessionRequest::new(key.clone()))
            .await
            .map_err(|error| run_error(case, "cannot read the session back", error))?;
        if let Some(session) = session {
            stamp_with_user_events(&mut invocations, &session.events);
        }
        Ok(invocations)
    }

    /// A conversation made up as it goes by the simulated user of `scenario`, until it ends the
    /// conversation or reaches its limit of messages.
    async fn simulate(
        &self,
        runner: &Runner,
        case: &EvalCase,
        key: &SessionKey,
        scenario: &ConversationScenario,
    ) -> Result<Vec<Invocation>, EvalError> {
        let llm = self.user_simulator.as_ref().ok_or_else(|| {
            EvalError::config(format!(
                "eval case `{}` has a conversation scenario, which needs a model to play the user: \
                 give the evaluator one with Evaluator::user_simulator",
                case.eval_id
            ))
        })?;
        let mut user = SimulatedUser::new(llm, &self.user_simulator_config, scenario);
        let mut conversation: Vec<Event> = Vec::new();
        let mut invocations = Vec::new();
        while let NextMessage::Say(text) = user.next(&conversation).await? {
            let message = Content::user(text);
            let (invocation, events) = self.turn(runner, case, key, message.clone()).await?;
            let mut said = Event::new(
                events
                    .first()
                    .map(|e| e.invocation_id.clone())
                    .unwrap_or_default(),
                USER_AUTHOR,
            );
            said.response.content = Some(message);
            conversation.push(said);
            conversation.extend(events.into_iter().filter(|e| e.author != USER_AUTHOR));
            invocations.push(invocation);
        }
        Ok(invocations)
    }

    /// One invocation of the agent on `message`: what it did, and its events.
    async fn turn(
        &self,
        runner: &Runner,
        case: &EvalCase,
        key: &SessionKey,
        message: Content,
    ) -> Result<(Invocation, Vec<Event>), EvalError> {
        let started = Instant::now();
        let mut events = Vec::new();
        let mut stream = Box::pin(
            runner.run_request(
                RunRequest::new(key.user_id.clone(), key.session_id.clone())
                    .message(message.clone())
                    .run_config(self.run_config.clone()),
            ),
        );
        while let Some(event) = stream.next().await {
            let event = event.map_err(|error| run_error(case, "the agent failed", error))?;
            if !event.is_partial() {
                events.push(event);
            }
        }
        let mut invocation = invocation_of(message, &events);
        // Milliseconds, as ADK rounds it: finer digits would claim a precision the clock of a
        // busy machine does not have.
        invocation.duration = Some((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0);
        Ok((invocation, events))
    }

    /// Creates the case's session with its starting state, or reuses the session its pinned id
    /// names.
    async fn open_session(&self, case: &EvalCase, key: &SessionKey) -> Result<(), EvalError> {
        let existing = self
            .sessions
            .get_session(GetSessionRequest::new(key.clone()).recent(0))
            .await
            .map_err(|error| run_error(case, "cannot look the session up", error))?;
        if existing.is_some() {
            return Ok(());
        }
        let state = case
            .session_input
            .as_ref()
            .map(|input| input.state.clone())
            .unwrap_or_default();
        self.sessions
            .create_session(
                CreateSessionRequest::new(key.app_name.clone(), key.user_id.clone())
                    .with_session_id(key.session_id.clone())
                    .with_state(state),
            )
            .await
            .map_err(|error| run_error(case, "cannot create the session", error))?;
        Ok(())
    }
}

fn run_error(case: &EvalCase, what: &str, error: adk_core::Error) -> EvalError {
    EvalError::with_source(
        EvalErrorKind::Run,
        format!("eval case `{}`: {what}: {error}", case.eval_id),
        error,
    )
}

/// The invocation the agent's `events` make after the user said `user_content`.
pub(crate) fn invocation_of(user_content: Content, events: &[Event]) -> Invocation {
    let mut invocation = Invocation::new(user_content);
    invocation.invocation_id = events
        .first()
        .map(|event| event.invocation_id.to_string())
        .unwrap_or_default();
    let mut final_index = None;
    let mut kept = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if event.author == USER_AUTHOR {
            continue;
        }
        let Some(content) = event.content().filter(|content| !content.parts.is_empty()) else {
            if event.response.grounding_metadata.is_some() {
                kept.push(index);
            }
            continue;
        };
        if event.is_final_response() {
            // A final event with text wins over an earlier one; one without text does not
            // replace an answer that had text.
            let has_text =
                |content: &Content| content.parts.iter().any(|part| part.as_text().is_some());
            let current_has_text = final_index
                .map(|i: usize| events[i].content().is_some_and(has_text))
                .unwrap_or(false);
            if !current_has_text || has_text(content) {
                final_index = Some(index);
            }
        }
        let worth_keeping = event.response.grounding_metadata.is_some()
            || content.parts.iter().any(|part| {
                matches!(
                    part.data,
                    PartData::FunctionCall(_)
                        | PartData::FunctionResponse(_)
                        | PartData::Text(_)
                        | PartData::InlineData(_)
                )
            });
        if worth_keeping {
            kept.push(index);
        }
    }
    invocation.final_response = final_index.and_then(|index| events[index].content().cloned());
    let invocation_events = kept
        .into_iter()
        .map(|index| {
            let event = &events[index];
            let content = if Some(index) == final_index && event.function_calls().next().is_none() {
                None
            } else {
                event.content().cloned()
            };
            let mut projected = InvocationEvent::new(event.author.clone(), content);
            projected.grounding_metadata = event.response.grounding_metadata.clone();
            projected.usage_metadata = event
                .response
                .usage_metadata
                .as_ref()
                .and_then(|usage| serde_json::to_value(usage).ok())
                .filter(|usage| usage != &Value::Object(Default::default()));
            projected.model_version = event.response.model_version.clone();
            projected
        })
        .collect();
    invocation.intermediate_data = Some(IntermediateData::Events(InvocationEvents {
        invocation_events,
    }));
    invocation
}

/// The invocations of a stored session's `events`, one per invocation id in the order they
/// began: the user's message, the agent's final answer and the events in between, kept as an eval
/// run keeps them, each stamped with its user event's time. This is how ADK turns a session into
/// an eval case's conversation (the dev UI's "add the current session").
///
/// ```
/// use adk_core::{Content, Event, InvocationId};
///
/// let invocation = InvocationId::from("e-1");
/// let mut asked = Event::new(invocation.clone(), "user");
/// asked.response.content = Some(Content::user("Weather in Paris?"));
/// let mut answered = Event::new(invocation, "weather");
/// answered.response.content = Some(Content::model("Sunny."));
/// let conversation = adk_eval::session_invocations(&[asked, answered]);
/// assert_eq!(conversation.len(), 1);
/// assert_eq!(conversation[0].user_text(), "Weather in Paris?");
/// assert_eq!(conversation[0].final_text(), "Sunny.");
/// ```
pub fn session_invocations(events: &[Event]) -> Vec<Invocation> {
    let mut order: Vec<&str> = Vec::new();
    for event in events {
        if !order.contains(&event.invocation_id.as_ref()) {
            order.push(event.invocation_id.as_ref());
        }
    }
    let mut invocations: Vec<Invocation> = order
        .into_iter()
        .map(|id| {
            let own: Vec<Event> = events
                .iter()
                .filter(|event| event.invocation_id.as_ref() == id)
                .cloned()
                .collect();
            let user_content = own
                .iter()
                .find(|event| event.author == USER_AUTHOR)
                .and_then(|event| event.content().cloned())
                .unwrap_or_else(|| Content::user(""));
            let mut invocation = invocation_of(user_content, &own);
            invocation.invocation_id = id.to_owned();
            invocation
        })
        .collect();
    stamp_with_user_events(&mut invocations, events);
    invocations
}

/// Gives each invocation the timestamp of its user event in the stored session.
fn stamp_with_user_events(invocations: &mut [Invocation], events: &[Event]) {
    for invocation in invocations {
        if let Some(user_event) = events.iter().find(|event| {
            event.author == USER_AUTHOR && event.invocation_id.as_ref() == invocation.invocation_id
        }) {
            invocation.creation_timestamp = user_event.timestamp;
        }
    }
}

#[cfg(test)]
mod tests {
    use adk_core::{FunctionCall, FunctionResponse, InvocationId, Part, Role};
    use serde_json::json;

    use super::*;

    fn event(author: &str, content: Content) -> Event {
        Event::new(InvocationId::from("e-1"), author).with_content(content)
    }

    #[test]
    fn events_become_an_invocation_as_adk_projects_them() {
        let events = [
            event(
                "agent",
                Content::new(
                    Role::Model,
                    [Part::function_call(FunctionCall::new(
                        "get_weather",
                        json!({"city": "Paris"}),
                    ))],
                ),
            ),
            event(
                "agent",
                Content::new(
                    Role::User,
                    [Part::function_response(FunctionResponse::new(
                        "get_weather",
                        json!({"sky": "sunny"}),
                    ))],
                ),
            ),
            event("agent", Content::model("It is sunny in Paris.")),
        ];
        let invocation = invocation_of(Content::user("Weather in Paris?"), &events);
        assert_eq!(invocation.invocation_id, "e-1");
        assert_eq!(invocation.final_text(), "It is sunny in Paris.");
        assert_eq!(invocation.tool_calls()[0].args["city"], "Paris");
        assert_eq!(invocation.tool_responses()[0].response["sky"], "sunny");
        let Some(IntermediateData::Events(projected)) = &invocation.intermediate_data else {
            panic!("events expected");
        };
        assert_eq!(projected.invocation_events.len(), 3);
        assert!(
            projected.invocation_events[2].content.is_none(),
            "the final answer is not repeated"
        );
    }
}
