//! [`Evaluator`]: runs an agent on the cases of an eval set and scores each with the configured
//! metrics.

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{Agent, Llm, RunConfig, SessionService};
use adk_session::{InMemoryArtifactService, InMemoryMemoryService, InMemorySessionService};
use futures::{Stream, StreamExt as _};

use crate::config::EvalConfig;
use crate::criterion::Criterion;
use crate::error::EvalError;
use crate::eval_set::{EvalCase, EvalSet, Invocation};
use crate::inference::{Harness, Inference};
use crate::metrics::{
    self, EvalStatus, EvaluationResult, FinalResponseMatchV2, Judge, Metric, MetricInput,
    PerInvocationResult, ResponseMatch, RubricMetric, ToolTrajectory, UserSimulatorQuality,
};
use crate::result::{
    EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, EvalMetricResultPerInvocation,
    EvalSetResult,
};

/// Runs an agent on eval cases and scores them: the library behind `adk eval`, and what a
/// `cargo test` calls to hold an agent to an eval set.
///
/// Each case runs in a fresh in-memory session (with the case's starting state) through the real
/// runner, one user message per invocation; then every metric of the [`EvalConfig`] scores it.
/// Unlike ADK Python, cases share no `user:` or `app:` state: each has in-memory services of its
/// own, so a case's result does not depend on the cases before it.
/// Cases run one after another, in the set's order.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use adk_eval::{EvalSet, Evaluator};
/// use adk_flow::LlmAgent;
/// use adk_test::ScriptedModel;
///
/// let model = Arc::new(ScriptedModel::new("scripted").then_text("Hello! How can I help?"));
/// let agent = LlmAgent::builder("greeter").model(model).build().unwrap();
/// let set = EvalSet::from_json(
///     r#"{"eval_set_id": "greetings", "eval_cases": [{"eval_id": "hello", "conversation": [{
///         "user_content": {"role": "user", "parts": [{"text": "Hi"}]},
///         "final_response": {"role": "model", "parts": [{"text": "Hello! How can I help you?"}]}
///     }]}]}"#,
///     "greetings.evalset.json",
/// )
/// .unwrap();
/// let result = Evaluator::new("greeter", Arc::new(agent)).evaluate(&set).await.unwrap();
/// assert!(result.passed());
/// assert_eq!(result.mean_score("tool_trajectory_avg_score"), Some(1.0));
/// # });
/// ```
#[derive(Clone)]
pub struct Evaluator {
    root_agent: Arc<dyn Agent>,
    app_name: String,
    config: EvalConfig,
    run_config: RunConfig,
    metrics: HashMap<String, Arc<dyn Metric>>,
    judge: Option<Arc<dyn Judge>>,
    user_simulator: Option<Arc<dyn Llm>>,
    sessions: Option<Arc<dyn SessionService>>,
}

/// The start of the id of a case's session in a session service given to
/// [`Evaluator::session_service`], as ADK names its eval sessions.
pub const EVAL_SESSION_ID_PREFIX: &str = "adk-eval-session-";

impl Evaluator {
    /// An evaluator of `root_agent`, whose sessions are kept under app `app_name` (unless a case's
    /// session input names another), with ADK's default criteria.
    pub fn new(app_name: impl Into<String>, root_agent: impl adk_core::IntoAgent) -> Self {
        let root_agent = root_agent.into_agent();
        Self {
            root_agent,
            app_name: app_name.into(),
            config: EvalConfig::default(),
            run_config: RunConfig::default(),
            metrics: HashMap::new(),
            judge: None,
            user_simulator: None,
            sessions: None,
        }
    }

    /// Keeps the cases' sessions in `sessions` (an app's own service, say, so that they can be
    /// looked at afterwards, as ADK's dev server does), under ids that start with
    /// [`EVAL_SESSION_ID_PREFIX`], instead of in a fresh in-memory service per case. Cases then
    /// share that service's `user:` and `app:` state, as they do in ADK Python.
    pub fn session_service(mut self, sessions: impl adk_core::IntoSessionService) -> Self {
        self.sessions = Some(sessions.into_session_service());
        self
    }

    /// The metrics to score and their criteria.
    pub fn config(mut self, config: EvalConfig) -> Self {
        self.config = config;
        self
    }

    /// The settings every run of the agent uses (a cap on model calls, the loop guard, ...).
    pub fn run_config(mut self, run_config: RunConfig) -> Self {
        self.run_config = run_config;
        self
    }

    /// Registers a custom metric under `name`, the name the config's criteria give it.
    pub fn metric(mut self, name: impl Into<String>, metric: impl crate::IntoMetric) -> Self {
        let metric = metric.into_metric();
        self.metrics.insert(name.into(), metric);
        self
    }

    /// The judge of the judged metrics (`final_response_match_v2` and the rubric metrics); without
    /// one they are not evaluated.
    pub fn judge(mut self, judge: impl crate::IntoJudge) -> Self {
        let judge = judge.into_judge();
        self.judge = Some(judge);
        self
    }

    /// The model that plays the user of cases with a
    /// [`conversation_scenario`](EvalCase::conversation_scenario), run as the config's
    /// [`user_simulator_config`](EvalConfig::user_simulator_config) says. Without one, such cases
    /// fail with a message saying so.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use adk_eval::{ConversationScenario, EvalCase, EvalSet, Evaluator};
    /// use adk_flow::LlmAgent;
    /// use adk_test::ScriptedModel;
    ///
    /// let agent_model = ScriptedModel::new("agent").then_text("Paris is sunny.");
    /// let agent = LlmAgent::builder("weather").model(Arc::new(agent_model)).build().unwrap();
    /// // The simulated user's first message is the starting prompt; then it ends the conversation.
    /// let user = ScriptedModel::new("user").then_text("</finished>");
    /// let set = EvalSet::new(
    ///     "weather",
    ///     vec![EvalCase::simulated(
    ///         "paris",
    ///         ConversationScenario::new("Weather in Paris?", "Ask for Paris, then stop."),
    ///     )],
    /// );
    /// let result = Evaluator::new("weather", Arc::new(agent))
    ///     .user_simulator(Arc::new(user))
    ///     .evaluate(&set)
    ///     .await
    ///     .unwrap();
    /// let case = &result.eval_case_results[0];
    /// assert_eq!(case.eval_metric_result_per_invocation.len(), 1);
    /// # });
    /// ```
    pub fn user_simulator(mut self, model: impl adk_core::IntoLlm) -> Self {
        self.user_simulator = Some(model.into_llm());
        self
    }

    /// The config in use.
    pub fn eval_config(&self) -> &EvalConfig {
        &self.config
    }

    /// Checks that every metric of the config can run: a built-in, a registered custom metric, or
    /// a judged metric (which needs a judge to be scored, and is reported as not evaluated
    /// otherwise). Returns the judged metrics that will not be scored for want of a judge.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Config`](crate::EvalErrorKind::Config) naming a metric nobody provides.
    pub fn check(&self) -> Result<Vec<String>, EvalError> {
        let mut unjudged = Vec::new();
        for (name, _) in &self.config.criteria {
            match self.resolve(name) {
                Resolved::Metric(_) => {}
                Resolved::NeedsJudge => unjudged.push(name.clone()),
                Resolved::Unknown => {
                    return Err(EvalError::config(format!(
                        "no metric named `{name}`: the built-in metrics are {}, {} and {}; \
                         register a custom metric with Evaluator::metric",
                        metrics::TOOL_TRAJECTORY_AVG_SCORE,
                        metrics::RESPONSE_MATCH_SCORE,
                        metrics::JUDGED_METRICS.join(", "),
                    )));
                }
            }
        }
        Ok(unjudged)
    }

    /// Runs and scores every case of `set` (or those named in `only`, in the set's order),
    /// yielding each case's result as it is done. Dropping the stream stops the eval.
    ///
    /// # Errors
    ///
    /// The stream's first item is an error when the config names a metric nobody provides or
    /// `only` names a case the set does not have. A case whose agent fails is not an error: its
    /// result is `FAILED` with the reason in `error_message`.
    pub fn run(
        &self,
        set: &EvalSet,
        only: Option<&[String]>,
    ) -> impl Stream<Item = Result<EvalCaseResult, EvalError>> + Send + 'static {
        let evaluator = self.clone();
        let eval_set_id = set.eval_set_id.clone();
        let cases = select(set, only);
        async_stream::try_stream! {
            evaluator.check()?;
            let cases = cases?;
            for case in cases {
                // Each case gets services of its own, so that the `user:` and `app:` state one
                // case leaves cannot change what the next one sees.
                let inference = evaluator.harness().run(&case).await;
                yield evaluator.score(&eval_set_id, &case, inference).await?;
            }
        }
    }

    /// Runs and scores every case of `set` and gathers the results (see [`run`](Self::run)).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub async fn evaluate(&self, set: &EvalSet) -> Result<EvalSetResult, EvalError> {
        let results: Vec<EvalCaseResult> = self
            .run(set, None)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        Ok(EvalSetResult::finished(
            &self.app_name,
            &set.eval_set_id,
            results,
        ))
    }

    fn harness(&self) -> Harness {
        let (sessions, session_prefix): (Arc<dyn SessionService>, &'static str) =
            match &self.sessions {
                Some(sessions) => (sessions.clone(), EVAL_SESSION_ID_PREFIX),
                None => (Arc::new(InMemorySessionService::new()), ""),
            };
        Harness {
            session_prefix,
            root_agent: self.root_agent.clone(),
            app_name: self.app_name.clone(),
            run_config: self.run_config.clone(),
            sessions,
            artifacts: Arc::new(InMemoryArtifactService::new()),
            memory: Arc::new(InMemoryMemoryService::new()),
            user_simulator: self.user_simulator.clone(),
            user_simulator_config: self
                .config
                .user_simulator_config
                .clone()
                .unwrap_or_default(),
        }
    }

    fn resolve(&self, name: &str) -> Resolved {
        if let Some(metric) = self.metrics.get(name) {
            return Resolved::Metric(metric.clone());
        }
        match name {
            metrics::TOOL_TRAJECTORY_AVG_SCORE => Resolved::Metric(Arc::new(ToolTrajectory)),
            metrics::RESPONSE_MATCH_SCORE => Resolved::Metric(Arc::new(ResponseMatch)),
            _ if metrics::JUDGED_METRICS.contains(&name) => match &self.judge {
                None => Resolved::NeedsJudge,
                Some(judge) => Resolved::Metric(match name {
                    metrics::FINAL_RESPONSE_MATCH_V2 => {
                        Arc::new(FinalResponseMatchV2::new(judge.clone()))
                    }
                    metrics::RUBRIC_BASED_TOOL_USE_QUALITY_V1 => {
                        Arc::new(RubricMetric::tool_use_quality(judge.clone()))
                    }
                    metrics::PER_TURN_USER_SIMULATOR_QUALITY_V1 => {
                        Arc::new(UserSimulatorQuality::new(judge.clone()))
                    }
                    _ => Arc::new(RubricMetric::final_response_quality(judge.clone())),
                }),
            },
            _ => Resolved::Unknown,
        }
    }

    /// Scores one case's run with every metric.
    async fn score(
        &self,
        eval_set_id: &str,
        case: &EvalCase,
        inference: Inference,
    ) -> Result<EvalCaseResult, EvalError> {
        let mut result = EvalCaseResult {
            eval_set_file: Some(eval_set_id.to_owned()),
            eval_set_id: eval_set_id.to_owned(),
            eval_id: case.eval_id.clone(),
            final_eval_status: EvalStatus::Failed,
            eval_metric_results: None,
            overall_eval_metric_results: Vec::new(),
            eval_metric_result_per_invocation: Vec::new(),
            session_id: inference.session_id,
            session_details: inference.session,
            user_id: Some(inference.user_id),
            error_message: None,
        };
        let actual = match inference.invocations {
            Ok(actual) => actual,
            Err(error) => {
                result.error_message = Some(error.to_string());
                return Ok(result);
            }
        };
        let expected = case.conversation.as_deref().unwrap_or_default();
        let mut per_invocation: Vec<EvalMetricResultPerInvocation> = actual
            .iter()
            .enumerate()
            .map(|(index, invocation)| EvalMetricResultPerInvocation {
                actual_invocation: with_rubrics(invocation, case, expected.get(index)),
                expected_invocation: expected.get(index).cloned(),
                eval_metric_results: Vec::new(),
            })
            .collect();
        for (name, criterion) in &self.config.criteria {
            let evaluation = self.evaluate_metric(name, criterion, &actual, case).await;
            result.overall_eval_metric_results.push(self.metric_result(
                name,
                criterion,
                &evaluation,
            ));
            let aligned = evaluation.per_invocation_results.len() == per_invocation.len();
            for (index, slot) in per_invocation.iter_mut().enumerate() {
                let invocation_result = if aligned {
                    evaluation.per_invocation_results[index].clone()
                } else {
                    PerInvocationResult::not_evaluated()
                };
                slot.eval_metric_results.push(EvalMetricResult {
                    score: invocation_result.score,
                    eval_status: invocation_result.eval_status,
                    details: EvalMetricResultDetails {
                        rubric_scores: invocation_result.rubric_scores,
                        ..EvalMetricResultDetails::default()
                    },
                    ..self.metric_result(name, criterion, &EvaluationResult::not_evaluated())
                });
            }
        }
        result.final_eval_status = EvalCaseResult::status_of(&result.overall_eval_metric_results);
        result.eval_metric_result_per_invocation = per_invocation;
        Ok(result)
    }

    /// One metric's result on a case; a metric that fails is not evaluated, and the failure is
    /// logged, so that the other metrics still count (as ADK does).
    async fn evaluate_metric(
        &self,
        name: &str,
        criterion: &Criterion,
        actual: &[Invocation],
        case: &EvalCase,
    ) -> EvaluationResult {
        let metric = match self.resolve(name) {
            Resolved::Metric(metric) => metric,
            Resolved::NeedsJudge | Resolved::Unknown => return EvaluationResult::not_evaluated(),
        };
        let mut input = MetricInput::new(name, criterion, actual, case);
        if case.conversation.is_none() {
            input.expected = None;
        }
        match metric.evaluate(input).await {
            Ok(evaluation) => evaluation,
            Err(error) => {
                tracing::error!(metric = name, case = %case.eval_id, %error, "a metric failed");
                EvaluationResult::not_evaluated()
            }
        }
    }

    fn metric_result(
        &self,
        name: &str,
        criterion: &Criterion,
        evaluation: &EvaluationResult,
    ) -> EvalMetricResult {
        let custom_function_path = self
            .config
            .custom_metrics
            .as_ref()
            .and_then(|custom| custom.get(name))
            .and_then(|declared| {
                declared
                    .pointer("/code_config/name")
                    .or_else(|| declared.pointer("/codeConfig/name"))
            })
            .and_then(|path| path.as_str())
            .map(str::to_owned);
        EvalMetricResult {
            metric_name: name.to_owned(),
            threshold: Some(criterion.threshold),
            criterion: Some(criterion.clone()),
            custom_function_path,
            score: evaluation.overall_score,
            eval_status: evaluation.overall_eval_status,
            details: EvalMetricResultDetails {
                rubric_scores: evaluation.overall_rubric_scores.clone(),
                ..EvalMetricResultDetails::default()
            },
        }
    }
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("app_name", &self.app_name)
            .field("root_agent", &self.root_agent.name())
            .field("config", &self.config)
            .field("metrics", &self.metrics.keys().collect::<Vec<_>>())
            .field("judge", &self.judge.is_some())
            .field("shared_sessions", &self.sessions.is_some())
            .finish_non_exhaustive()
    }
}

/// Where a metric name leads.
enum Resolved {
    Metric(Arc<dyn Metric>),
    NeedsJudge,
    Unknown,
}

/// The cases of `set` to run: all, or those `only` names, in the set's order.
fn select(set: &EvalSet, only: Option<&[String]>) -> Result<Vec<EvalCase>, EvalError> {
    let Some(only) = only.filter(|only| !only.is_empty()) else {
        return Ok(set.eval_cases.clone());
    };
    if let Some(missing) = only.iter().find(|id| set.case(id).is_none()) {
        return Err(EvalError::config(format!(
            "eval set `{}` has no case `{missing}`",
            set.eval_set_id
        )));
    }
    Ok(set
        .eval_cases
        .iter()
        .filter(|case| only.contains(&case.eval_id))
        .cloned()
        .collect())
}

/// `invocation` with the rubrics of its case and of the expected invocation, as ADK copies them
/// onto the actual invocation before scoring.
fn with_rubrics(
    invocation: &Invocation,
    case: &EvalCase,
    expected: Option<&Invocation>,
) -> Invocation {
    let mut invocation = invocation.clone();
    let rubrics: Vec<_> = case.rubrics_with(expected).cloned().collect();
    if !rubrics.is_empty() {
        invocation.rubrics = Some(rubrics);
    }
    invocation
}
