//! The workflow scheduler's overhead: a chain of 1,000 function nodes (one node run and one edge
//! per step), and a 100-wide fan-out into a join, each run to its end through the runner with
//! in-memory sessions, so every event is stamped, streamed and appended as in an app. The nodes
//! do nothing but pass their input on, so what is measured is the scheduling, the events and the
//! session. Divide by the node count for the cost per node and edge, and compare it with the
//! flow's per-step cost (`cargo bench -p adk-flow --bench step_overhead`). Run with `cargo bench
//! -p adk-workflow`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use adk_core::Content;
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use adk_workflow::{ChainElement, Node, NodeError, START, Workflow};
use futures::StreamExt as _;
use serde_json::Value;

fn main() {
    divan::main();
}

/// A node that answers its input.
fn pass(name: String) -> Node {
    Node::function(
        name,
        |input: Value| async move { Ok::<_, NodeError>(input) },
    )
}

/// `START → n0 → n1 → … → n{len-1}`.
fn chain(len: usize) -> Workflow {
    let mut elements: Vec<ChainElement> = vec![START.into()];
    elements.extend((0..len).map(|index| pass(format!("n{index}")).into()));
    Workflow::builder("chain").chain(elements).build().unwrap()
}

/// `START → [w0 … w{width-1}] → join`.
fn fan_out(width: usize) -> Workflow {
    let workers: Vec<Node> = (0..width).map(|index| pass(format!("w{index}"))).collect();
    Workflow::builder("fan")
        .chain((START, workers, Node::join("join")))
        .build()
        .unwrap()
}

/// A runner on `workflow` and a counter for fresh session ids.
fn runner(workflow: Workflow) -> (Runner, AtomicU64) {
    let runner = Runner::builder("bench", Arc::new(workflow), InMemorySessionService::new())
        .auto_create_session(true)
        .build()
        .unwrap();
    (runner, AtomicU64::new(0))
}

/// Runs one invocation on a fresh session and answers how many events it made.
async fn run_once(runner: &Runner, sessions: &AtomicU64) -> usize {
    let session = format!("s{}", sessions.fetch_add(1, Ordering::Relaxed));
    let mut events = Box::pin(runner.run("user", session, Content::user("go")));
    let mut count = 0;
    while let Some(event) = events.next().await {
        event.unwrap();
        count += 1;
    }
    count
}

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[divan::bench(args = [10, 100, 1_000], sample_count = 10)]
fn chain_of_nodes(bencher: divan::Bencher<'_, '_>, len: usize) {
    let runtime = tokio_runtime();
    let (runner, sessions) = runner(chain(len));
    bencher.bench_local(|| runtime.block_on(run_once(&runner, &sessions)));
}

#[divan::bench(args = [10, 100], sample_count = 10)]
fn fan_out_and_join(bencher: divan::Bencher<'_, '_>, width: usize) {
    let runtime = tokio_runtime();
    let (runner, sessions) = runner(fan_out(width));
    bencher.bench_local(|| runtime.block_on(run_once(&runner, &sessions)));
}
