//! Running an agent the way the runner does, without a session service, and rendering the events
//! as a compact log that tests compare with an expected literal.

use std::fmt::Write as _;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Content, Error, Event, IntoAgent, InvocationContext, PartData, RunConfig, Services, Session,
    SessionKey, USER_AUTHOR,
};
use futures::StreamExt as _;

use crate::{SequentialIds, StepClock};

/// What a test run produced: every event yielded, the session after it, and the error that ended
/// it, if one did.
#[derive(Debug)]
pub struct AgentRun {
    /// The events the agent yielded, partial ones included, in order.
    pub events: Vec<Event>,
    /// The session with the user's message and every non-partial event applied.
    pub session: Session,
    /// The error the run ended with.
    pub error: Option<Error>,
}

impl AgentRun {
    /// Runs `agent` on a fresh session with `message`, with deterministic ids and clock.
    pub async fn new(agent: impl IntoAgent, message: &str) -> Self {
        let session = Session::new(SessionKey::new("test_app", "test_user", "test_session"));
        Self::on_session(agent, session, Content::user(message), RunConfig::default()).await
    }

    /// Runs `agent` on `session` with `message` and `config`, appending the user's message and
    /// every non-partial event to the session as they come, as the runner does.
    pub async fn on_session(
        agent: impl IntoAgent,
        mut session: Session,
        message: Content,
        config: RunConfig,
    ) -> Self {
        let agent = agent.into_agent();
        let ids = Arc::new(SequentialIds::default());
        let clock = Arc::new(StepClock::default());
        let invocation_id = adk_core::IdGen::invocation_id(ids.as_ref());
        let mut services = Services::default();
        services.ids = ids.clone();
        services.clock = clock.clone();
        let user_event = Event::with_ids_and_clock(
            invocation_id.clone(),
            USER_AUTHOR,
            ids.as_ref(),
            clock.as_ref(),
        )
        .with_content(message.clone());
        let revision = session.revision + 1;
        session.apply_event(user_event, revision);
        let ctx = match InvocationContext::builder(agent.clone(), session)
            .invocation_id(invocation_id)
            .user_content(message)
            .run_config(config)
            .services(services)
            .build()
        {
            Ok(ctx) => ctx,
            Err(error) => {
                return Self {
                    events: Vec::new(),
                    session: Session::default(),
                    error: Some(error),
                };
            }
        };
        let mut events = Vec::new();
        let mut error = None;
        let mut stream = agent.run(ctx.clone());
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    if !event.is_partial() {
                        ctx.with_session_mut(|session| {
                            let revision = session.revision + 1;
                            session.apply_event(event.clone(), revision);
                        });
                    }
                    events.push(event);
                }
                Err(failure) => {
                    error = Some(failure);
                    break;
                }
            }
        }
        drop(stream);
        let session = ctx.with_session(Session::clone);
        Self {
            events,
            session,
            error,
        }
    }

    /// The events as a log, one line per event, followed by the error if there was one.
    pub fn render(&self) -> String {
        let mut log = render_events(&self.events);
        if let Some(error) = &self.error {
            let _ = writeln!(log, "error: {error}");
        }
        log
    }
}

/// Renders events one per line: `author[@branch]: parts [actions]`.
///
/// Text is quoted, function calls read `call name {args}`, responses `response name {result}`;
/// partial events are marked `(partial)`, and the actions that change state or the flow are listed
/// in brackets.
pub fn render_events(events: &[Event]) -> String {
    let mut log = String::new();
    for event in events {
        let _ = write!(log, "{}", event.author);
        if let Some(branch) = &event.branch {
            let _ = write!(log, "@{branch}");
        }
        log.push(':');
        if event.is_partial() {
            log.push_str(" (partial)");
        }
        for part in event
            .content()
            .map(|content| content.parts.as_slice())
            .unwrap_or_default()
        {
            log.push(' ');
            if part.thought {
                log.push_str("thought ");
            }
            match &part.data {
                PartData::Text(text) => {
                    let _ = write!(log, "{text:?}");
                }
                PartData::FunctionCall(call) => {
                    let _ = write!(
                        log,
                        "call {} {}",
                        call.name,
                        serde_json::Value::Object(call.args.clone())
                    );
                }
                PartData::FunctionResponse(response) => {
                    let _ = write!(
                        log,
                        "response {} {}",
                        response.name,
                        serde_json::Value::Object(response.response.clone())
                    );
                }
                PartData::ExecutableCode(code) => {
                    let _ = write!(log, "code {:?}", code.code);
                }
                PartData::CodeExecutionResult(result) => {
                    let _ = write!(
                        log,
                        "result {:?}",
                        result.output.as_deref().unwrap_or_default()
                    );
                }
                other => {
                    let _ = write!(log, "{other:?}");
                }
            }
        }
        if let Some(code) = &event.response.error_code {
            let _ = write!(log, " error {code}");
        }
        render_actions(&mut log, event);
        log.push('\n');
    }
    log
}

fn render_actions(log: &mut String, event: &Event) {
    let actions = &event.actions;
    let mut notes = Vec::new();
    for (key, value) in &actions.state_delta {
        notes.push(format!("{key}={value}"));
    }
    for (name, version) in &actions.artifact_delta {
        notes.push(format!("artifact {name} v{version}"));
    }
    if let Some(agent) = &actions.transfer_to_agent {
        notes.push(format!("transfer {agent}"));
    }
    if actions.escalate == Some(true) {
        notes.push("escalate".to_owned());
    }
    if actions.skip_summarization == Some(true) {
        notes.push("skip summarization".to_owned());
    }
    if let Some(ids) = event
        .long_running_tool_ids
        .as_ref()
        .filter(|ids| !ids.is_empty())
    {
        notes.push(format!("long-running {}", ids.len()));
    }
    for (id, confirmation) in &actions.requested_tool_confirmations {
        notes.push(format!("confirm {id} {:?}", confirmation.hint));
    }
    if let Some(state) = &actions.agent_state {
        notes.push(format!("agent state {state}"));
    }
    if actions.end_of_agent == Some(true) {
        notes.push("end of agent".to_owned());
    }
    if let Some(invocation_id) = &actions.rewind_before_invocation_id {
        notes.push(format!("rewind before {invocation_id}"));
    }
    if !notes.is_empty() {
        let _ = write!(log, " [{}]", notes.join(", "));
    }
}
