//! Running one phase: its tasks at the same time up to the concurrency limit, each attempt within
//! the task timeout, failed attempts retried after a growing wait.
//!
//! Everything is pulled through one stream: a task's processor advances only when the
//! orchestrator's consumer asks for the next event, so an agent processor's events are stored
//! before its next step reads the session, and dropping the stream stops every task of the
//! phase.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use adk_core::{Event, InvocationContext};
use adk_telemetry::InstrumentStream as _;
use async_stream::stream;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use serde_json::{Value, json};

use crate::events::status_event;
use crate::processor::output_text;
use crate::{
    FailureReason, OrchestrationConfig, Task, TaskFailure, TaskInput, TaskProcessor, TaskStep,
};

/// What a phase's stream yields: an event of a task, or the end of one.
pub(crate) enum Progress {
    // Boxed: an event is far larger than the end of a task.
    Event(Box<Event>),
    Done {
        id: String,
        outcome: Result<Value, TaskFailure>,
    },
}

/// What every task of a run shares.
pub(crate) struct Execution {
    pub(crate) processors: HashMap<String, Arc<dyn TaskProcessor>>,
    pub(crate) config: OrchestrationConfig,
    /// The user's request that the plan answers.
    pub(crate) request: String,
    /// The orchestrator's name, the first part of each task's branch.
    pub(crate) name: String,
}

/// A task ready to run: the task and the outputs of the tasks it depends on.
pub(crate) struct ReadyTask {
    pub(crate) task: Task,
    pub(crate) dependency_outputs: BTreeMap<String, Value>,
}

/// Runs the tasks of phase `phase` (from 1); yields their events as they come and each task's end.
pub(crate) fn run_phase(
    execution: Arc<Execution>,
    ctx: &InvocationContext,
    phase: usize,
    tasks: Vec<ReadyTask>,
) -> BoxStream<'static, Progress> {
    let limit = execution.config.max_concurrent.max(1);
    let span = tracing::info_span!(
        "orchestrator_phase",
        "otel.name" = format!("phase {phase}"),
        "phase" = phase,
        "tasks" = tasks.len(),
    );
    let streams: Vec<BoxStream<'static, Progress>> = tasks
        .into_iter()
        .map(|ready| {
            let branch = format!("{}.{}", execution.name, ready.task.id);
            let task_ctx = ctx.branched(ctx.agent().clone(), &branch);
            run_task(execution.clone(), task_ctx, phase, ready, &span)
        })
        .collect();
    futures::stream::iter(streams)
        .flatten_unordered(limit)
        .in_span(span)
        .boxed()
}

/// Runs one task: its start event, then attempts until one succeeds or none are left.
fn run_task(
    execution: Arc<Execution>,
    ctx: InvocationContext,
    phase: usize,
    ready: ReadyTask,
    phase_span: &tracing::Span,
) -> BoxStream<'static, Progress> {
    // The phase's span is not entered yet when its tasks are set up, so it is named as the parent.
    let span = tracing::info_span!(
        parent: phase_span,
        "orchestrator_task",
        "otel.name" = format!("task {}", ready.task.id),
        "task.id" = ready.task.id.as_str(),
        "task.processor" = ready.task.processor_type.as_str(),
    );
    let events = stream! {
        let id = ready.task.id.clone();
        let status = |status: &str, attempt: u32| {
            json!({"status": status, "task": id, "phase": phase, "attempt": attempt})
        };
        let Some(processor) = execution.processors.get(&ready.task.processor_type).cloned() else {
            let mut known: Vec<&str> = execution.processors.keys().map(String::as_str).collect();
            known.sort_unstable();
            let failure = TaskFailure::new(
                FailureReason::NoProcessor,
                format!(
                    "no processor is registered as '{}'; the processors are: {}",
                    ready.task.processor_type,
                    known.join(", ")
                ),
                0,
            );
            yield Progress::Event(Box::new(failed_event(&ctx, &id, &failure, status("task_failed", 0))));
            yield Progress::Done { id, outcome: Err(failure) };
            return;
        };
        let input = TaskInput {
            task: ready.task,
            request: execution.request.clone(),
            dependency_outputs: ready.dependency_outputs,
            attempt: 1,
            ctx: ctx.clone(),
        };
        yield Progress::Event(Box::new(status_event(&ctx, input.brief(), status("task_started", 1))));
        let retry = execution.config.retry;
        for attempt in 1..=retry.max_attempts {
            let mut this_attempt = input.clone();
            this_attempt.attempt = attempt;
            let mut steps = processor.process(this_attempt);
            let deadline = execution
                .config
                .default_timeout
                .map(|timeout| (tokio::time::Instant::now() + timeout, timeout));
            let outcome = loop {
                let next = match deadline {
                    Some((deadline, timeout)) => {
                        match tokio::time::timeout_at(deadline, steps.next()).await {
                            Ok(next) => next,
                            Err(_) => {
                                break Err(TaskFailure::new(
                                    FailureReason::Timeout,
                                    format!("the attempt took longer than {timeout:?} and was stopped"),
                                    attempt,
                                ));
                            }
                        }
                    }
                    None => steps.next().await,
                };
                match next {
                    Some(Ok(TaskStep::Event(event))) => yield Progress::Event(event),
                    Some(Ok(TaskStep::Output(output))) => break Ok(output),
                    Some(Err(error)) => {
                        break Err(TaskFailure::new(FailureReason::Error, error.to_string(), attempt));
                    }
                    None => break Ok(Value::Null),
                }
            };
            // Dropping the processor's stream stops whatever it still had running.
            drop(steps);
            match outcome {
                Ok(output) => {
                    let event = status_event(&ctx, output_text(&output), status("task_completed", attempt));
                    yield Progress::Event(Box::new(event));
                    yield Progress::Done { id, outcome: Ok(output) };
                    return;
                }
                Err(failure) if attempt < retry.max_attempts => {
                    let delay = retry.delay(attempt);
                    let text = format!(
                        "Task {id} failed (attempt {attempt} of {}): {failure}; trying again in {delay:?}.",
                        retry.max_attempts
                    );
                    let mut note = status("task_retrying", attempt);
                    note["error"] = json!(failure.message);
                    yield Progress::Event(Box::new(status_event(&ctx, text, note)));
                    tokio::time::sleep(delay).await;
                }
                Err(failure) => {
                    yield Progress::Event(Box::new(failed_event(&ctx, &id, &failure, status("task_failed", attempt))));
                    yield Progress::Done { id, outcome: Err(failure) };
                    return;
                }
            }
        }
    };
    events.in_span(span).boxed()
}

/// The event that says task `id` failed.
pub(crate) fn failed_event(
    ctx: &InvocationContext,
    id: &str,
    failure: &TaskFailure,
    mut status: Value,
) -> Event {
    status["reason"] = json!(failure.reason);
    status["error"] = json!(failure.message);
    status_event(ctx, format!("Task {id} failed: {failure}."), status)
}
