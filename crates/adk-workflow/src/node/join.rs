//! [`JoinNode`]: fires once every predecessor completed since it last fired, with their outputs
//! by name (fan-in).

use futures::future::BoxFuture;

use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput};

/// A node that waits for all its predecessors and outputs `{predecessor: output}`.
pub struct JoinNode;

impl RunNode for JoinNode {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(async move { ctx.output(input.to_value()).await })
    }

    fn kind(&self) -> NodeKind {
        NodeKind::Join
    }

    fn waits_for_all_predecessors(&self) -> bool {
        true
    }
}

impl Node {
    /// A join node named `name`: it runs once every node with an edge into it completed (since it
    /// last ran), and outputs their outputs as a map by node name.
    ///
    /// ```
    /// use adk_workflow::{Node, NodeError, START, Workflow};
    ///
    /// let a = Node::function("a", |x: String| async move { Ok::<_, NodeError>(x + "-A") });
    /// let b = Node::function("b", |x: String| async move { Ok::<_, NodeError>(x + "-B") });
    /// let workflow = Workflow::builder("fan").chain((START, [&a, &b], Node::join("join"))).build();
    /// assert!(workflow.is_ok());
    /// ```
    pub fn join(name: impl Into<String>) -> Self {
        Self::from_parts(
            name.into(),
            NodeOptions::default(),
            std::sync::Arc::new(JoinNode),
        )
    }
}
