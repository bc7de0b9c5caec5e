//! A workflow's graph: the nodes (inferred from the edges, `START` first), the edges, and which
//! edges a node's completion takes. Built from the edge syntax of [`syntax`] and checked by
//! [`validate`].

mod syntax;
mod validate;

use std::collections::HashMap;

use adk_core::{Route, RouteValue};

pub use syntax::{ChainElement, DEFAULT_ROUTE, Edge, IntoChain, Routes, START, Start, routes};

pub(crate) use validate::is_identifier;

use crate::{Node, WorkflowError};

/// One item of a workflow's edge list, as written: a chain or an explicit edge.
#[derive(Debug, Clone)]
pub(crate) enum EdgeItem {
    Chain(Vec<ChainElement>),
    Edge(Edge),
}

/// A workflow's checked graph.
#[derive(Debug, Clone)]
pub struct Graph {
    /// The nodes, `START` first, then in the order the edges name them.
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// The edges leaving each node, by node index, as (edge index, target index).
    outgoing: Vec<Vec<(usize, usize)>>,
    /// The distinct nodes with an edge into each node, by node index.
    predecessors: Vec<Vec<usize>>,
    terminal: Vec<bool>,
    by_name: HashMap<String, usize>,
}

impl Graph {
    /// Builds and checks the graph `items` describe.
    pub(crate) fn build(items: &[EdgeItem]) -> Result<Self, WorkflowError> {
        let edges = parse(items)?;
        let mut nodes: Vec<Node> = Vec::new();
        for edge in &edges {
            for node in [&edge.from, &edge.to] {
                if !nodes.iter().any(|known| known.same_node(node)) {
                    nodes.push(node.clone());
                }
            }
        }
        if let Some(start) = nodes.iter().position(Node::is_start) {
            let start = nodes.remove(start);
            nodes.insert(0, start);
        }
        validate::check(&nodes, &edges)?;
        let by_name: HashMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(index, node)| (node.name().to_owned(), index))
            .collect();
        let mut outgoing = vec![Vec::new(); nodes.len()];
        let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (edge_index, edge) in edges.iter().enumerate() {
            let from = by_name[edge.from.name()];
            let to = by_name[edge.to.name()];
            outgoing[from].push((edge_index, to));
            if !predecessors[to].contains(&from) {
                predecessors[to].push(from);
            }
        }
        let terminal = outgoing
            .iter()
            .enumerate()
            .map(|(index, out)| index != 0 && out.is_empty())
            .collect();
        Ok(Self {
            nodes,
            edges,
            outgoing,
            predecessors,
            terminal,
            by_name,
        })
    }

    /// The nodes, `START` first.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The edges, in the order they were written.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.by_name.get(name).map(|&index| &self.nodes[index])
    }

    /// The nodes with no edge leaving them, whose outputs are the workflow's.
    pub fn terminal_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes
            .iter()
            .zip(&self.terminal)
            .filter_map(|(node, terminal)| terminal.then_some(node))
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn node_at(&self, index: usize) -> &Node {
        &self.nodes[index]
    }

    pub(crate) fn is_terminal(&self, index: usize) -> bool {
        self.terminal[index]
    }

    pub(crate) fn predecessors(&self, index: usize) -> &[usize] {
        &self.predecessors[index]
    }

    pub(crate) fn successors_of_start(&self) -> impl Iterator<Item = usize> + '_ {
        self.outgoing[0].iter().map(|&(_, to)| to)
    }

    /// The nodes a completion of node `index` with `route` triggers, in edge order: edges without
    /// a route always, routed edges whose route matches, default edges only when nothing else
    /// routed matched.
    pub(crate) fn next_nodes(&self, index: usize, route: Option<&Route>) -> Vec<usize> {
        let mut next = Vec::new();
        let mut defaults = Vec::new();
        let mut matched = false;
        let mut routed = false;
        for &(edge_index, to) in &self.outgoing[index] {
            let edge = &self.edges[edge_index];
            let Some(edge_route) = &edge.route else {
                next.push(to);
                continue;
            };
            routed = true;
            if edge.is_default() {
                defaults.push(to);
                continue;
            }
            let hit = route
                .is_some_and(|taken| taken.values().iter().any(|value| edge_route.matches(value)));
            if hit {
                next.push(to);
                matched = true;
            }
        }
        if !matched {
            next.extend(defaults);
        }
        if routed && next.is_empty() {
            tracing::warn!(
                node = self.nodes[index].name(),
                route = ?route,
                "no edge of the node matched its route; this branch of the workflow ends"
            );
        }
        next
    }
}

/// The edges the items describe, in order.
fn parse(items: &[EdgeItem]) -> Result<Vec<Edge>, WorkflowError> {
    let mut edges = Vec::new();
    for item in items {
        match item {
            EdgeItem::Edge(edge) => edges.push(edge.clone()),
            EdgeItem::Chain(chain) => {
                for pair in chain.windows(2) {
                    let (from, to) = (&pair[0], &pair[1]);
                    match to {
                        ChainElement::Routes(routes) => {
                            if matches!(from, ChainElement::Routes(_)) {
                                return Err(WorkflowError::graph(
                                    "two routing maps follow each other in a chain; split them into separate chains",
                                ));
                            }
                            if routes.entries().is_empty() {
                                return Err(WorkflowError::graph(
                                    "a routing map is empty; give it at least one route and node",
                                ));
                            }
                            for (route, targets) in routes.entries() {
                                for source in from.nodes() {
                                    for target in targets {
                                        edges.push(Edge {
                                            from: source.clone(),
                                            to: target.clone(),
                                            route: Some(Route::One(route.clone())),
                                        });
                                    }
                                }
                            }
                        }
                        ChainElement::Nodes(targets) => {
                            for source in from.nodes() {
                                for target in targets {
                                    edges.push(Edge::new(source.clone(), target.clone()));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(edges)
}

/// Whether `route` names the default route.
pub(crate) fn is_default_value(route: &RouteValue) -> bool {
    matches!(route, RouteValue::Str(text) if text == DEFAULT_ROUTE)
}
