//! Property tests of the scheduler on random graphs: random DAGs of function nodes, with random
//! routes (specific, default and none) on random edges and a failing first attempt of every run
//! that a retry recovers, always finish, and every node runs exactly as many times as the
//! reference's semantics say: once for each trigger that reaches it. Each property runs `CASES`
//! generated cases (`PROPTEST_CASES` is not read: CI runs this many).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use adk_core::Content;
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use adk_workflow::{
    DEFAULT_ROUTE, Edge, Node, NodeError, NodeOutput, RetryConfig, START, Workflow,
};
use futures::StreamExt as _;
use proptest::prelude::*;
use serde_json::Value;

/// How many cases each property runs.
const CASES: u32 = 48;

/// The most nodes a generated graph has.
const MAX_NODES: usize = 7;

/// What an edge carries: nothing, a specific route, or the default route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdgeRoute {
    Always,
    On(&'static str),
    Default,
}

/// A generated graph: for each node, the route it takes and its outgoing edges (to later nodes
/// only, so there are no cycles), and the nodes `START` triggers.
#[derive(Debug, Clone)]
struct Shape {
    routes: Vec<Option<&'static str>>,
    edges: Vec<Vec<(usize, EdgeRoute)>>,
    from_start: Vec<usize>,
}

fn route() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![Just(None), Just(Some("a")), Just(Some("b"))]
}

fn edge_route() -> impl Strategy<Value = EdgeRoute> {
    prop_oneof![
        2 => Just(EdgeRoute::Always),
        1 => Just(EdgeRoute::On("a")),
        1 => Just(EdgeRoute::On("b")),
        1 => Just(EdgeRoute::Default),
    ]
}

/// Graphs of 1 to `MAX_NODES` nodes where every node has an edge from `START` or from an earlier
/// node, so all can be reached, and no two edges join the same pair.
fn shape() -> impl Strategy<Value = Shape> {
    (1..=MAX_NODES).prop_flat_map(|count| {
        let routes = proptest::collection::vec(route(), count);
        // For each node after the first: which earlier node (or START, `None`) feeds it first.
        let parents = proptest::collection::vec(any::<prop::sample::Index>(), count);
        let extra = proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                edge_route(),
            ),
            0..count * 2,
        );
        let parent_routes = proptest::collection::vec(edge_route(), count);
        (routes, parents, parent_routes, extra).prop_map(
            move |(routes, parents, parent_routes, extra)| {
                let mut edges: Vec<Vec<(usize, EdgeRoute)>> = vec![Vec::new(); count];
                let mut from_start = vec![0];
                for to in 1..count {
                    // Index `to` stands for START, the others for the earlier nodes.
                    let parent = parents[to].index(to + 1);
                    if parent == to {
                        from_start.push(to);
                    } else {
                        edges[parent].push((to, parent_routes[to]));
                    }
                }
                for (from, to, route) in extra {
                    let (from, to) = (from.index(count), to.index(count));
                    if from < to && !edges[from].iter().any(|&(known, _)| known == to) {
                        edges[from].push((to, route));
                    }
                }
                Shape {
                    routes,
                    edges,
                    from_start,
                }
            },
        )
    })
}

impl Shape {
    /// The nodes a completion of `node` triggers, by the reference's rule: edges without a
    /// route always, edges whose route the node took, default edges when no specific route of the
    /// node matched.
    fn next(&self, node: usize) -> Vec<usize> {
        let taken = self.routes[node];
        let mut next = Vec::new();
        let mut defaults = Vec::new();
        let mut matched = false;
        for &(to, route) in &self.edges[node] {
            match route {
                EdgeRoute::Always => next.push(to),
                EdgeRoute::On(value) if Some(value) == taken => {
                    next.push(to);
                    matched = true;
                }
                EdgeRoute::On(_) => {}
                EdgeRoute::Default => defaults.push(to),
            }
        }
        if !matched {
            next.extend(defaults);
        }
        next
    }

    /// How many times each node runs: once per trigger, and each run triggers its successors.
    fn expected_runs(&self) -> Vec<u32> {
        let mut runs = vec![0; self.routes.len()];
        for &node in &self.from_start {
            runs[node] += 1;
        }
        // Edges only go forward, so each node's count is final when it is reached.
        for node in 0..runs.len() {
            for to in self.next(node) {
                runs[to] += runs[node];
            }
        }
        runs
    }

    /// The workflow, with a counter of attempts per node.
    fn workflow(&self) -> (Workflow, Vec<Arc<AtomicU32>>) {
        let attempts: Vec<Arc<AtomicU32>> = (0..self.routes.len())
            .map(|_| Arc::new(AtomicU32::new(0)))
            .collect();
        let nodes: Vec<Node> = (0..self.routes.len())
            .map(|index| {
                let counter = attempts[index].clone();
                let route = self.routes[index];
                // Terminal nodes answer nothing: a workflow refuses several terminal outputs.
                let terminal = self.edges[index].is_empty();
                Node::function(format!("n{index}"), move |_: Value| {
                    let attempt = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    async move {
                        // Runs of one node never overlap, so every odd attempt is a run's first.
                        if attempt % 2 == 1 {
                            return Err(NodeError::new("Flaky", format!("attempt {attempt}")));
                        }
                        let output = if terminal {
                            NodeOutput::none()
                        } else {
                            NodeOutput::value(index)
                        };
                        Ok(match route {
                            Some(route) => output.route(route),
                            None => output,
                        })
                    }
                })
                .retry(
                    RetryConfig::default()
                        .max_attempts(2)
                        .initial_delay(Duration::ZERO)
                        .jitter(0.0),
                )
            })
            .collect();
        let mut builder = Workflow::builder("wf");
        for &node in &self.from_start {
            builder = builder.edge(Edge::new(START, &nodes[node]));
        }
        for (from, edges) in self.edges.iter().enumerate() {
            for &(to, route) in edges {
                let edge = Edge::new(&nodes[from], &nodes[to]);
                builder = builder.edge(match route {
                    EdgeRoute::Always => edge,
                    EdgeRoute::On(value) => edge.route(value),
                    EdgeRoute::Default => edge.route(DEFAULT_ROUTE),
                });
            }
        }
        (
            builder.build().expect("a generated graph is valid"),
            attempts,
        )
    }
}

/// Runs `workflow` to its end and answers the run ids of each node's successful runs, by node
/// name, from the events' paths.
async fn run(workflow: Workflow) -> Result<BTreeMap<String, Vec<String>>, String> {
    let runner = Runner::builder("random", Arc::new(workflow), InMemorySessionService::new())
        .auto_create_session(true)
        .build()
        .map_err(|error| error.to_string())?;
    let mut events = Box::pin(runner.run("user", "s1", Content::user("go")));
    let mut runs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .map_err(|_| "the run hung".to_owned())?;
        let Some(event) = next else {
            return Ok(runs);
        };
        let event = event.map_err(|error| format!("the run failed: {error}"))?;
        if event.output.is_some() {
            let path = event.node_info.path.clone();
            runs.entry(path.name().to_owned())
                .or_default()
                .push(path.run_id().unwrap_or_default().to_owned());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn random_graphs_finish_and_run_each_node_as_often_as_it_is_triggered(shape in shape()) {
        let expected = shape.expected_runs();
        let (workflow, attempts) = shape.workflow();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let outputs = runtime.block_on(run(workflow)).map_err(TestCaseError::fail)?;
        for (index, &runs) in expected.iter().enumerate() {
            // Each run failed once and succeeded on its retry.
            prop_assert_eq!(attempts[index].load(Ordering::SeqCst), 2 * runs, "attempts of n{}", index);
            // Non-terminal runs each wrote an output, under the run ids 1, 2, ... in order.
            if !shape.edges[index].is_empty() {
                let ids = outputs.get(&format!("n{index}")).cloned().unwrap_or_default();
                let want: Vec<String> = (1..=runs).map(|id| id.to_string()).collect();
                prop_assert_eq!(ids, want, "run ids of n{}", index);
            }
        }
    }
}
