//! [`ParallelWorker`]: runs a node once per item of a list input, concurrently, each item on a
//! branch of its own, and outputs the items' outputs in input order (ADK's `parallel_worker`).

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt as _};
use serde_json::Value;

use super::context::RunNodeOptions;
use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput};

/// The node behind [`Node::parallel`].
pub struct ParallelWorker {
    inner: Node,
    max_workers: Option<usize>,
}

impl ParallelWorker {
    /// `inner` run once per item, as a node of `inner`'s name.
    pub(crate) fn wrap(inner: Node, max_workers: Option<usize>) -> Node {
        let options = NodeOptions {
            rerun_on_resume: true,
            retry: inner.options().retry.clone(),
            timeout: inner.options().timeout,
            ..NodeOptions::default()
        };
        Node::from_parts(
            inner.name().to_owned(),
            options,
            Arc::new(Self { inner, max_workers }),
        )
    }

    /// The items of `input`: a list's elements, a message's JSON list, or the input alone.
    fn items(input: &NodeInput) -> Vec<Value> {
        match input.to_value() {
            Value::Array(items) => items,
            Value::Null if input.is_none() => vec![Value::Null],
            other => vec![other],
        }
    }
}

impl RunNode for ParallelWorker {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(async move {
            let items = Self::items(&input);
            let mut results = vec![Value::Null; items.len()];
            let mut items = items.into_iter().enumerate();
            let mut running = FuturesUnordered::new();
            let mut interrupted = None;
            let limit = self.max_workers.unwrap_or(usize::MAX);
            loop {
                while interrupted.is_none() && running.len() < limit {
                    let Some((index, item)) = items.next() else {
                        break;
                    };
                    let run = ctx.run_node_with(
                        &self.inner,
                        NodeInput::from(item),
                        RunNodeOptions::default().use_sub_branch(true),
                    );
                    running.push(async move { (index, run.await) });
                }
                let Some((index, result)) = running.next().await else {
                    break;
                };
                match result {
                    Ok(output) => results[index] = output,
                    Err(error) if error.is_interrupted() => {
                        interrupted.get_or_insert(error);
                    }
                    // Dropping the others cancels the items still running.
                    Err(error) => return Err(error),
                }
            }
            if let Some(interrupted) = interrupted {
                return Err(interrupted);
            }
            ctx.output(Value::Array(results)).await
        })
    }

    fn kind(&self) -> NodeKind {
        self.inner.kind()
    }

    fn children(&self) -> Vec<Node> {
        vec![self.inner.clone()]
    }

    fn as_agent(&self) -> Option<&Arc<dyn adk_core::Agent>> {
        self.inner.body().as_agent()
    }
}
