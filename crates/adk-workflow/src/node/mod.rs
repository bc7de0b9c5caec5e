//! [`Node`]: one unit of work in a workflow graph (a function, an agent, a tool, a join, a nested
//! workflow, or a node of your own through [`RunNode`]), with its [`NodeOptions`] (retries,
//! timeout, what happens on resume).

mod agent;
pub(crate) mod context;
pub(crate) mod function;
mod input;
mod join;
mod parallel;
mod retry;
mod tool;
pub(crate) mod workflow;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

pub use agent::AgentNode;
pub use function::{FunctionNode, IntoFunctionNode, NodeOutput};
pub use input::NodeInput;
pub(crate) use input::content_text;
pub use join::JoinNode;
pub use parallel::ParallelWorker;
pub use retry::RetryConfig;
pub use tool::ToolNode;

use crate::{NodeContext, NodeError, Workflow};

/// The name of the sentinel node every workflow starts from. It never runs.
pub const START_NAME: &str = "__START__";

/// What kind of node this is, as the dev UI shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NodeKind {
    /// The `START` sentinel.
    Start,
    /// A function node.
    Function,
    /// A tool run as a node.
    Tool,
    /// A join node.
    Join,
    /// A nested workflow.
    Workflow,
    /// An agent.
    Agent,
    /// A node of your own.
    Custom,
}

impl NodeKind {
    /// The name the dev UI uses (`start`, `function`, `tool`, `join`, `workflow`, `agent`, `node`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Function => "function",
            Self::Tool => "tool",
            Self::Join => "join",
            Self::Workflow => "workflow",
            Self::Agent => "agent",
            Self::Custom => "node",
        }
    }
}

/// What a node does: how it runs, and how the scheduler treats it. Implement it for nodes of your
/// own and wrap them with [`Node::custom`].
///
/// A node's body emits events through its [`NodeContext`] (an output with
/// [`NodeContext::output`], any event with [`NodeContext::emit`], a question for the user with
/// [`NodeContext::request_input`]) and returns once it is done; an error fails the run (and is
/// retried when the node has a [`RetryConfig`]).
///
/// ```
/// use adk_workflow::{Node, NodeContext, NodeError, NodeInput, RunNode};
/// use futures::future::BoxFuture;
///
/// struct Shout;
///
/// impl RunNode for Shout {
///     fn run<'a>(&'a self, ctx: &'a NodeContext, input: NodeInput) -> BoxFuture<'a, Result<(), NodeError>> {
///         Box::pin(async move {
///             let text: String = input.parse()?;
///             ctx.output(text.to_uppercase()).await
///         })
///     }
/// }
///
/// let shout = Node::custom("shout", Shout);
/// assert_eq!(shout.name(), "shout");
/// ```
pub trait RunNode: Send + Sync + 'static {
    /// Runs the node on `input` in `ctx`.
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>>;

    /// What kind of node this is.
    fn kind(&self) -> NodeKind {
        NodeKind::Custom
    }

    /// Whether the node runs only once every predecessor completed (a join).
    fn waits_for_all_predecessors(&self) -> bool {
        false
    }

    /// The mode of the agent this node runs, if it runs an `LlmAgent`: a task agent's run is
    /// kept apart from the workflow's conversation (its own isolation scope), and while it waits
    /// for the user nothing else is scheduled.
    fn agent_mode(&self) -> Option<adk_flow::AgentMode> {
        None
    }

    /// The nodes declared inside this one (a nested workflow's, a parallel worker's), for the
    /// graph the dev UI draws.
    fn children(&self) -> Vec<Node> {
        Vec::new()
    }

    /// The workflow this node is, if it is one.
    fn as_workflow(&self) -> Option<&Workflow> {
        None
    }

    /// The agent this node runs, if it runs one.
    fn as_agent(&self) -> Option<&Arc<dyn adk_core::Agent>> {
        None
    }

    /// What makes two nodes one: nodes built from the same agent or workflow are the same node
    /// even when built twice. `None` when only clones of one [`Node`] are the same.
    fn identity(&self) -> Option<usize> {
        None
    }
}

/// How the scheduler treats a node besides what it does.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct NodeOptions {
    /// On resume after the user answered it, run the node again (it reads the answers from
    /// [`NodeContext::resume_input`]) instead of completing it with the answer as its output.
    pub rerun_on_resume: bool,
    /// Complete only once the node produced an output or a route; until then it waits and may be
    /// triggered again.
    pub wait_for_output: bool,
    /// Retry the node when it fails.
    pub retry: Option<RetryConfig>,
    /// Fail the node (as `NodeTimeoutError`) when a run takes longer.
    pub timeout: Option<Duration>,
    /// The JSON Schema of the node's input; an edge into it from a node with another output
    /// schema is refused.
    pub input_schema: Option<serde_json::Value>,
    /// The JSON Schema of the node's output.
    pub output_schema: Option<serde_json::Value>,
}

/// A node of a workflow graph: cheap to clone, and a clone is the same node (a graph may name it
/// in several edges). Two different nodes of one workflow may not share a name.
///
/// ```
/// use adk_workflow::{Node, NodeContext, NodeError, RetryConfig};
/// use std::time::Duration;
///
/// let upper = Node::function("upper", |text: String| async move { Ok::<_, NodeError>(text.to_uppercase()) })
///     .retry(RetryConfig::default().max_attempts(3))
///     .timeout(Duration::from_secs(5));
/// assert_eq!(upper.name(), "upper");
/// assert!(upper.same_node(&upper.clone()));
/// ```
#[derive(Clone)]
pub struct Node(Arc<NodeInner>);

pub(crate) struct NodeInner {
    name: String,
    description: String,
    options: NodeOptions,
    body: Arc<dyn RunNode>,
}

impl Node {
    /// A node named `name` (an identifier) that runs `body`.
    pub fn custom(name: impl Into<String>, body: impl RunNode) -> Self {
        Self::from_parts(name.into(), NodeOptions::default(), Arc::new(body))
    }

    pub(crate) fn from_parts(name: String, options: NodeOptions, body: Arc<dyn RunNode>) -> Self {
        Self(Arc::new(NodeInner {
            name,
            description: String::new(),
            options,
            body,
        }))
    }

    /// The `START` sentinel.
    pub(crate) fn start() -> Self {
        struct Start;
        impl RunNode for Start {
            fn run<'a>(
                &'a self,
                _: &'a NodeContext,
                _: NodeInput,
            ) -> BoxFuture<'a, Result<(), NodeError>> {
                Box::pin(async {
                    Err(NodeError::new(
                        "WorkflowInvariantError",
                        "the START node never runs",
                    ))
                })
            }
            fn kind(&self) -> NodeKind {
                NodeKind::Start
            }
        }
        Self::from_parts(
            START_NAME.to_owned(),
            NodeOptions::default(),
            Arc::new(Start),
        )
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// What the node does, for people reading the graph.
    pub fn description(&self) -> &str {
        &self.0.description
    }

    /// The node's options.
    pub fn options(&self) -> &NodeOptions {
        &self.0.options
    }

    /// What kind of node it is.
    pub fn kind(&self) -> NodeKind {
        self.0.body.kind()
    }

    /// The node's body.
    pub fn body(&self) -> &Arc<dyn RunNode> {
        &self.0.body
    }

    /// Whether `other` is this node (a clone of it, or a node of the same agent), not only a
    /// node of the same name.
    pub fn same_node(&self, other: &Node) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || self
                .body()
                .identity()
                .is_some_and(|identity| other.body().identity() == Some(identity))
    }

    /// Whether this is the `START` sentinel.
    pub fn is_start(&self) -> bool {
        self.kind() == NodeKind::Start
    }

    /// A copy of this node with other options; it is a different node from this one, so use the
    /// copy everywhere in the graph.
    fn with_options(self, change: impl FnOnce(&mut NodeOptions)) -> Self {
        let inner = match Arc::try_unwrap(self.0) {
            Ok(inner) => inner,
            Err(shared) => NodeInner {
                name: shared.name.clone(),
                description: shared.description.clone(),
                options: shared.options.clone(),
                body: shared.body.clone(),
            },
        };
        let mut inner = inner;
        change(&mut inner.options);
        Self(Arc::new(inner))
    }

    /// Sets the description.
    #[must_use]
    pub fn describe(self, description: impl Into<String>) -> Self {
        let description = description.into();
        let mut inner = match Arc::try_unwrap(self.0) {
            Ok(inner) => inner,
            Err(shared) => NodeInner {
                name: shared.name.clone(),
                description: String::new(),
                options: shared.options.clone(),
                body: shared.body.clone(),
            },
        };
        inner.description = description;
        Self(Arc::new(inner))
    }

    /// Retries the node when it fails, as `config` says.
    #[must_use]
    pub fn retry(self, config: RetryConfig) -> Self {
        self.with_options(|options| options.retry = Some(config))
    }

    /// Fails a run of the node that takes longer than `timeout` (`NodeTimeoutError`).
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.with_options(|options| options.timeout = Some(timeout))
    }

    /// Whether the node runs again on resume (see [`NodeOptions::rerun_on_resume`]).
    #[must_use]
    pub fn rerun_on_resume(self, rerun: bool) -> Self {
        self.with_options(|options| options.rerun_on_resume = rerun)
    }

    /// Whether the node completes only with an output or a route (see
    /// [`NodeOptions::wait_for_output`]).
    #[must_use]
    pub fn wait_for_output(self, wait: bool) -> Self {
        self.with_options(|options| options.wait_for_output = wait)
    }

    /// Declares the JSON Schema of the node's input (checked against its predecessors' output
    /// schemas when the graph is built).
    #[must_use]
    pub fn input_schema(self, schema: serde_json::Value) -> Self {
        self.with_options(|options| options.input_schema = Some(schema))
    }

    /// Declares the JSON Schema of the node's output.
    #[must_use]
    pub fn output_schema(self, schema: serde_json::Value) -> Self {
        self.with_options(|options| options.output_schema = Some(schema))
    }

    /// Runs this node once per item of a list input, in parallel, each item on a branch of its
    /// own, and outputs the list of their outputs in input order (ADK's `parallel_worker`).
    #[must_use]
    pub fn parallel(self) -> Self {
        ParallelWorker::wrap(self, None)
    }

    /// As [`parallel`](Self::parallel), with at most `max_workers` items running at once.
    #[must_use]
    pub fn parallel_limited(self, max_workers: usize) -> Self {
        ParallelWorker::wrap(self, Some(max_workers.max(1)))
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name())
            .field("kind", &self.kind())
            .field("options", self.options())
            .finish()
    }
}

impl From<&Node> for Node {
    fn from(node: &Node) -> Self {
        node.clone()
    }
}
