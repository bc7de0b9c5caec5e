//! Evaluation in the server: the eval sets and results of every app in a folder (adk-eval's
//! [`EvalStore`], shared with the command line's `eval_set` commands), the metrics a run can
//! score, and a run of an eval set through `adk-eval` on the app's agent. The routes that use
//! them are in `routes/eval.rs`.

pub(crate) mod wire;

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::Llm;
use adk_eval::{
    EvalConfig, EvalSetResult, EvalStore, EvalStoreError, Evaluator, Judge, Metric, metrics,
};
use adk_runner::Runner;
use futures::StreamExt as _;
use serde_json::{Value, json};

/// What the server evaluates with: where sets and results are kept, the custom metrics the
/// program offers, and the judge of the judged metrics.
pub(crate) struct Evals {
    pub(crate) store: EvalStore,
    metrics: BTreeMap<String, Arc<dyn Metric>>,
    judge: Option<Arc<dyn Judge>>,
    user_simulator: Option<Arc<dyn Llm>>,
}

impl Evals {
    pub(crate) fn new(
        store: EvalStore,
        metrics: BTreeMap<String, Arc<dyn Metric>>,
        judge: Option<Arc<dyn Judge>>,
        user_simulator: Option<Arc<dyn Llm>>,
    ) -> Self {
        Self {
            store,
            metrics,
            judge,
            user_simulator,
        }
    }

    /// The metrics a run can score, in ADK's `MetricInfo` shape: the built-ins, the judged ones
    /// when there is a judge, then the program's own.
    pub(crate) fn metrics_info(&self) -> Vec<Value> {
        let mut infos = vec![
            info(
                metrics::TOOL_TRAJECTORY_AVG_SCORE,
                "Compares the tool calls the agent made with the expected ones, per invocation: 1 when \
                 they match (exactly by default), 0 otherwise, averaged over the invocations.",
            ),
            info(
                metrics::RESPONSE_MATCH_SCORE,
                "The ROUGE-1 F-measure of the agent's final answer against the expected one, from 0 \
                 (no word in common) to 1.",
            ),
        ];
        if self.judge.is_some() {
            infos.push(info(
                metrics::FINAL_RESPONSE_MATCH_V2,
                "A judge model's verdict that the final answer says what the expected one says; the \
                 share of invocations judged to match.",
            ));
            infos.push(info(
                metrics::RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1,
                "A judge model's verdict on each rubric of the case for the final answer.",
            ));
            infos.push(info(
                metrics::RUBRIC_BASED_TOOL_USE_QUALITY_V1,
                "A judge model's verdict on each rubric of the case for the tool calls.",
            ));
            infos.push(info(
                metrics::PER_TURN_USER_SIMULATOR_QUALITY_V1,
                "For cases with a conversation scenario: whether the simulated user kept to it, \
                 turn by turn (the starting prompt, then a judge model's verdict on each message \
                 and on where it ended); the share of turns that passed.",
            ));
        }
        for name in self.metrics.keys() {
            infos.push(info(name, "A metric of this program's own."));
        }
        infos
    }

    /// Runs the cases `only` names (all when empty) of eval set `set_id` of `runner`'s app,
    /// scored by `config`, saves the result among the app's results and returns it.
    pub(crate) async fn run(
        &self,
        runner: &Runner,
        run_config: adk_core::RunConfig,
        set_id: &str,
        only: &[String],
        config: EvalConfig,
    ) -> Result<EvalSetResult, RunEvalError> {
        let app = runner.app_name();
        let set = self.store.existing_set(app, set_id).await?;
        // The cases' sessions are kept in the app's own service, so that the Evals tab can show
        // the turns of a run, as with ADK Python.
        let mut evaluator = Evaluator::new(app, runner.root_agent().clone())
            .config(config)
            .run_config(run_config)
            .session_service(runner.session_service().clone());
        for (name, metric) in &self.metrics {
            evaluator = evaluator.metric(name.clone(), metric.clone());
        }
        if let Some(judge) = &self.judge {
            evaluator = evaluator.judge(judge.clone());
        }
        if let Some(model) = &self.user_simulator {
            evaluator = evaluator.user_simulator(model.clone());
        }
        let mut cases = Vec::new();
        let mut stream = Box::pin(evaluator.run(&set, Some(only)));
        while let Some(case) = stream.next().await {
            cases.push(case.map_err(RunEvalError::Eval)?);
        }
        let result = EvalSetResult::finished(app, set_id, cases);
        self.store.save_result(app, &result).await?;
        Ok(result)
    }
}

/// Why a run of an eval set failed as a whole (a case whose agent failed is a failed case, not
/// this).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum RunEvalError {
    /// The set could not be read or the result saved.
    #[error(transparent)]
    Store(#[from] EvalStoreError),
    /// The metrics or cases asked for cannot be run.
    #[error(transparent)]
    Eval(adk_eval::EvalError),
}

/// One metric's `MetricInfo`: scores from 0 to 1, with a threshold to set.
fn info(name: &str, description: &str) -> Value {
    json!({
        "metricName": name,
        "description": description,
        "metricValueInfo": {"interval": {"minValue": 0.0, "openAtMin": false, "maxValue": 1.0, "openAtMax": false}},
        "requiresThreshold": true,
    })
}
