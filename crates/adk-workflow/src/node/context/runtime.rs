//! Running one node: its run id and path, its branch and scope, replaying it from the record when
//! the workflow resumes, its attempts with retries and a timeout, and its error events (ADK's
//! `NodeRunner` and dynamic-node scheduler).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use adk_core::{Event, NodePath, Route};
use parking_lot::Mutex;
use serde_json::Value;

use super::replay::{ChildScan, intercept, scan};
use super::{NodeContext, Placement};
use crate::sink::EventSink;
use crate::{Node, NodeError, NodeInput, NodeKind};

/// What every node of one run shares: where events go, the run-id counters, and the record of
/// the invocation being continued.
pub(crate) struct Runtime {
    pub(crate) sink: EventSink,
    /// Runs so far of each node name under each parent path.
    counters: Mutex<HashMap<(NodePath, String), u32>>,
    /// The events of the invocation being continued, for replay.
    history: Vec<Event>,
    /// The record of each parent path's child runs, scanned once.
    scans: Mutex<HashMap<NodePath, Arc<HashMap<String, ChildScan>>>>,
    /// Whether the app is resumable: workflows then checkpoint their nodes' statuses.
    pub(crate) resumable: bool,
    random: Mutex<u64>,
}

impl Runtime {
    pub(crate) fn new(sink: EventSink, history: Vec<Event>, resumable: bool) -> Self {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0x9e37_79b9, |elapsed| elapsed.subsec_nanos().into())
            | 1;
        Self {
            sink,
            counters: Mutex::default(),
            history,
            scans: Mutex::default(),
            resumable,
            random: Mutex::new(seed),
        }
    }

    /// The next run id of `name` under `parent`: `1`, `2`, ...
    pub(crate) fn next_run_id(&self, parent: &NodePath, name: &str) -> String {
        let mut counters = self.counters.lock();
        let count = counters
            .entry((parent.clone(), name.to_owned()))
            .or_insert(0);
        *count += 1;
        count.to_string()
    }

    /// What the record says about the run `segment` (`name@run`) below `parent`.
    pub(crate) fn recorded(&self, parent: &NodePath, segment: &str) -> Option<ChildScan> {
        if self.history.is_empty() {
            return None;
        }
        let records = {
            let mut scans = self.scans.lock();
            scans
                .entry(parent.clone())
                .or_insert_with(|| Arc::new(scan(&self.history, parent, true)))
                .clone()
        };
        records.get(segment).cloned()
    }

    /// A number in 0..1 for retry jitter (xorshift: jitter needs spread, not secrecy).
    fn random(&self) -> f64 {
        let mut state = self.random.lock();
        let mut x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        #[expect(
            clippy::cast_precision_loss,
            reason = "53 random bits are plenty for a jitter"
        )]
        let fraction = (x >> 11) as f64 / (1u64 << 53) as f64;
        fraction
    }
}

/// How a child run is placed.
#[derive(Default)]
pub(crate) struct ChildRun {
    /// The run id; by default the next for this node under its parent.
    pub(crate) run_id: Option<String>,
    /// Run on a branch of its own below the base branch.
    pub(crate) use_sub_branch: bool,
    /// The base branch instead of the parent's (`Some(None)`: the top).
    pub(crate) branch: Option<Option<String>>,
    /// The isolation scope instead of the parent's.
    pub(crate) isolation_scope: Option<Option<Arc<str>>>,
    /// The child's output is the parent's too.
    pub(crate) use_as_output: bool,
    /// A node of the parent workflow's graph (not a dynamic one).
    pub(crate) static_node: bool,
}

/// What a child run came to.
#[derive(Debug, Default)]
pub(crate) struct ChildOutcome {
    pub(crate) path: NodePath,
    pub(crate) output: Option<Value>,
    pub(crate) route: Option<Route>,
    pub(crate) interrupts: Vec<String>,
    pub(crate) error: Option<NodeError>,
    /// The branch the run ended on.
    pub(crate) branch: Option<String>,
}

/// Runs `node` as a child of the run `parent` on `input`.
pub(crate) async fn run_child(
    parent: &NodeContext,
    node: &Node,
    input: NodeInput,
    run: ChildRun,
) -> ChildOutcome {
    let runtime = parent.runtime().clone();
    let parent_path = parent.node_path().clone();
    let run_id = run
        .run_id
        .unwrap_or_else(|| runtime.next_run_id(&parent_path, node.name()));
    let path = parent_path.child(node.name(), &run_id);
    let base_branch = match run.branch {
        Some(branch) => branch.filter(|branch| !branch.is_empty()),
        None => parent.branch().map(str::to_owned),
    };
    let branch = if run.use_sub_branch {
        Some(sub_branch(base_branch.as_deref(), node.name(), &run_id))
    } else {
        base_branch
    };

    let mut resume_inputs = BTreeMap::new();
    let mut scope = match run.isolation_scope {
        Some(scope) => scope,
        None => parent.invocation().isolation_scope().cloned(),
    };
    if let Some(record) = runtime.recorded(&parent_path, path.leaf()) {
        if record.isolation_scope.is_some() {
            scope.clone_from(&record.isolation_scope);
        }
        let interception = intercept(node, &record, !run.static_node);
        if !interception.should_run {
            return ChildOutcome {
                path,
                output: interception.output,
                route: interception.route,
                interrupts: interception.interrupts,
                branch: record.branch.clone().or(branch),
                error: None,
            };
        }
        resume_inputs = interception.resume_inputs;
    }

    // A workflow names its children's events after itself; below any other node, events keep the
    // author the parent's had.
    let author: Arc<str> = if parent.node().kind() == NodeKind::Workflow {
        Arc::from(parent.node().name())
    } else {
        parent.author().clone()
    };
    let output_for_ancestors = if run.use_as_output {
        let mut ancestors = vec![parent_path.clone()];
        ancestors.extend(parent.output_for_ancestors().iter().cloned());
        ancestors
    } else {
        Vec::new()
    };
    let invocation = parent
        .invocation()
        .with_node_path(path.clone())
        .with_branch(branch.as_deref())
        .with_isolation_scope(scope);

    let mut attempt = 1;
    loop {
        let ctx = NodeContext::new(
            invocation.clone(),
            Placement {
                node: node.clone(),
                run_id: run_id.clone(),
                author: author.clone(),
                keeps_event_author: node.kind() == NodeKind::Agent,
                output_for_ancestors: output_for_ancestors.clone(),
                resume_inputs: resume_inputs.clone(),
                attempt,
            },
            runtime.clone(),
        );
        let result = match run_body(node, &ctx, input.clone()).await {
            Ok(()) => ctx.finish().await,
            Err(error) => Err(error),
        };
        let error = match result {
            Ok(()) => return outcome_of(&ctx, path),
            Err(error) if error.is_interrupted() => return outcome_of(&ctx, path),
            Err(error) => error,
        };
        if runtime.sink.is_closed() {
            return failed(path, error.at(ctx.node_path()));
        }
        let error = if error.node_path().is_some() {
            // A child's failure: the child already told about it.
            error
        } else {
            let mut event = ctx.new_event();
            event.response.error_code = Some(error.code().to_owned());
            event.response.error_message = Some(error.message().to_owned());
            if ctx.emit(event).await.is_err() {
                return failed(path, error.at(ctx.node_path()));
            }
            error.at(ctx.node_path())
        };
        let retry = node
            .options()
            .retry
            .as_ref()
            .filter(|config| config.should_retry(error.code(), attempt));
        let Some(config) = retry else {
            return failed(path, error);
        };
        tracing::warn!(
            node = node.name(),
            attempt,
            error = %error,
            "node failed and is retried"
        );
        tokio::time::sleep(config.jittered_delay(attempt, runtime.random())).await;
        attempt += 1;
    }
}

/// Runs the node's body, within its timeout when it has one.
async fn run_body(node: &Node, ctx: &NodeContext, input: NodeInput) -> Result<(), NodeError> {
    let body = node.body().run(ctx, input);
    match node.options().timeout {
        None => body.await,
        Some(timeout) => match tokio::time::timeout(timeout, body).await {
            Ok(result) => result,
            Err(_) => Err(NodeError::new(
                "NodeTimeoutError",
                format!(
                    "Node '{}' timed out after {} seconds.",
                    node.name(),
                    seconds(timeout)
                ),
            )),
        },
    }
}

/// A duration in seconds as Python prints a float (`0.5`, `2.0`).
fn seconds(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{seconds:.1}")
    } else {
        format!("{seconds}")
    }
}

fn outcome_of(ctx: &NodeContext, path: NodePath) -> ChildOutcome {
    let result = ctx.take_result();
    ChildOutcome {
        path,
        output: result.output,
        route: result.route,
        interrupts: result.interrupts,
        error: None,
        branch: ctx.branch().map(str::to_owned),
    }
}

fn failed(path: NodePath, error: NodeError) -> ChildOutcome {
    ChildOutcome {
        path,
        error: Some(error),
        ..ChildOutcome::default()
    }
}

/// `base.name@run_id` (`name@run_id` at the top).
pub(crate) fn sub_branch(base: Option<&str>, name: &str, run_id: &str) -> String {
    match base {
        Some(base) if !base.is_empty() => format!("{base}.{name}@{run_id}"),
        _ => format!("{name}@{run_id}"),
    }
}
