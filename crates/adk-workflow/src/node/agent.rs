//! [`AgentNode`]: an agent run as a workflow node. An `LlmAgent` is a single-turn agent there
//! unless it was given another mode: it answers the node's input once (seeing only that input),
//! and its final text is the node's output.

use std::sync::Arc;

use adk_core::{Agent, Event, EventId, Role, USER_AUTHOR};
use adk_flow::{AgentMode, LlmAgent};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use serde_json::Value;

use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput};

/// The node behind [`Node::agent`].
pub struct AgentNode {
    /// The agent as given (what the graph shows).
    agent: Arc<dyn Agent>,
    /// The agent as it runs: an `LlmAgent` in its node mode.
    runs: Arc<dyn Agent>,
    mode: Option<AgentMode>,
    output_schema: Option<Value>,
}

impl AgentNode {
    /// `agent` as a node named after it.
    pub(crate) fn wrap(agent: Arc<dyn Agent>) -> Node {
        let (runs, mode, output_schema): (Arc<dyn Agent>, _, _) =
            match agent.downcast_ref::<LlmAgent>() {
                Some(llm) => {
                    let mode = llm.mode().unwrap_or(AgentMode::SingleTurn);
                    (
                        Arc::new(llm.in_mode(mode)),
                        Some(mode),
                        llm.output_schema().cloned(),
                    )
                }
                None => (agent.clone(), None, None),
            };
        let options = NodeOptions {
            rerun_on_resume: true,
            wait_for_output: matches!(mode, Some(AgentMode::Chat | AgentMode::Task)),
            ..NodeOptions::default()
        };
        Node::from_parts(
            agent.name().to_owned(),
            options,
            Arc::new(Self {
                agent,
                runs,
                mode,
                output_schema,
            }),
        )
    }

    /// The output an agent's event carries: a single-turn agent's final model text (parsed JSON
    /// with an output schema), which is also shown as the node's output message.
    fn mark_output(&self, event: &mut Event) {
        if self.mode != Some(AgentMode::SingleTurn)
            || event.function_calls().next().is_some()
            || event.is_partial()
            || event
                .content()
                .is_none_or(|content| content.role != Some(Role::Model))
        {
            return;
        }
        let text = event.text().unwrap_or_default();
        match &self.output_schema {
            Some(_) => {
                if !text.trim().is_empty() {
                    event.output = Some(serde_json::from_str(&text).unwrap_or(Value::String(text)));
                }
            }
            None => {
                event.output = Some(Value::String(text));
                event.node_info.message_as_output = Some(true);
            }
        }
    }
}

impl RunNode for AgentNode {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(async move {
            let invocation = ctx.invocation().with_agent(self.runs.clone());
            // A single-turn agent's request holds its input as the user's message: it goes into
            // the invocation's copy of the session for this run only (it is not stored), unless
            // the node resumes with the user's answers, which are the latest turn then.
            let injected = match input.to_user_content() {
                Some(content)
                    if self.mode == Some(AgentMode::SingleTurn)
                        && ctx.resume_inputs().is_empty() =>
                {
                    let mut event = Event::with_seams(
                        invocation.invocation_id().clone(),
                        USER_AUTHOR,
                        invocation.ids(),
                        invocation.clock(),
                    )
                    .with_content(content)
                    .with_branch(invocation.branch().map(str::to_owned));
                    event.node_info.path = invocation.node_path().clone();
                    event.isolation_scope = invocation.isolation_scope().cloned();
                    let id = event.id.clone();
                    invocation.session_mut().events.push(event);
                    Some(id)
                }
                _ => None,
            };
            let result = async {
                let mut events = self.runs.clone().run(invocation.clone());
                while let Some(event) = events.next().await {
                    let mut event = event.map_err(NodeError::from_core)?;
                    self.mark_output(&mut event);
                    ctx.emit(event).await?;
                }
                Ok(())
            }
            .await;
            if let Some(id) = injected {
                remove_event(&invocation, &id);
            }
            result
        })
    }

    fn kind(&self) -> NodeKind {
        NodeKind::Agent
    }

    fn agent_mode(&self) -> Option<AgentMode> {
        self.mode
    }

    fn as_agent(&self) -> Option<&Arc<dyn Agent>> {
        Some(&self.agent)
    }

    fn identity(&self) -> Option<usize> {
        Some(Arc::as_ptr(&self.agent).cast::<()>() as usize)
    }
}

/// Takes the event `id` out of the invocation's copy of the session.
fn remove_event(invocation: &adk_core::InvocationContext, id: &EventId) {
    let mut session = invocation.session_mut();
    if let Some(index) = session.events.iter().rposition(|event| &event.id == id) {
        session.events.remove(index);
    }
}

impl Node {
    /// `agent` as a node named after it. An `LlmAgent` runs as a single-turn agent unless it was
    /// given another mode: its request holds only the node's input, and its final answer is the
    /// node's output.
    pub fn agent(agent: Arc<dyn Agent>) -> Self {
        AgentNode::wrap(agent)
    }
}

impl From<LlmAgent> for Node {
    fn from(agent: LlmAgent) -> Self {
        AgentNode::wrap(Arc::new(agent))
    }
}

impl From<Arc<LlmAgent>> for Node {
    fn from(agent: Arc<LlmAgent>) -> Self {
        AgentNode::wrap(agent)
    }
}
