//! The edge syntax: chains of nodes written as tuples (`(START, a, b)`), fan-out and fan-in as
//! arrays inside a chain (`(START, [a, b], join)`), routing maps as [`Routes`]
//! (`(classify, Routes::new().on("long", a).otherwise(b))`), and explicit [`Edge`]s.

use std::sync::LazyLock;

use adk_core::{Route, RouteValue};

use crate::Node;

/// The route taken when no other route of the same node matched.
pub const DEFAULT_ROUTE: &str = "__DEFAULT__";

/// Where every workflow starts: its successors are triggered with the workflow's input. Write it
/// first in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start;

/// The start of a workflow, to begin a chain with.
pub const START: Start = Start;

/// The one `START` node every graph shares.
static START_NODE: LazyLock<Node> = LazyLock::new(Node::start);

impl From<Start> for Node {
    fn from(_: Start) -> Self {
        START_NODE.clone()
    }
}

/// One element of a chain: one node, several nodes at once (fan-out after the element before,
/// fan-in before the element after), or a routing map.
#[derive(Debug, Clone)]
pub enum ChainElement {
    /// Nodes, each linked to the elements before and after.
    Nodes(Vec<Node>),
    /// A routing map from the element before.
    Routes(Routes),
}

impl ChainElement {
    /// The nodes an edge from this element starts at.
    pub(crate) fn nodes(&self) -> Vec<Node> {
        match self {
            Self::Nodes(nodes) => nodes.clone(),
            Self::Routes(routes) => routes
                .entries
                .iter()
                .flat_map(|(_, targets)| targets.iter().cloned())
                .collect(),
        }
    }
}

impl<T: Into<Node>> From<T> for ChainElement {
    fn from(node: T) -> Self {
        Self::Nodes(vec![node.into()])
    }
}

impl<T: Into<Node>, const N: usize> From<[T; N]> for ChainElement {
    fn from(nodes: [T; N]) -> Self {
        Self::Nodes(nodes.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Node>> From<Vec<T>> for ChainElement {
    fn from(nodes: Vec<T>) -> Self {
        Self::Nodes(nodes.into_iter().map(Into::into).collect())
    }
}

impl From<Routes> for ChainElement {
    fn from(routes: Routes) -> Self {
        Self::Routes(routes)
    }
}

/// A routing map: which nodes follow the node before it for each route it may take (ADK's
/// `{route: node}` inside a chain). [`otherwise`](Self::otherwise) names the nodes taken when no
/// other route matched (the default route).
///
/// ```
/// use adk_workflow::{Node, NodeError, Routes, START, Workflow};
///
/// let pick = Node::function("pick", |n: i64| async move { Ok::<_, NodeError>(n) });
/// let even = Node::function("even", |n: i64| async move { Ok::<_, NodeError>(n / 2) });
/// let odd = Node::function("odd", |n: i64| async move { Ok::<_, NodeError>(3 * n + 1) });
/// let routes = Routes::new().on(true, &even).otherwise(&odd);
/// let workflow = Workflow::builder("collatz").chain((START, &pick, routes)).build().unwrap();
/// assert_eq!(workflow.graph().edges().len(), 3);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Routes {
    entries: Vec<(RouteValue, Vec<Node>)>,
}

impl Routes {
    /// An empty routing map.
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// Takes `targets` (one node, or an array of nodes to fan out to) on `route`.
    #[must_use]
    pub fn on(mut self, route: impl Into<RouteValue>, targets: impl Into<ChainElement>) -> Self {
        let targets = match targets.into() {
            ChainElement::Nodes(nodes) => nodes,
            ChainElement::Routes(routes) => ChainElement::Routes(routes).nodes(),
        };
        self.entries.push((route.into(), targets));
        self
    }

    /// Takes `targets` when no other route of the node matched (the default route).
    #[must_use]
    pub fn otherwise(self, targets: impl Into<ChainElement>) -> Self {
        self.on(DEFAULT_ROUTE, targets)
    }

    /// The routes and the nodes each takes, in the order given.
    pub fn entries(&self) -> &[(RouteValue, Vec<Node>)] {
        &self.entries
    }
}

/// A routing map from `(route, targets)` pairs, in the order given.
///
/// ```
/// use adk_workflow::{DEFAULT_ROUTE, Node, NodeError, routes};
///
/// let a = Node::function("a", |x: String| async move { Ok::<_, NodeError>(x) });
/// let b = Node::function("b", |x: String| async move { Ok::<_, NodeError>(x) });
/// let map = routes([("a", &a), (DEFAULT_ROUTE, &b)]);
/// # let _ = map;
/// ```
pub fn routes<K, T>(pairs: impl IntoIterator<Item = (K, T)>) -> Routes
where
    K: Into<RouteValue>,
    T: Into<ChainElement>,
{
    pairs
        .into_iter()
        .fold(Routes::new(), |routes, (route, targets)| {
            routes.on(route, targets)
        })
}

/// An explicit edge: `to` runs after `from`, on `route` when it has one.
///
/// ```
/// use adk_workflow::{Edge, Node, NodeError, START, Workflow};
///
/// let check = Node::function("check", |x: i64| async move { Ok::<_, NodeError>(x) });
/// let retry = Node::function("retry", |x: i64| async move { Ok::<_, NodeError>(x + 1) });
/// let workflow = Workflow::builder("loop")
///     .edge(Edge::new(START, &check))
///     .edge(Edge::new(&check, &retry).route("again"))
///     .edge(Edge::new(&retry, &check))
///     .build()
///     .unwrap();
/// assert_eq!(workflow.graph().nodes().len(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct Edge {
    pub(crate) from: Node,
    pub(crate) to: Node,
    pub(crate) route: Option<Route>,
}

impl Edge {
    /// An edge from `from` to `to`, taken whatever `from`'s route.
    pub fn new(from: impl Into<Node>, to: impl Into<Node>) -> Self {
        Self {
            from: from.into(),
            to: to.into(),
            route: None,
        }
    }

    /// Takes the edge only on `route` (a value, or a `Vec` of values any of which matches).
    #[must_use]
    pub fn route(mut self, route: impl Into<Route>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// The node the edge leaves.
    pub fn from_node(&self) -> &Node {
        &self.from
    }

    /// The node the edge enters.
    pub fn to_node(&self) -> &Node {
        &self.to
    }

    /// The edge's route, if it has one.
    pub fn route_value(&self) -> Option<&Route> {
        self.route.as_ref()
    }

    /// Whether this is the default route.
    pub fn is_default(&self) -> bool {
        matches!(&self.route, Some(Route::One(RouteValue::Str(route))) if route == DEFAULT_ROUTE)
    }
}

/// A chain of elements: a tuple of up to twelve elements, or a `Vec` of them.
pub trait IntoChain {
    /// The chain's elements in order.
    fn into_chain(self) -> Vec<ChainElement>;
}

impl IntoChain for Vec<ChainElement> {
    fn into_chain(self) -> Vec<ChainElement> {
        self
    }
}

/// Implements [`IntoChain`] for tuples of chain elements.
macro_rules! tuple_chains {
    ($($name:ident),+) => {
        impl<$($name: Into<ChainElement>),+> IntoChain for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_chain(self) -> Vec<ChainElement> {
                let ($($name,)+) = self;
                vec![$($name.into()),+]
            }
        }
    };
}

tuple_chains!(A, B);
tuple_chains!(A, B, C);
tuple_chains!(A, B, C, D);
tuple_chains!(A, B, C, D, E);
tuple_chains!(A, B, C, D, E, F);
tuple_chains!(A, B, C, D, E, F, G);
tuple_chains!(A, B, C, D, E, F, G, H);
tuple_chains!(A, B, C, D, E, F, G, H, I);
tuple_chains!(A, B, C, D, E, F, G, H, I, J);
tuple_chains!(A, B, C, D, E, F, G, H, I, J, K);
tuple_chains!(A, B, C, D, E, F, G, H, I, J, K, L);
