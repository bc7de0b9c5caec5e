//! [`FlexibleOrchestrator`]: the planning orchestrator of dspy-go as an agent. It asks the
//! analyzer for a plan, parses it, orders it into phases, runs the phases in order and the tasks
//! of a phase at the same time, and reports the outcome in events and in the session state.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use adk_core::{
    Agent, Content, Error, ErrorKind, Event, EventStream, InvocationContext, Llm, LlmRequest,
    LlmResponse, Result,
};
use adk_telemetry::InstrumentStream as _;
use async_stream::try_stream;
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::analyzer::analysis_text;
use crate::events::status_event;
use crate::execute::{Execution, Progress, ReadyTask, failed_event, run_phase};
use crate::model_call::call_model;
use crate::processor::output_text;
use crate::{
    AnalysisError, AnalysisFailure, AnalyzerConfig, DependencyPlanCreator, FailureReason,
    OrchestrationConfig, OrchestratorResult, Plan, PlanCreator, TaskFailure, TaskParser,
    TaskProcessor, XmlTaskParser,
};

/// The state key the result is written to unless another is set.
pub const DEFAULT_RESULT_KEY: &str = "orchestrator_result";

/// Breaks a request into tasks with a model, and runs them with registered processors.
///
/// A run, as dspy-go's `Process`:
///
/// 1. **Analysis.** The analyzer model gets the user's message and an instruction built from
///    the [`AnalyzerConfig`] and the registered processors, and answers with a plan in XML. Its
///    answer is an event of the orchestrator.
/// 2. **Parsing and planning.** The [`TaskParser`] reads the tasks, the [`PlanCreator`] orders
///    them into phases. An answer that fails either step is sent back to the analyzer with what
///    was wrong, up to [`AnalyzerConfig::max_attempts`] times; then the run fails with an
///    [`AnalysisError`]. The plan is announced in an event.
/// 3. **Execution.** Phases run in order; the tasks of a phase run at the same time, at most
///    [`OrchestrationConfig::max_concurrent`] at once, each on its own branch
///    (`orchestrator.task_id`) with its processor. An attempt that fails or outlasts the timeout
///    is retried per the [`RetryConfig`](crate::RetryConfig); a task that still fails is marked
///    failed while its siblings go on, and the tasks that depend on it are marked failed without
///    running. Each task's start, retries and end are events.
/// 4. **Result.** The last event summarises the run, shows the outputs of the final tasks, and
///    writes the [`OrchestratorResult`] to the state under the result key.
///
/// Cancelling the invocation's token stops the running phase: its tasks are dropped and marked
/// cancelled, no later phase starts, and the summary still comes. Dropping the stream stops
/// everything at once.
///
/// ```
/// use std::sync::Arc;
/// use adk_orchestrator::{FlexibleOrchestrator, FnProcessor};
/// use adk_test::ScriptedModel;
/// use serde_json::json;
///
/// let orchestrator = FlexibleOrchestrator::builder("planner")
///     .model(ScriptedModel::new("scripted"))
///     .processor("echo", FnProcessor::new("Repeats its task.", |input| async move {
///         Ok(json!(input.task.description))
///     }))
///     .build()
///     .unwrap();
/// assert!(orchestrator.processor("echo").is_some());
/// ```
pub struct FlexibleOrchestrator {
    name: String,
    description: String,
    model: Arc<dyn Llm>,
    analyzer: AnalyzerConfig,
    processors: Vec<(String, Arc<dyn TaskProcessor>)>,
    sub_agents: Vec<Arc<dyn Agent>>,
    parser: Arc<dyn TaskParser>,
    planner: Arc<dyn PlanCreator>,
    config: OrchestrationConfig,
    result_key: String,
}

impl FlexibleOrchestrator {
    /// Starts building an orchestrator named `name`.
    pub fn builder(name: impl Into<String>) -> FlexibleOrchestratorBuilder {
        FlexibleOrchestratorBuilder {
            name: name.into(),
            description: String::new(),
            model: None,
            analyzer: AnalyzerConfig::default(),
            processors: Vec::new(),
            parser: None,
            planner: None,
            config: OrchestrationConfig::default(),
            result_key: DEFAULT_RESULT_KEY.to_owned(),
        }
    }

    /// The processor registered as `processor_type` (dspy-go's `GetProcessor`).
    pub fn processor(&self, processor_type: &str) -> Option<&Arc<dyn TaskProcessor>> {
        self.processors
            .iter()
            .find(|(name, _)| name == processor_type)
            .map(|(_, processor)| processor)
    }

    /// The state key the result is written to.
    pub fn result_key(&self) -> &str {
        &self.result_key
    }

    /// The instruction the analyzer gets.
    pub fn analyzer_instruction(&self) -> String {
        self.analyzer.instruction(
            self.processors
                .iter()
                .map(|(name, processor)| (name.as_str(), processor.description())),
        )
    }

    fn analyzer_request(&self, contents: &[Content]) -> LlmRequest {
        let mut request = LlmRequest::new(self.model.name(), contents.to_vec());
        request.system_instruction = Some(self.analyzer_instruction());
        request.config = self.analyzer.generate_config.clone();
        request
    }

    /// Reads the analyzer's answer as a plan.
    fn plan(&self, answer: &str) -> std::result::Result<Plan, AnalysisFailure> {
        let tasks = self.parser.parse(answer).map_err(AnalysisFailure::Parse)?;
        self.planner
            .create_plan(tasks)
            .map_err(AnalysisFailure::Plan)
    }
}

impl Agent for FlexibleOrchestrator {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn sub_agents(&self) -> &[Arc<dyn Agent>] {
        &self.sub_agents
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        adk_telemetry::trace_agent(ctx.clone(), self.orchestrate(ctx))
    }
}

impl FlexibleOrchestrator {
    fn orchestrate(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        Box::pin(try_stream! {
            let request = ctx
                .user_content()
                .and_then(Content::text)
                .unwrap_or_default();

            // Analysis: ask until an answer parses and plans, telling the model what was wrong.
            let mut contents = self.analyzer.contents(&request);
            let mut planned = None;
            let mut last_failure = None;
            let attempts = self.analyzer.max_attempts.max(1);
            for attempt in 1..=attempts {
                let model_request = self.analyzer_request(&contents);
                let span = adk_telemetry::call_llm_span(&ctx, &model_request);
                let model = self.model.clone();
                let mut responses = call_model(ctx.clone(), model_request, move |request| {
                    model.generate(request, adk_core::StreamingMode::None)
                })
                .in_span(span.clone());
                let mut answer: Option<LlmResponse> = None;
                let mut failure = None;
                while let Some(response) = responses.next().await {
                    match response {
                        Ok(response) if response.is_partial() => {}
                        Ok(response) => answer = Some(response),
                        Err(error) => {
                            adk_telemetry::record_error(&span, &error);
                            failure = Some(AnalysisFailure::Model(error));
                        }
                    }
                }
                if let Some(response) = answer {
                    let text = response.content.as_ref().and_then(Content::text).unwrap_or_default();
                    let mut event = ctx.new_event();
                    adk_telemetry::record_event_id(&span, &event.id);
                    let content = response.content.clone();
                    event.response = response;
                    yield event;
                    match self.plan(&text) {
                        Ok(plan) => {
                            planned = Some((plan, analysis_text(&text)));
                            break;
                        }
                        Err(error) => {
                            contents.extend(content);
                            contents.push(Content::user(format!(
                                "That plan cannot be used: {error}. Answer again with the whole \
                                 corrected plan as XML only."
                            )));
                            failure = Some(error);
                        }
                    }
                }
                let failure = failure.unwrap_or_else(|| {
                    AnalysisFailure::Model(Error::new(ErrorKind::Model, "the model gave no answer"))
                });
                let stop = matches!(
                    &failure,
                    AnalysisFailure::Model(error)
                        if matches!(error.kind(), ErrorKind::LlmCallsLimitExceeded | ErrorKind::Cancelled)
                );
                if attempt < attempts && !stop {
                    let text = format!("The plan could not be used ({failure}); asking again.");
                    let status = json!({"status": "analysis_retrying", "attempt": attempt, "error": failure.to_string()});
                    yield status_event(&ctx, text, status);
                }
                last_failure = Some(failure);
                if stop {
                    break;
                }
            }
            let Some((plan, analysis)) = planned else {
                let last = last_failure.unwrap_or_else(|| {
                    AnalysisFailure::Model(Error::new(ErrorKind::Model, "the model gave no answer"))
                });
                Err(Error::from(AnalysisError { attempts, last }))?;
                return;
            };

            let phases: Vec<Vec<String>> = plan
                .phases()
                .iter()
                .map(|phase| phase.iter().map(|task| task.id.clone()).collect())
                .collect();
            yield status_event(
                &ctx,
                plan_text(&plan),
                json!({"status": "planned", "phases": phases, "analysis": analysis}),
            );

            let execution = Arc::new(Execution {
                processors: self.processors.iter().cloned().collect::<HashMap<_, _>>(),
                config: self.config.clone(),
                request,
                name: self.name.clone(),
            });
            let sinks = sink_tasks(&plan);
            let mut result = OrchestratorResult {
                analysis,
                phases,
                ..OrchestratorResult::default()
            };
            let cancellation = ctx.cancellation().clone();
            let mut phases = plan.into_phases().into_iter().enumerate();
            while let Some((index, phase)) = phases.next() {
                if cancellation.is_cancelled() || ctx.is_ended() {
                    cancel_all(&mut result, phase.iter().map(|task| task.id.clone()));
                    cancel_all(&mut result, phases.by_ref().flat_map(|(_, phase)| phase).map(|task| task.id));
                    break;
                }
                let number = index + 1;
                let mut ready = Vec::with_capacity(phase.len());
                for task in phase {
                    if let Some(failed) = task.dependencies.iter().find(|id| result.failed_tasks.contains_key(*id)) {
                        let failure = TaskFailure::new(
                            FailureReason::DependencyFailed,
                            format!("task '{failed}', which it depends on, failed"),
                            0,
                        );
                        let task_ctx = ctx.branched(ctx.agent().clone(), &format!("{}.{}", self.name, task.id));
                        let status = json!({"status": "task_failed", "task": task.id, "phase": number, "attempt": 0});
                        yield failed_event(&task_ctx, &task.id, &failure, status);
                        result.failed_tasks.insert(task.id, failure);
                        continue;
                    }
                    let dependency_outputs = task
                        .dependencies
                        .iter()
                        .filter_map(|id| Some((id.clone(), result.completed_tasks.get(id)?.clone())))
                        .collect();
                    ready.push(ReadyTask { task, dependency_outputs });
                }
                let mut running: BTreeSet<String> = ready.iter().map(|ready| ready.task.id.clone()).collect();
                let mut progress = run_phase(execution.clone(), &ctx, number, ready);
                let mut cancelled = false;
                loop {
                    let next = tokio::select! {
                        biased;
                        () = cancellation.cancelled() => None,
                        next = progress.next() => Some(next),
                    };
                    match next {
                        None => {
                            cancelled = true;
                            break;
                        }
                        Some(None) => break,
                        Some(Some(Progress::Event(event))) => yield *event,
                        Some(Some(Progress::Done { id, outcome })) => {
                            running.remove(&id);
                            match outcome {
                                Ok(output) => {
                                    result.completed_tasks.insert(id, output);
                                }
                                Err(failure) => {
                                    result.failed_tasks.insert(id, failure);
                                }
                            }
                        }
                    }
                }
                // Dropping the phase's stream stops the tasks still running in it.
                drop(progress);
                if cancelled {
                    cancel_all(&mut result, running);
                    cancel_all(&mut result, phases.by_ref().flat_map(|(_, phase)| phase).map(|task| task.id));
                }
            }

            yield self.summary_event(&ctx, &result, &sinks);
        })
    }

    /// The last event: the outputs of the final tasks and a summary, with the result in the state.
    fn summary_event(
        &self,
        ctx: &InvocationContext,
        result: &OrchestratorResult,
        sinks: &[String],
    ) -> Event {
        let total = result.completed_tasks.len() + result.failed_tasks.len();
        let mut text = String::new();
        for id in sinks {
            if let Some(output) = result.completed_tasks.get(id) {
                let output = output_text(output);
                if !output.trim().is_empty() {
                    text.push_str(output.trim());
                    text.push_str("\n\n");
                }
            }
        }
        text.push_str(&format!(
            "({} of {total} tasks completed in {} phase(s)",
            result.completed_tasks.len(),
            result.phases.len()
        ));
        if result.cancelled {
            text.push_str("; the run was cancelled");
        }
        if !result.failed_tasks.is_empty() {
            let failed: Vec<String> = result
                .failed_tasks
                .iter()
                .map(|(id, failure)| format!("{id}: {}", failure.reason))
                .collect();
            text.push_str(&format!("; failed: {}", failed.join(", ")));
        }
        text.push_str(".)");
        let status = json!({
            "status": "finished",
            "completed": result.completed_tasks.len(),
            "failed": result.failed_tasks.len(),
            "cancelled": result.cancelled,
        });
        let mut event = status_event(ctx, text, status);
        event.actions.state_delta.insert(
            self.result_key.clone(),
            serde_json::to_value(result).unwrap_or(Value::Null),
        );
        event
    }
}

/// Marks `ids` cancelled in `result`.
fn cancel_all(result: &mut OrchestratorResult, ids: impl IntoIterator<Item = String>) {
    result.cancelled = true;
    for id in ids {
        result.failed_tasks.insert(
            id,
            TaskFailure::new(
                FailureReason::Cancelled,
                "the run was cancelled before the task completed",
                0,
            ),
        );
    }
}

/// The tasks no other task depends on: their outputs answer the request.
fn sink_tasks(plan: &Plan) -> Vec<String> {
    let needed: BTreeSet<&str> = plan
        .phases()
        .iter()
        .flatten()
        .flat_map(|task| task.dependencies.iter().map(String::as_str))
        .collect();
    plan.phases()
        .iter()
        .flatten()
        .filter(|task| !needed.contains(task.id.as_str()))
        .map(|task| task.id.clone())
        .collect()
}

/// The plan as text: one line per phase.
fn plan_text(plan: &Plan) -> String {
    let mut text = format!(
        "Plan: {} task(s) in {} phase(s).",
        plan.task_count(),
        plan.phases().len()
    );
    for (index, phase) in plan.phases().iter().enumerate() {
        let tasks: Vec<String> = phase
            .iter()
            .map(|task| format!("{} ({}, {})", task.id, task.task_type, task.processor_type))
            .collect();
        text.push_str(&format!("\nPhase {}: {}", index + 1, tasks.join(", ")));
    }
    text
}

/// Builds a [`FlexibleOrchestrator`]; made by [`FlexibleOrchestrator::builder`].
#[must_use]
pub struct FlexibleOrchestratorBuilder {
    name: String,
    description: String,
    model: Option<Arc<dyn Llm>>,
    analyzer: AnalyzerConfig,
    processors: Vec<(String, Arc<dyn TaskProcessor>)>,
    parser: Option<Arc<dyn TaskParser>>,
    planner: Option<Arc<dyn PlanCreator>>,
    config: OrchestrationConfig,
    result_key: String,
}

impl FlexibleOrchestratorBuilder {
    /// What the orchestrator does, for models that may transfer to it.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The analyzer's model (required).
    pub fn model(mut self, model: impl adk_core::IntoLlm) -> Self {
        let model = model.into_llm();
        self.model = Some(model);
        self
    }

    /// The analyzer's prompt and attempts.
    pub fn analyzer(mut self, analyzer: AnalyzerConfig) -> Self {
        self.analyzer = analyzer;
        self
    }

    /// Registers `processor` for the tasks whose processor is `processor_type` (dspy-go's
    /// `RegisterProcessor`); a later registration of the same name replaces an earlier one.
    pub fn processor(
        self,
        processor_type: impl Into<String>,
        processor: impl TaskProcessor + 'static,
    ) -> Self {
        self.shared_processor(processor_type, Arc::new(processor))
    }

    /// Registers a shared processor (see [`processor`](Self::processor)).
    pub fn shared_processor(
        mut self,
        processor_type: impl Into<String>,
        processor: Arc<dyn TaskProcessor>,
    ) -> Self {
        let processor_type = processor_type.into();
        self.processors.retain(|(name, _)| *name != processor_type);
        self.processors.push((processor_type, processor));
        self
    }

    /// How the analyzer's answer is read (by default [`XmlTaskParser`]).
    pub fn parser(mut self, parser: impl TaskParser + 'static) -> Self {
        self.parser = Some(Arc::new(parser));
        self
    }

    /// How tasks are ordered (by default [`DependencyPlanCreator`] with the config's
    /// `max_tasks_per_phase`).
    pub fn plan_creator(mut self, planner: impl PlanCreator + 'static) -> Self {
        self.planner = Some(Arc::new(planner));
        self
    }

    /// How tasks run.
    pub fn config(mut self, config: OrchestrationConfig) -> Self {
        self.config = config;
        self
    }

    /// The state key the result is written to (default [`DEFAULT_RESULT_KEY`]).
    pub fn result_key(mut self, key: impl Into<String>) -> Self {
        self.result_key = key.into();
        self
    }

    /// Builds the orchestrator; fails without a model or a processor.
    pub fn build(self) -> Result<FlexibleOrchestrator> {
        let model = self.model.ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "orchestrator '{}' has no model; set one with `model`",
                    self.name
                ),
            )
        })?;
        if self.processors.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "orchestrator '{}' has no processor; register one with `processor`",
                    self.name
                ),
            ));
        }
        let mut sub_agents: Vec<Arc<dyn Agent>> = Vec::new();
        for (_, processor) in &self.processors {
            if let Some(agent) = processor.agent()
                && !sub_agents.iter().any(|known| known.name() == agent.name())
            {
                sub_agents.push(agent.clone());
            }
        }
        let max_tasks_per_phase = self.config.max_tasks_per_phase;
        Ok(FlexibleOrchestrator {
            name: self.name,
            description: self.description,
            model,
            analyzer: self.analyzer,
            processors: self.processors,
            sub_agents,
            parser: self
                .parser
                .unwrap_or_else(|| Arc::new(XmlTaskParser::default())),
            planner: self
                .planner
                .unwrap_or_else(|| Arc::new(DependencyPlanCreator::new(max_tasks_per_phase))),
            config: self.config,
            result_key: self.result_key,
        })
    }
}
