//! [`AgentNode`]: an agent run as a workflow node. An `LlmAgent` is a single-turn agent there
//! unless it was given another mode: it answers the node's input once (seeing only that input),
//! and its final text is the node's output.

use std::sync::Arc;

use adk_core::Agent;
use adk_flow::task::run_single_turn;
use adk_flow::{AgentMode, LlmAgent};
use futures::StreamExt as _;
use futures::future::BoxFuture;

use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput};

/// The node behind [`Node::agent`].
pub struct AgentNode {
    /// The agent as given (what the graph shows).
    agent: Arc<dyn Agent>,
    /// The agent as it runs: an `LlmAgent` in its node mode.
    runs: Arc<dyn Agent>,
    /// The same, when it runs as a single-turn agent.
    single_turn: Option<Arc<LlmAgent>>,
    mode: Option<AgentMode>,
}

impl AgentNode {
    /// `agent` as a node named after it.
    pub(crate) fn wrap(agent: Arc<dyn Agent>) -> Node {
        let (runs, single_turn, mode): (Arc<dyn Agent>, _, _) =
            match agent.downcast_ref::<LlmAgent>() {
                Some(llm) => {
                    let mode = llm.mode().unwrap_or(AgentMode::SingleTurn);
                    let copy = Arc::new(llm.in_mode(mode));
                    let single_turn = (mode == AgentMode::SingleTurn).then(|| copy.clone());
                    (copy, single_turn, Some(mode))
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
                single_turn,
                mode,
            }),
        )
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
            let mut events = match &self.single_turn {
                // A node resumed with the user's answers sees them as its latest turn instead.
                Some(agent) => run_single_turn(
                    agent.clone(),
                    invocation,
                    input
                        .to_user_content()
                        .filter(|_| ctx.resume_inputs().is_empty()),
                ),
                None => self.runs.clone().run(invocation),
            };
            while let Some(event) = events.next().await {
                ctx.emit(event.map_err(NodeError::from_core)?).await?;
            }
            Ok(())
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

impl Node {
    /// `agent` as a node named after it. An `LlmAgent` runs as a single-turn agent unless it was
    /// given another mode: its request holds only the node's input, and its final answer is the
    /// node's output.
    pub fn agent(agent: impl adk_core::IntoAgent) -> Self {
        AgentNode::wrap(agent.into_agent())
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
