//! [`AgentTool`]: an agent used as a tool by another agent's model.

mod forwarding_artifacts;

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Agent, AgentTree, Content, Error, ErrorKind, Event, FunctionDeclaration, IntoAgent,
    InvocationContext, Result, Services, Session, SessionKey, StateScope, USER_AUTHOR,
};
use adk_tool::{ArgumentValidator, Tool, ToolContext};
use async_trait::async_trait;
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::LlmAgent;
use forwarding_artifacts::ForwardingArtifacts;

/// The invocation-scoped state key under which an agent tool leaves the grounding metadata the
/// caller's next answers carry (ADK's key, so the two read each other's sessions alike).
pub(crate) const GROUNDING_METADATA_KEY: &str = "temp:_adk_grounding_metadata";

/// Wraps an agent as a tool: the calling model sends a request (or arguments following the
/// agent's input schema, checked against it before the agent runs), the agent runs on a session
/// of its own that starts from a copy of the caller's state, and its final answer (parsed JSON
/// when it has an output schema) is the result. State the agent changes and artifacts it saves
/// flow back to the caller: artifacts are saved in the caller's session.
///
/// The agent's invocation is nested in the caller's: it uses the caller's id generator and clock,
/// is cancelled with it, and draws on the same model-call budget
/// ([`RunConfig::max_llm_calls`](adk_core::RunConfig)), so agents that call agents cannot
/// multiply it.
///
/// ```
/// use adk_core::testing::ScriptedModel;
/// use adk_flow::{AgentTool, LlmAgent};
///
/// let summarizer = LlmAgent::builder("summarizer")
///     .description("Summarizes a text.")
///     .model(ScriptedModel::new("scripted"))
///     .build()
///     .unwrap();
/// let tool = AgentTool::new(summarizer).skip_summarization(true);
/// assert_eq!(adk_tool::Tool::name(&tool), "summarizer");
/// ```
pub struct AgentTool {
    agent: Arc<dyn Agent>,
    skip_summarization: bool,
    propagate_grounding_metadata: bool,
    /// The agent's input schema, compiled; `None` when it has none.
    input_validator: Option<std::result::Result<ArgumentValidator, adk_tool::ToolError>>,
}

impl AgentTool {
    /// A tool that runs `agent`.
    pub fn new(agent: impl IntoAgent) -> Self {
        let agent = agent.into_agent();
        let input_validator = agent
            .downcast_ref::<LlmAgent>()
            .and_then(LlmAgent::input_schema)
            .map(ArgumentValidator::new);
        Self {
            agent,
            skip_summarization: false,
            propagate_grounding_metadata: false,
            input_validator,
        }
    }

    /// Shows the agent's answer to the user as it is, without another model call.
    pub fn skip_summarization(mut self, skip: bool) -> Self {
        self.skip_summarization = skip;
        self
    }

    /// Puts the grounding metadata of the agent's last answer (Google Search's sources) on the
    /// caller's answers that follow in this invocation, as ADK does for a search agent used as a
    /// tool: the caller's model never sees the search, so its answer would carry no sources.
    pub fn propagate_grounding_metadata(mut self, propagate: bool) -> Self {
        self.propagate_grounding_metadata = propagate;
        self
    }

    fn llm_agent(&self) -> Option<&LlmAgent> {
        self.agent.downcast_ref::<LlmAgent>()
    }

    /// The message the agent receives: the `request` text, or the arguments as JSON when the agent
    /// has an input schema and they follow it.
    fn message(&self, args: &Value) -> Result<Content> {
        if let Some(validator) = &self.input_validator {
            let validator = validator.as_ref().map_err(|error| {
                Error::new(
                    ErrorKind::Config,
                    format!("agent '{}': {error}", self.agent.name()),
                )
            })?;
            validator
                .validate(self.agent.name(), args)
                .map_err(|error| Error::new(ErrorKind::InvalidInput, error.to_string()))?;
            return Ok(Content::user(args.to_string()));
        }
        let request = args.get("request").and_then(Value::as_str).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "call `{}` with a string argument `request`",
                    self.agent.name()
                ),
            )
        })?;
        Ok(Content::user(request))
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn name(&self) -> &str {
        self.agent.name()
    }

    fn description(&self) -> &str {
        self.agent.description()
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        let parameters = self
            .llm_agent()
            .and_then(LlmAgent::input_schema)
            .cloned()
            .unwrap_or_else(|| {
                json!({
                    "type": "object",
                    "properties": {"request": {"type": "string", "description": "what to ask the agent"}},
                    "required": ["request"],
                })
            });
        Some(FunctionDeclaration::new(self.name(), self.description()).with_parameters(parameters))
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        let message = self.message(&args)?;
        let parent = ctx.invocation();
        let child_ctx = child_invocation(parent, self.agent.clone(), message)?;
        let mut last_text = None;
        let mut last_grounding = None;
        let mut events = self.agent.clone().run(child_ctx.clone());
        while let Some(event) = events.next().await {
            let event = event?;
            if event.is_partial() {
                continue;
            }
            // The agent's state changes and the artifacts it saved in the caller's session (see
            // `ForwardingArtifacts`) are recorded in the caller's event.
            ctx.update_actions(|actions| {
                actions
                    .state_delta
                    .extend(event.actions.state_delta.clone());
                actions
                    .artifact_delta
                    .extend(event.actions.artifact_delta.clone());
            });
            if let Some(text) = event.text() {
                last_text = Some(text);
            }
            if let Some(grounding) = &event.response.grounding_metadata {
                last_grounding = Some(grounding.clone());
            }
            child_ctx.with_session_mut(|session| {
                let revision = session.revision + 1;
                session.apply_event(event, revision);
            });
        }
        if self.skip_summarization {
            ctx.skip_summarization();
        }
        if let Some(grounding) = last_grounding.filter(|_| self.propagate_grounding_metadata) {
            ctx.set_state(GROUNDING_METADATA_KEY, grounding)?;
        }
        let text = last_text.unwrap_or_default();
        if self.llm_agent().and_then(LlmAgent::output_schema).is_some() {
            return serde_json::from_str(&text).map_err(|error| {
                Error::new(
                    ErrorKind::Tool,
                    format!(
                        "agent '{}' did not answer in its output schema ({error}): {text}",
                        self.name()
                    ),
                )
            });
        }
        Ok(Value::String(text))
    }
}

/// An invocation of `agent`, nested in the caller's, on a fresh session of the same user,
/// starting from a copy of the caller's state; its artifacts go to the caller's session and it
/// shares the caller's memory service.
fn child_invocation(
    parent: &InvocationContext,
    agent: Arc<dyn Agent>,
    message: Content,
) -> Result<InvocationContext> {
    let key = parent.session_key();
    let mut session = Session::new(SessionKey::new(
        key.app_name.clone(),
        key.user_id.clone(),
        parent.ids().session_id(),
    ));
    session.state = parent.with_session(|caller| {
        caller
            .state
            .iter()
            .filter(|(key, _)| StateScope::of(key) != StateScope::Temp)
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    });
    // The message opens the child session, as the runner stores a user's message.
    let invocation_id = parent.ids().invocation_id();
    let message_event = Event::with_ids_and_clock(
        invocation_id.clone(),
        USER_AUTHOR,
        parent.ids(),
        parent.clock(),
    )
    .with_content(message.clone());
    session.apply_event(message_event, 1);
    let mut services = Services::default();
    services.ids = parent.services().ids.clone();
    services.clock = parent.services().clock.clone();
    services.memory_service = parent.memory_service().cloned();
    services.artifact_service = parent.artifact_service().map(|artifacts| {
        Arc::new(ForwardingArtifacts::new(artifacts.clone(), key.clone()))
            as Arc<dyn adk_core::ArtifactService>
    });
    InvocationContext::builder(agent.clone(), session)
        .nested_in(parent)
        .services(services)
        .invocation_id(invocation_id)
        .agent_tree(AgentTree::new(agent)?)
        .user_content(message)
        .build()
}
