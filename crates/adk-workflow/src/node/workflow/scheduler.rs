//! A workflow's run: triggers from `START`, node runs scheduled in the order their triggers came
//! (up to `max_concurrency`), completions handled in the order their runs were scheduled, outputs
//! passed along the edges their routes take, joins fired once all their predecessors completed,
//! checkpoints of node statuses in resumable apps, and the terminal output as the workflow's.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::pin;

use adk_core::{Event, Route};
use futures::FutureExt as _;
use futures::future::{BoxFuture, Either, select};
use futures::stream::{FuturesUnordered, StreamExt as _};
use serde_json::{Map, Value, json};

use super::graph::Graph;
use crate::node::context::replay::intercept;
use crate::node::context::runtime::{ChildOutcome, ChildRun, run_child};
use crate::{NodeContext, NodeError, NodeInput, Workflow, WorkflowError};

/// A node's status in a checkpoint (ADK's `NodeStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running = 2,
    Completed = 3,
    Waiting = 4,
    Failed = 5,
}

/// A node's state in this run.
#[derive(Debug, Clone)]
struct NodeState {
    status: Status,
    interrupts: Vec<String>,
}

/// A pending run of a node: its input and where it goes.
#[derive(Debug)]
struct Trigger {
    input: NodeInput,
    use_sub_branch: bool,
    /// The branch the run starts from; `None` for the workflow's.
    branch: Option<String>,
}

/// A finished node run, with the order it was scheduled in.
type Finished = (usize, usize, ChildOutcome);

/// The node runs in flight, and those that finished while the loop waited on something else.
struct Running<'a> {
    futures: FuturesUnordered<BoxFuture<'a, Finished>>,
    finished: Vec<Finished>,
    nodes: HashSet<usize>,
}

impl<'a> Running<'a> {
    /// Awaits `future` while the node runs go on, as they would beside the loop.
    async fn drive<T>(&mut self, future: impl Future<Output = T>) -> T {
        let mut future = pin!(future);
        loop {
            if self.futures.is_empty() {
                return future.await;
            }
            match select(future, self.futures.next()).await {
                Either::Left((value, _)) => return value,
                Either::Right((finished, rest)) => {
                    self.finished.extend(finished);
                    future = rest;
                }
            }
        }
    }

    /// Waits for at least one run to finish, and takes every run finished by then, in the order
    /// they were scheduled.
    async fn next_batch(&mut self) -> Vec<Finished> {
        if self.finished.is_empty()
            && let Some(first) = self.futures.next().await
        {
            self.finished.push(first);
        }
        while let Some(Some(more)) = self.futures.next().now_or_never() {
            self.finished.push(more);
        }
        let mut batch = std::mem::take(&mut self.finished);
        batch.sort_by_key(|(order, _, _)| *order);
        batch
    }
}

/// What the loop knows.
struct LoopState {
    nodes: Vec<Option<NodeState>>,
    /// Triggers waiting per node, nodes in the order their first waiting trigger came.
    triggers: VecDeque<(usize, VecDeque<Trigger>)>,
    outputs: Vec<Option<Value>>,
    branches: Vec<String>,
    /// Per join: the predecessors that completed since it last fired.
    arrivals: BTreeMap<usize, HashSet<usize>>,
    interrupts: Vec<String>,
    replayed: HashSet<usize>,
    scheduled: usize,
}

impl LoopState {
    fn push_trigger(&mut self, node: usize, trigger: Trigger) {
        match self.triggers.iter_mut().find(|(index, _)| *index == node) {
            Some((_, queue)) => queue.push_back(trigger),
            None => self.triggers.push_back((node, VecDeque::from([trigger]))),
        }
    }

    fn pop_trigger(&mut self, node: usize) -> Option<Trigger> {
        let position = self.triggers.iter().position(|(index, _)| *index == node)?;
        let trigger = self.triggers[position].1.pop_front();
        if self.triggers[position].1.is_empty() {
            self.triggers.remove(position);
        }
        trigger
    }

    fn status(&self, node: usize) -> Option<Status> {
        self.nodes[node].as_ref().map(|state| state.status)
    }

    fn add_interrupts(&mut self, ids: &[String]) {
        for id in ids {
            if !self.interrupts.contains(id) {
                self.interrupts.push(id.clone());
            }
        }
    }
}

/// Runs `workflow`'s graph in the node run `ctx` on `input`.
pub(crate) async fn run_graph(
    workflow: &Workflow,
    ctx: &NodeContext,
    input: NodeInput,
) -> Result<(), NodeError> {
    let graph = workflow.graph();
    let count = graph.len();
    let mut state = LoopState {
        nodes: vec![None; count],
        triggers: VecDeque::new(),
        outputs: vec![None; count],
        branches: vec![String::new(); count],
        arrivals: BTreeMap::new(),
        interrupts: Vec::new(),
        replayed: HashSet::new(),
        scheduled: 0,
    };
    seed(graph, ctx, &mut state, input);
    let mut running = Running {
        futures: FuturesUnordered::new(),
        finished: Vec::new(),
        nodes: HashSet::new(),
    };
    loop {
        schedule(workflow, ctx, &mut state, &mut running).await?;
        if running.nodes.is_empty() {
            break;
        }
        let batch = running.next_batch().await;
        let mut failure = None;
        for (_, index, outcome) in batch {
            running.nodes.remove(&index);
            if let Some(error) = outcome.error {
                if let Some(node) = state.nodes[index].as_mut() {
                    node.status = Status::Failed;
                }
                failure.get_or_insert(error);
                continue;
            }
            complete(workflow, ctx, &mut state, &mut running, index, outcome).await?;
        }
        if let Some(error) = failure {
            // Runs still in flight are dropped with `running`, which cancels them.
            return Err(error);
        }
    }

    let waiting: Vec<String> = state
        .nodes
        .iter()
        .flatten()
        .filter(|node| node.status == Status::Waiting)
        .flat_map(|node| node.interrupts.iter().cloned())
        .collect();
    state.add_interrupts(&waiting);
    if !state.interrupts.is_empty() {
        ctx.add_interrupts(&state.interrupts);
        return Ok(());
    }
    let terminal: Vec<&Value> = (0..count)
        .filter(|&index| graph.is_terminal(index))
        .filter_map(|index| state.outputs[index].as_ref())
        .collect();
    match terminal.as_slice() {
        [] => {}
        [output] => {
            // The terminal node's event already names the workflow in `outputFor`: no event.
            ctx.set_output((*output).clone());
            ctx.delegate_output();
        }
        many => {
            return Err(NodeError::from_workflow(WorkflowError::config(format!(
                "Workflow {}: multiple terminal nodes produced output ({}). A workflow must have at most one terminal output.",
                workflow.name(),
                many.len()
            ))));
        }
    }
    if ctx.runtime().resumable {
        let mut event = raw_event(workflow, ctx);
        event.actions.end_of_agent = Some(true);
        send(ctx, event).await?;
    }
    Ok(())
}

/// One trigger per successor of `START` (each on a branch of its own when there are several).
fn seed(graph: &Graph, ctx: &NodeContext, state: &mut LoopState, input: NodeInput) {
    let successors: Vec<usize> = graph.successors_of_start().collect();
    let use_sub_branch = successors.len() > 1;
    for target in successors {
        if graph.node_at(target).body().waits_for_all_predecessors() {
            state.outputs[0] = Some(input.to_value());
            state.branches[0] = ctx.branch().unwrap_or_default().to_owned();
            fire_join_if_ready(graph, state, target);
            continue;
        }
        state.push_trigger(
            target,
            Trigger {
                input: input.clone(),
                use_sub_branch,
                branch: None,
            },
        );
    }
}

/// Starts a run of each node with a waiting trigger that may run now, in the order the triggers
/// came.
async fn schedule<'a>(
    workflow: &'a Workflow,
    ctx: &'a NodeContext,
    state: &mut LoopState,
    running: &mut Running<'a>,
) -> Result<(), NodeError> {
    let graph = workflow.graph();
    let task_agent_waits = state.nodes.iter().enumerate().any(|(index, node)| {
        node.as_ref()
            .is_some_and(|node| node.status == Status::Waiting)
            && graph.node_at(index).body().agent_mode() == Some(adk_flow::AgentMode::Task)
    });
    if task_agent_waits {
        return Ok(());
    }
    let candidates: Vec<usize> = state.triggers.iter().map(|(index, _)| *index).collect();
    for index in candidates {
        if running.nodes.contains(&index) {
            continue;
        }
        match state.nodes[index].as_ref() {
            Some(node) if node.status == Status::Running => continue,
            Some(node) if node.status == Status::Waiting && !node.interrupts.is_empty() => {
                continue;
            }
            _ => {}
        }
        if workflow
            .max_concurrency()
            .is_some_and(|limit| running.nodes.len() >= limit)
        {
            break;
        }
        let Some(trigger) = state.pop_trigger(index) else {
            continue;
        };
        state.nodes[index] = Some(NodeState {
            status: Status::Running,
            interrupts: Vec::new(),
        });
        let node = graph.node_at(index);
        let runtime = ctx.runtime();
        let run_id = runtime.next_run_id(ctx.node_path(), node.name());
        let path = ctx.node_path().child(node.name(), &run_id);
        let replayed = runtime
            .recorded(ctx.node_path(), path.leaf())
            .is_some_and(|record| !intercept(node, &record, false).should_run);
        if replayed {
            state.replayed.insert(index);
        }
        let isolation_scope = (node.body().agent_mode() == Some(adk_flow::AgentMode::Task))
            .then(|| Some(std::sync::Arc::from(path.as_str())));
        let run = ChildRun {
            run_id: Some(run_id),
            use_sub_branch: trigger.use_sub_branch,
            branch: trigger
                .branch
                .map(|branch| (!branch.is_empty()).then_some(branch)),
            isolation_scope,
            use_as_output: graph.is_terminal(index),
            static_node: true,
        };
        let order = state.scheduled;
        state.scheduled += 1;
        running.nodes.insert(index);
        let input = trigger.input;
        running.futures.push(Box::pin(async move {
            (order, index, run_child(ctx, node, input, run).await)
        }));
        if !replayed {
            checkpoint(workflow, ctx, state, running).await?;
        }
    }
    Ok(())
}

/// Handles a node run that finished without failing.
async fn complete<'a>(
    workflow: &'a Workflow,
    ctx: &'a NodeContext,
    state: &mut LoopState,
    running: &mut Running<'a>,
    index: usize,
    outcome: ChildOutcome,
) -> Result<(), NodeError> {
    let graph = workflow.graph();
    let node = graph.node_at(index);
    let replayed = state.replayed.remove(&index);
    if !outcome.interrupts.is_empty() {
        state.add_interrupts(&outcome.interrupts);
        state.nodes[index] = Some(NodeState {
            status: Status::Waiting,
            interrupts: outcome.interrupts,
        });
        return checkpoint(workflow, ctx, state, running).await;
    }
    if node.options().wait_for_output && outcome.output.is_none() && outcome.route.is_none() {
        if let Some(node) = state.nodes[index].as_mut() {
            node.status = Status::Waiting;
        }
        return checkpoint(workflow, ctx, state, running).await;
    }
    if let Some(node) = state.nodes[index].as_mut() {
        node.status = Status::Completed;
    }
    state.outputs[index].clone_from(&outcome.output);
    state.branches[index] = outcome.branch.clone().unwrap_or_default();
    if !replayed {
        checkpoint(workflow, ctx, state, running).await?;
    } else if ctx.runtime().resumable
        && let Some(output) = &outcome.output
    {
        // A fast-forwarded run shows its recorded output again, so that a resumable stream
        // holds every node's result.
        let mut event = raw_event(workflow, ctx).with_output(output.clone());
        event.node_info.path = outcome.path.clone();
        running.drive(send(ctx, event)).await?;
    }
    pass_on(
        graph,
        state,
        index,
        outcome.output,
        outcome.route.as_ref(),
        outcome.branch,
    );
    Ok(())
}

/// Triggers the nodes a completion of `index` leads to.
fn pass_on(
    graph: &Graph,
    state: &mut LoopState,
    index: usize,
    output: Option<Value>,
    route: Option<&Route>,
    branch: Option<String>,
) {
    let next = graph.next_nodes(index, route);
    let use_sub_branch = next.len() > 1;
    let input = output.map_or(NodeInput::None, NodeInput::from);
    for target in next {
        if graph.node_at(target).body().waits_for_all_predecessors() {
            state.arrivals.entry(target).or_default().insert(index);
            fire_join_if_ready(graph, state, target);
            continue;
        }
        state.push_trigger(
            target,
            Trigger {
                input: input.clone(),
                use_sub_branch,
                branch: branch.clone(),
            },
        );
    }
}

/// Triggers join `target` when every predecessor completed since it last fired, with their
/// outputs by name, on the branch their branches share.
fn fire_join_if_ready(graph: &Graph, state: &mut LoopState, target: usize) {
    let predecessors = graph.predecessors(target);
    let arrived = state.arrivals.get(&target);
    let ready = predecessors.iter().all(|&predecessor| {
        predecessor == 0
            || (arrived.is_some_and(|arrived| arrived.contains(&predecessor))
                && state.status(predecessor) == Some(Status::Completed))
    });
    if !ready {
        return;
    }
    state.arrivals.remove(&target);
    let outputs: Map<String, Value> = predecessors
        .iter()
        .map(|&predecessor| {
            (
                graph.node_at(predecessor).name().to_owned(),
                state.outputs[predecessor].clone().unwrap_or(Value::Null),
            )
        })
        .collect();
    let branches: Vec<&str> = predecessors
        .iter()
        .map(|&predecessor| state.branches[predecessor].as_str())
        .collect();
    state.push_trigger(
        target,
        Trigger {
            input: NodeInput::Value(Value::Object(outputs)),
            use_sub_branch: false,
            branch: Some(common_branch(&branches)),
        },
    );
}

/// The dotted prefix `branches` share.
fn common_branch(branches: &[&str]) -> String {
    let mut iters: Vec<_> = branches
        .iter()
        .map(|branch| branch.split('.').filter(|segment| !segment.is_empty()))
        .collect();
    let mut shared = Vec::new();
    'segments: loop {
        let mut segment = None;
        for iter in &mut iters {
            match (iter.next(), segment) {
                (None, _) => break 'segments,
                (Some(next), None) => segment = Some(next),
                (Some(next), Some(seen)) if next != seen => break 'segments,
                _ => {}
            }
        }
        match segment {
            Some(segment) => shared.push(segment),
            None => break,
        }
    }
    shared.join(".")
}

/// In a resumable app, records every node's status in an event of the workflow (ADK's
/// `agentState.nodes`), from which a later run sees how far it came.
async fn checkpoint<'a>(
    workflow: &'a Workflow,
    ctx: &'a NodeContext,
    state: &LoopState,
    running: &mut Running<'a>,
) -> Result<(), NodeError> {
    if !ctx.runtime().resumable {
        return Ok(());
    }
    let graph = workflow.graph();
    let nodes: Map<String, Value> = state
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(index, node)| {
            let node = node.as_ref()?;
            Some((
                graph.node_at(index).name().to_owned(),
                json!({"status": node.status as u8, "interrupts": node.interrupts}),
            ))
        })
        .collect();
    let mut event = raw_event(workflow, ctx);
    event.actions.agent_state = Some(json!({ "nodes": nodes }));
    running.drive(send(ctx, event)).await
}

/// An event of the workflow itself, outside every node (`nodeInfo.path` empty), on its branch.
fn raw_event(workflow: &Workflow, ctx: &NodeContext) -> Event {
    let invocation = ctx.invocation();
    Event::with_ids_and_clock(
        invocation.invocation_id().clone(),
        workflow.name(),
        invocation.ids(),
        invocation.clock(),
    )
    .with_branch(invocation.branch().map(str::to_owned))
}

async fn send(ctx: &NodeContext, event: Event) -> Result<(), NodeError> {
    if ctx.runtime().sink.send(event).await {
        Ok(())
    } else {
        Err(NodeError::new("Cancelled", "the run was dropped"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_share_their_common_prefix() {
        assert_eq!(common_branch(&["a@1.b@1", "a@1.c@1"]), "a@1");
        assert_eq!(common_branch(&["fetch_a@1", "fetch_b@1"]), "");
        assert_eq!(common_branch(&["", "x"]), "");
    }
}
