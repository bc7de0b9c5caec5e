//! [`AgentTool`]: an agent used as a tool by another agent's model.

use std::sync::Arc;

use adk_core::{
    Agent, AgentTree, Content, Error, ErrorKind, Event, FunctionDeclaration, InvocationContext,
    Result, Session, SessionKey, StateScope, USER_AUTHOR,
};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::LlmAgent;

/// Wraps an agent as a tool: the calling model sends a request (or arguments following the
/// agent's input schema), the agent runs on a session of its own that starts from a copy of the
/// caller's state, and its final answer (parsed JSON when it has an output schema) is the result.
/// State the agent changes flows back to the caller.
///
/// ```
/// use std::sync::Arc;
/// use adk_flow::{AgentTool, LlmAgent};
/// use adk_test::ScriptedModel;
///
/// let summarizer = LlmAgent::builder("summarizer")
///     .description("Summarizes a text.")
///     .model(Arc::new(ScriptedModel::new("scripted")))
///     .build()
///     .unwrap();
/// let tool = AgentTool::new(Arc::new(summarizer)).skip_summarization(true);
/// assert_eq!(adk_tool::Tool::name(&tool), "summarizer");
/// ```
pub struct AgentTool {
    agent: Arc<dyn Agent>,
    skip_summarization: bool,
}

impl AgentTool {
    /// A tool that runs `agent`.
    pub fn new(agent: Arc<dyn Agent>) -> Self {
        Self {
            agent,
            skip_summarization: false,
        }
    }

    /// Shows the agent's answer to the user as it is, without another model call.
    pub fn skip_summarization(mut self, skip: bool) -> Self {
        self.skip_summarization = skip;
        self
    }

    fn llm_agent(&self) -> Option<&LlmAgent> {
        self.agent.downcast_ref::<LlmAgent>()
    }

    /// The message the agent receives: the `request` text, or the arguments as JSON when the agent
    /// has an input schema.
    fn message(&self, args: &Value) -> Result<Content> {
        if self.llm_agent().and_then(LlmAgent::input_schema).is_some() {
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

    async fn run(&self, ctx: Arc<dyn ToolContext>, args: Value) -> Result<Value> {
        let message = self.message(&args)?;
        let parent = ctx.callback_context().invocation();
        let child_ctx = child_invocation(parent, self.agent.clone(), message)?;
        let mut last_text = None;
        let mut events = self.agent.clone().run(child_ctx.clone());
        while let Some(event) = events.next().await {
            let event = event?;
            if event.is_partial() {
                continue;
            }
            for (key, value) in &event.actions.state_delta {
                ctx.set_state(key, value.clone());
            }
            if let Some(text) = event.text() {
                last_text = Some(text);
            }
            let mut session = child_ctx.session_mut();
            let revision = session.revision + 1;
            session.apply_event(event, revision);
        }
        if self.skip_summarization {
            ctx.skip_summarization();
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

/// An invocation of `agent` on a fresh session of the same user, starting from a copy of the
/// caller's state and sharing its artifact and memory services.
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
    session.state = parent
        .session()
        .state
        .iter()
        .filter(|(key, _)| StateScope::of(key) != StateScope::Temp)
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    // The message opens the child session, as the runner stores a user's message.
    let invocation_id = parent.ids().invocation_id();
    let message_event = Event::with_seams(
        invocation_id.clone(),
        USER_AUTHOR,
        parent.ids(),
        parent.clock(),
    )
    .with_content(message.clone());
    session.apply_event(message_event, 1);
    let mut builder = InvocationContext::builder(agent.clone(), session)
        .invocation_id(invocation_id)
        .agent_tree(AgentTree::new(agent)?)
        .user_content(message)
        .run_config(parent.run_config().clone())
        .cancellation(parent.cancellation().child_token());
    if let Some(artifacts) = parent.artifact_service() {
        builder = builder.artifact_service(artifacts.clone());
    }
    if let Some(memory) = parent.memory_service() {
        builder = builder.memory_service(memory.clone());
    }
    builder.build()
}
