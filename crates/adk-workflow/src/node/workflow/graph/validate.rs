//! The rules a workflow graph follows (ADK's graph validation), each broken rule a
//! [`WorkflowError`] of kind `Graph` that says which node or edge breaks it.

use std::collections::{HashMap, HashSet};

use adk_core::{Route, RouteValue};
use adk_flow::AgentMode;

use super::{Edge, is_default_value};
use crate::{Node, WorkflowError};

/// Checks `nodes` (`START` first when present) and `edges`.
pub(super) fn check(nodes: &[Node], edges: &[Edge]) -> Result<(), WorkflowError> {
    names(nodes)?;
    if !nodes.first().is_some_and(Node::is_start) {
        return Err(WorkflowError::graph(
            "the graph has no START node; begin a chain with START",
        ));
    }
    for edge in edges {
        if edge.from.is_start() && edge.route.is_some() {
            return Err(WorkflowError::graph(format!(
                "the edge from START to '{}' has a route; edges from START must not have routes",
                edge.to.name()
            )));
        }
        if edge.to.is_start() {
            return Err(WorkflowError::graph(format!(
                "node '{}' has an edge into START; START must not have incoming edges",
                edge.from.name()
            )));
        }
        if let Some(Route::Many(values)) = &edge.route
            && values.iter().any(is_default_value)
        {
            return Err(WorkflowError::graph(format!(
                "the edge from '{}' to '{}' lists the default route among others; give the default route an edge of its own",
                edge.from.name(),
                edge.to.name()
            )));
        }
    }
    reachability(nodes, edges)?;
    duplicate_edges(edges)?;
    unconditional_cycles(nodes, edges)?;
    for edge in edges {
        let (from, to) = (edge.from.options(), edge.to.options());
        if let (Some(output), Some(input)) = (&from.output_schema, &to.input_schema)
            && output != input
        {
            return Err(WorkflowError::graph(format!(
                "the output schema of '{}' ({output}) is not the input schema of '{}' ({input})",
                edge.from.name(),
                edge.to.name()
            )));
        }
        if edge.to.body().agent_mode() == Some(AgentMode::Chat) && !edge.from.is_start() {
            return Err(WorkflowError::graph(format!(
                "agent '{}' is a chat agent placed after node '{}': a chat agent reads the conversation, not a node's output, so it may only follow START; make it a single-turn agent",
                edge.to.name(),
                edge.from.name()
            )));
        }
    }
    Ok(())
}

/// Names are identifiers, and two different nodes do not share one.
fn names(nodes: &[Node]) -> Result<(), WorkflowError> {
    let mut seen: HashMap<&str, &Node> = HashMap::new();
    let mut duplicates = Vec::new();
    for node in nodes {
        if !node.is_start() && !is_identifier(node.name()) {
            return Err(WorkflowError::graph(format!(
                "node name '{}' is not an identifier: use letters, digits and '_', not starting with a digit",
                node.name()
            )));
        }
        if let Some(known) = seen.insert(node.name(), node)
            && !known.same_node(node)
        {
            duplicates.push(node.name().to_owned());
        }
    }
    if duplicates.is_empty() {
        return Ok(());
    }
    duplicates.sort();
    duplicates.dedup();
    Err(WorkflowError::graph(format!(
        "two different nodes are named {duplicates:?}: use the same node (a clone of it) to name it in several edges, or give the nodes different names"
    )))
}

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn index_of(nodes: &[Node]) -> HashMap<&str, usize> {
    nodes
        .iter()
        .enumerate()
        .map(|(index, node)| (node.name(), index))
        .collect()
}

/// Every node can be reached from START.
fn reachability(nodes: &[Node], edges: &[Edge]) -> Result<(), WorkflowError> {
    let index = index_of(nodes);
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for edge in edges {
        next[index[edge.from.name()]].push(index[edge.to.name()]);
    }
    let mut reached = vec![false; nodes.len()];
    let mut stack = vec![0];
    while let Some(node) = stack.pop() {
        if std::mem::replace(&mut reached[node], true) {
            continue;
        }
        stack.extend(next[node].iter().copied().filter(|&n| !reached[n]));
    }
    let mut unreachable: Vec<&str> = nodes
        .iter()
        .zip(&reached)
        .filter(|(_, reached)| !**reached)
        .map(|(node, _)| node.name())
        .collect();
    if unreachable.is_empty() {
        return Ok(());
    }
    unreachable.sort_unstable();
    Err(WorkflowError::graph(format!(
        "nodes {unreachable:?} cannot be reached from START"
    )))
}

/// No two edges join the same nodes on a shared route (or both without one).
fn duplicate_edges(edges: &[Edge]) -> Result<(), WorkflowError> {
    let mut seen: HashMap<(&str, &str), Vec<Option<&RouteValue>>> = HashMap::new();
    for edge in edges {
        let routes: Vec<Option<&RouteValue>> = match &edge.route {
            None => vec![None],
            Some(route) => route.values().iter().map(Some).collect(),
        };
        let known = seen.entry((edge.from.name(), edge.to.name())).or_default();
        let clash = !known.is_empty()
            && (known.contains(&None)
                || routes.contains(&None)
                || routes.iter().any(|route| known.contains(route)));
        if clash {
            return Err(WorkflowError::graph(format!(
                "the edge from '{}' to '{}' is there twice",
                edge.from.name(),
                edge.to.name()
            )));
        }
        known.extend(routes);
    }
    Ok(())
}

/// Every cycle has at least one routed edge, so that it can end.
fn unconditional_cycles(nodes: &[Node], edges: &[Edge]) -> Result<(), WorkflowError> {
    let index = index_of(nodes);
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for edge in edges.iter().filter(|edge| edge.route.is_none()) {
        next[index[edge.from.name()]].push(index[edge.to.name()]);
    }
    // An iterative depth-first search: large graphs must not overflow the stack.
    let mut done = vec![false; nodes.len()];
    let mut on_path = HashSet::new();
    for root in 0..nodes.len() {
        if done[root] {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        let mut path = vec![root];
        on_path.insert(root);
        while let Some((node, child)) = stack.last_mut() {
            let node = *node;
            if let Some(&neighbour) = next[node].get(*child) {
                *child += 1;
                if on_path.contains(&neighbour) {
                    let start = path.iter().position(|&n| n == neighbour).unwrap_or(0);
                    let mut cycle: Vec<&str> =
                        path[start..].iter().map(|&n| nodes[n].name()).collect();
                    cycle.push(nodes[neighbour].name());
                    return Err(WorkflowError::graph(format!(
                        "the edges {} form a cycle without a route; a cycle needs a routed edge to end",
                        cycle.join(" -> ")
                    )));
                }
                if !done[neighbour] {
                    stack.push((neighbour, 0));
                    path.push(neighbour);
                    on_path.insert(neighbour);
                }
            } else {
                stack.pop();
                path.pop();
                on_path.remove(&node);
                done[node] = true;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Edge, Node, NodeError, Routes, START, Workflow, WorkflowErrorKind};

    fn node(name: &str) -> Node {
        Node::function(
            name,
            |x: serde_json::Value| async move { Ok::<_, NodeError>(x) },
        )
    }

    fn refused(builder: crate::WorkflowBuilder) -> String {
        let error = builder.build().unwrap_err();
        assert_eq!(error.kind(), WorkflowErrorKind::Graph);
        error.to_string()
    }

    #[test]
    fn each_rule_is_enforced_with_a_clear_error() {
        let (a, b) = (node("a"), node("b"));
        assert!(refused(Workflow::builder("w").chain((node("a"), node("b")))).contains("START"));
        assert!(
            refused(Workflow::builder("w").chain((START, node("a"), node("a"))))
                .contains("two different nodes")
        );
        assert!(
            refused(Workflow::builder("w").edge(Edge::new(START, &a).route("x")))
                .contains("from START")
        );
        assert!(
            refused(
                Workflow::builder("w")
                    .chain((START, &a))
                    .edge(Edge::new(&a, START))
            )
            .contains("into START")
        );
        assert!(
            refused(
                Workflow::builder("w")
                    .chain((START, &a))
                    .edge(Edge::new(&b, &a))
            )
            .contains("cannot be reached")
        );
        assert!(
            refused(
                Workflow::builder("w")
                    .chain((START, &a, &b))
                    .chain((&a, &b))
            )
            .contains("twice")
        );
        assert!(refused(Workflow::builder("w").chain((START, &a, &b, &a))).contains("a -> b -> a"));
        assert!(
            refused(
                Workflow::builder("w")
                    .chain((START, &a))
                    .edge(Edge::new(&a, &b).route(vec!["x".into(), crate::DEFAULT_ROUTE.into()]))
            )
            .contains("default route")
        );
        assert!(
            refused(Workflow::builder("w").chain((
                START,
                &a,
                Routes::new().on("x", &b),
                Routes::new().on("y", &b)
            )))
            .contains("routing maps")
        );
        assert!(
            refused(Workflow::builder("w").chain((START, node("not ok")))).contains("identifier")
        );
    }

    #[test]
    fn a_routed_cycle_is_a_loop() {
        let (a, b) = (node("a"), node("b"));
        let workflow = Workflow::builder("w")
            .chain((START, &a, &b, Routes::new().on("again", &a)))
            .build()
            .unwrap();
        assert_eq!(workflow.graph().terminal_nodes().count(), 0);
    }
}
