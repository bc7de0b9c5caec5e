//! The node paths of agent runs (`coordinator@1/helper@1`): the run ids counted per parent path
//! and name in an invocation, the path of an agent run from its place in the tree, and the path of
//! the agent a transfer hands over to.
//!
//! Paths are kept only where the invocation has one: under the deprecated sequential, parallel
//! and loop agents every path stays empty, as in ADK.

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Agent, AgentTree, InvocationContext, NodePath};
use parking_lot::Mutex;

/// The runs so far of each name under each parent path, in this invocation.
#[derive(Default)]
struct RunCounters(Mutex<HashMap<(NodePath, String), u32>>);

/// The next run id (`1`, `2`, ...) of `name` under `parent` in the invocation of `ctx`.
pub fn next_run_id(ctx: &InvocationContext, parent: &NodePath, name: &str) -> String {
    let counters = ctx.invocation_data::<RunCounters>();
    let mut counters = counters.0.lock();
    let count = counters
        .entry((parent.clone(), name.to_owned()))
        .or_insert(0);
    *count += 1;
    count.to_string()
}

/// The path of a run of `agent` that starts a turn: each ancestor's segment and the agent's own,
/// all first runs (`coordinator@1/helper@1`), as ADK places an agent that keeps the conversation.
/// The run ids are counted, so a transfer back to an ancestor gets the next one.
pub fn agent_path(ctx: &InvocationContext, tree: &AgentTree, agent: &dyn Agent) -> NodePath {
    let mut chain = vec![agent.name()];
    let mut current = agent.name();
    while let Some(parent) = tree.parent_of(current) {
        chain.push(parent.name());
        current = parent.name();
    }
    let mut path = NodePath::default();
    for name in chain.into_iter().rev() {
        let run_id = next_run_id(ctx, &path, name);
        path = path.child(name, &run_id);
    }
    path
}

/// The path of `target` when the agent of `ctx` transfers to it: below the current run for a
/// sub-agent, below the parent's run for a peer, and as a new run of the parent beside its
/// earlier one for the parent. Empty when the current run has no path.
pub(crate) fn transfer_path(ctx: &InvocationContext, target: &Arc<dyn Agent>) -> NodePath {
    let current = ctx.node_path();
    if current.is_empty() {
        return NodePath::default();
    }
    let tree = ctx.agent_tree();
    let name = target.name();
    let parent_path = if tree
        .parent_of(name)
        .is_some_and(|parent| parent.name() == ctx.agent_name())
    {
        current.clone()
    } else if tree
        .parent_of(ctx.agent_name())
        .is_some_and(|parent| parent.name() == name)
    {
        // Up to the run of the parent, then beside it.
        let mut path = current.clone();
        while !path.is_empty() && path.name() != name {
            path = path.parent();
        }
        path.parent()
    } else {
        current.parent()
    };
    let run_id = next_run_id(ctx, &parent_path, name);
    parent_path.child(name, &run_id)
}
