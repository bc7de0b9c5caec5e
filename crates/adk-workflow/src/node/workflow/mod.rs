//! [`Workflow`]: a graph of nodes run as an agent (the root of an app, or a sub-agent) or as a
//! node of another workflow, and its builder.

pub(crate) mod graph;
mod scheduler;

use std::fmt;
use std::sync::Arc;

use adk_core::{
    Agent, Content, Event, EventStream, FunctionCallId, InvocationContext, InvocationId,
    USER_AUTHOR,
};
use futures::future::BoxFuture;

use super::context::runtime::{ChildRun, Runtime, run_child};
use super::context::{NodeContext, Placement};
use crate::node::{NodeKind, NodeOptions, RunNode};
use crate::sink::RunStream;
use crate::{Node, NodeError, NodeInput, WorkflowError};
use graph::{ChainElement, Edge, EdgeItem, Graph, IntoChain};

/// A graph workflow: nodes joined by edges, run from `START`, each node's output passed along the
/// edges its route takes. Its events carry each node's path (`wf@1/classify@1`) and output.
///
/// A workflow is an [`Agent`]: give it to a runner as an app's root, or to an `LlmAgent` as a
/// sub-agent. It is also a node of other workflows (`Node::from(workflow)`).
///
/// ```
/// use adk_workflow::{DEFAULT_ROUTE, Node, NodeContext, NodeError, NodeOutput, Routes, START, Workflow};
///
/// let classify = Node::function("classify", |ctx: NodeContext, text: String| async move {
///     ctx.set_state("seen", &text)?;
///     let route = if text.len() > 3 { "long" } else { "short" };
///     Ok::<_, NodeError>(NodeOutput::value(serde_json::json!({"text": text})).route(route))
/// });
/// let handle_long = Node::function("handle_long", |input: serde_json::Value| async move {
///     Ok::<_, NodeError>(format!("LONG:{}", input["text"].as_str().unwrap_or_default()))
/// });
/// let handle_short = Node::function("handle_short", |input: serde_json::Value| async move {
///     Ok::<_, NodeError>(format!("SHORT:{}", input["text"].as_str().unwrap_or_default()))
/// });
///
/// let workflow = Workflow::builder("router_wf")
///     .chain((START, &classify, Routes::new().on("long", &handle_long).otherwise(&handle_short)))
///     .build()
///     .unwrap();
/// assert_eq!(workflow.graph().nodes().len(), 4);
/// ```
#[derive(Clone)]
pub struct Workflow {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    description: String,
    items: Vec<EdgeItem>,
    graph: Graph,
    max_concurrency: Option<usize>,
    options: NodeOptions,
    /// The agents of the graph's agent nodes and its nested workflows, for the agent tree.
    sub_agents: Vec<Arc<dyn Agent>>,
}

impl Workflow {
    /// Starts building a workflow named `name` (an identifier).
    pub fn builder(name: impl Into<String>) -> WorkflowBuilder {
        WorkflowBuilder {
            name: name.into(),
            description: String::new(),
            items: Vec::new(),
            max_concurrency: None,
            options: NodeOptions {
                rerun_on_resume: true,
                ..NodeOptions::default()
            },
        }
    }

    /// The workflow's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The checked graph.
    pub fn graph(&self) -> &Graph {
        &self.inner.graph
    }

    /// The edges as they were written: chains and explicit edges.
    pub fn edge_items(&self) -> Vec<WrittenEdges> {
        self.inner
            .items
            .iter()
            .map(|item| match item {
                EdgeItem::Chain(chain) => WrittenEdges::Chain(chain.clone()),
                EdgeItem::Edge(edge) => WrittenEdges::Edge(edge.clone()),
            })
            .collect()
    }

    /// How many graph nodes run at once at most (`None`: no limit).
    pub fn max_concurrency(&self) -> Option<usize> {
        self.inner.max_concurrency
    }

    /// This workflow as a node of another workflow.
    pub fn as_node(&self) -> Node {
        Node::from_parts(
            self.inner.name.clone(),
            self.inner.options.clone(),
            Arc::new(self.clone()),
        )
    }

    /// Whether `other` is this workflow (a clone of it).
    pub fn same_workflow(&self, other: &Workflow) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// One item of a workflow's edge list as it was written, for showing the graph.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WrittenEdges {
    /// A chain.
    Chain(Vec<ChainElement>),
    /// An explicit edge.
    Edge(Edge),
}

impl fmt::Debug for Workflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workflow")
            .field("name", &self.inner.name)
            .field(
                "nodes",
                &self
                    .graph()
                    .nodes()
                    .iter()
                    .map(Node::name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl RunNode for Workflow {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(scheduler::run_graph(self, ctx, input))
    }

    fn kind(&self) -> NodeKind {
        NodeKind::Workflow
    }

    fn children(&self) -> Vec<Node> {
        self.graph()
            .nodes()
            .iter()
            .filter(|node| !node.is_start())
            .cloned()
            .collect()
    }

    fn as_workflow(&self) -> Option<&Workflow> {
        Some(self)
    }

    fn identity(&self) -> Option<usize> {
        Some(Arc::as_ptr(&self.inner) as usize)
    }
}

impl From<Workflow> for Node {
    fn from(workflow: Workflow) -> Self {
        workflow.as_node()
    }
}

impl From<&Workflow> for Node {
    fn from(workflow: &Workflow) -> Self {
        workflow.as_node()
    }
}

impl Agent for Workflow {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn description(&self) -> &str {
        &self.inner.description
    }

    fn sub_agents(&self) -> &[Arc<dyn Agent>] {
        &self.inner.sub_agents
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        Box::pin(RunStream::new(move |sink| {
            Box::pin(async move {
                let history = replay_history(&ctx);
                let input = root_input(&ctx, &history);
                let runtime = Arc::new(Runtime::new(sink, history, ctx.is_resumable()));
                // The workflow runs below a node of no kind that authors its own events after it,
                // at the path the invocation gives it (empty at the root of an app).
                let parent_path = ctx.node_path().parent();
                let holder = NodeContext::new(
                    ctx.with_node_path(parent_path),
                    Placement {
                        node: Node::from(crate::START),
                        run_id: String::new(),
                        author: Arc::from(self.name()),
                        keeps_event_author: false,
                        output_for_ancestors: Vec::new(),
                        resume_inputs: Default::default(),
                        attempt: 1,
                    },
                    runtime,
                );
                let run_id = ctx
                    .node_path()
                    .run_id()
                    .map_or_else(|| "1".to_owned(), str::to_owned);
                let outcome = run_child(
                    &holder,
                    &self.as_node(),
                    input,
                    ChildRun {
                        run_id: Some(run_id),
                        ..ChildRun::default()
                    },
                )
                .await;
                match outcome.error {
                    Some(error) => Err(error.into_core()),
                    None => Ok(()),
                }
            })
        }))
    }
}

/// The events a resumed run replays from: those of this invocation, and of the invocation whose
/// questions the user's latest message answers (a runner that is not resumable gives that message
/// an invocation of its own).
fn replay_history(ctx: &InvocationContext) -> Vec<Event> {
    ctx.with_session(|session| replay_history_in(ctx, session))
}

/// [`replay_history`] in `session`, read under the context's session lock.
fn replay_history_in(ctx: &InvocationContext, session: &adk_core::Session) -> Vec<Event> {
    let live = adk_flow::without_rewound(&session.events);
    // Each invocation whose first user message answered calls continues the invocation of those
    // calls, which may itself continue another.
    let mut chain: Vec<&InvocationId> = vec![ctx.invocation_id()];
    let mut index = 0;
    while let Some(&invocation) = chain.get(index) {
        index += 1;
        let answered: Vec<&FunctionCallId> = live
            .iter()
            .filter(|event| event.author == USER_AUTHOR && &event.invocation_id == invocation)
            .flat_map(|event| event.function_responses())
            .filter_map(|response| response.id.as_ref())
            .collect();
        let continued = live.iter().find(|event| {
            &event.invocation_id != invocation
                && event
                    .function_calls()
                    .any(|call| call.id.as_ref().is_some_and(|id| answered.contains(&id)))
        });
        if let Some(event) = continued
            && !chain.contains(&&event.invocation_id)
        {
            chain.push(&event.invocation_id);
        }
    }
    let current = ctx.invocation_id();
    if chain.len() == 1
        && !live
            .iter()
            .any(|event| &event.invocation_id == current && event.author != USER_AUTHOR)
    {
        return Vec::new();
    }
    live.iter()
        .filter(|event| chain.contains(&&event.invocation_id))
        .map(|event| (*event).clone())
        .collect()
}

/// The workflow's input: the user's message that started the invocation being continued, or the
/// message of this one.
fn root_input(ctx: &InvocationContext, history: &[Event]) -> NodeInput {
    let original: Option<&Content> = history
        .iter()
        .filter(|event| event.author == USER_AUTHOR)
        .filter_map(Event::content)
        .find(|content| content.function_responses().next().is_none());
    match original.or(ctx.user_content()) {
        Some(content) => NodeInput::Content(content.clone()),
        None => NodeInput::None,
    }
}

/// Builds a [`Workflow`]; made by [`Workflow::builder`].
#[must_use]
pub struct WorkflowBuilder {
    name: String,
    description: String,
    items: Vec<EdgeItem>,
    max_concurrency: Option<usize>,
    options: NodeOptions,
}

impl WorkflowBuilder {
    /// What the workflow does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Adds a chain: each element linked to the next (`(START, a, b)`); an array inside fans out
    /// and in (`(START, [a, b], join)`), a [`Routes`](crate::Routes) routes
    /// (`(classify, Routes::new().on("x", a))`).
    pub fn chain(mut self, chain: impl IntoChain) -> Self {
        self.items.push(EdgeItem::Chain(chain.into_chain()));
        self
    }

    /// Adds an explicit edge.
    pub fn edge(mut self, edge: Edge) -> Self {
        self.items.push(EdgeItem::Edge(edge));
        self
    }

    /// Runs at most `limit` graph nodes at once (`0`: no limit). Nodes a node runs itself are
    /// not counted: their caller waits for them.
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = (limit > 0).then_some(limit);
        self
    }

    /// Retries the whole workflow when one of its nodes fails for good (as a node of another
    /// workflow, or as the root).
    pub fn retry(mut self, config: crate::RetryConfig) -> Self {
        self.options.retry = Some(config);
        self
    }

    /// Fails the workflow when a run of it takes longer than `timeout`.
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Builds the workflow, checking its graph (see [`WorkflowErrorKind`](crate::WorkflowErrorKind)
    /// for what is refused).
    ///
    /// # Errors
    ///
    /// A [`WorkflowError`] saying which rule the graph breaks.
    pub fn build(self) -> Result<Workflow, WorkflowError> {
        if !graph::is_identifier(&self.name) {
            return Err(WorkflowError::graph(format!(
                "workflow name '{}' is not an identifier: use letters, digits and '_', not starting with a digit",
                self.name
            )));
        }
        let graph = Graph::build(&self.items)?;
        let mut sub_agents: Vec<Arc<dyn Agent>> = Vec::new();
        for node in graph.nodes() {
            if let Some(agent) = node.body().as_agent() {
                sub_agents.push(agent.clone());
            } else if let Some(workflow) = node.body().as_workflow() {
                sub_agents.push(Arc::new(workflow.clone()));
            }
        }
        Ok(Workflow {
            inner: Arc::new(Inner {
                name: self.name,
                description: self.description,
                items: self.items,
                graph,
                max_concurrency: self.max_concurrency,
                options: self.options,
                sub_agents,
            }),
        })
    }
}
