//! Evaluation of adk-rs agents with ADK's eval sets, metrics and result files: the library behind
//! `adk eval`, and what a `cargo test` calls to hold an agent to an eval set.
//!
//! - **Eval sets** ([`EvalSet`], [`EvalCase`], [`Invocation`]): ADK Python's `*.evalset.json` files
//!   read unchanged, and its two older formats (`*.test.json` query lists and lists of named
//!   cases). A malformed file is an [`EvalError`] naming the file and the JSON path of the problem.
//! - **Config** ([`EvalConfig`], [`Criterion`]): ADK's `test_config.json`, the metrics to score and
//!   their thresholds; ADK's defaults without one.
//! - **Metrics** ([`Metric`]): `tool_trajectory_avg_score` (exact, in-order and any-order
//!   matching), `response_match_score` (ROUGE-1 F-measure, tokenized and stemmed as ADK Python
//!   does), and the judged `final_response_match_v2`, `rubric_based_final_response_quality_v1` and
//!   `rubric_based_tool_use_quality_v1`, which ask a [`Judge`] (off unless one is set); any other
//!   metric is a custom one, registered by name.
//! - **Running** ([`Evaluator`]): each case in its own in-memory session through the real runner,
//!   then scored; a stream of case results, or the whole [`EvalSetResult`].
//! - **Results** ([`EvalSetResult`]): ADK's eval result JSON, saved as ADK's
//!   `*.evalset_result.json`; [`report`] renders tables for people.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//!
//! use adk_eval::{Criterion, EvalConfig, EvalSet, Evaluator};
//! use adk_flow::LlmAgent;
//! use adk_test::ScriptedModel;
//! use serde_json::json;
//!
//! let model = Arc::new(
//!     ScriptedModel::new("scripted")
//!         .then_call("get_weather", json!({"city": "Paris"}))
//!         .then_text("It is sunny in Paris."),
//! );
//! let tool = adk_test::ClosureTool::shared("get_weather", |_ctx, _args| Ok(json!({"sky": "sunny"})));
//! let agent = LlmAgent::builder("weather").model(model).tool(tool).build().unwrap();
//! let set = EvalSet::from_json(
//!     r#"{"eval_set_id": "weather", "eval_cases": [{"eval_id": "paris", "conversation": [{
//!         "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
//!         "final_response": {"role": "model", "parts": [{"text": "Sunny in Paris."}]},
//!         "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}
//!     }]}]}"#,
//!     "weather.evalset.json",
//! )
//! .unwrap();
//! let config = EvalConfig::new([
//!     ("tool_trajectory_avg_score".to_owned(), Criterion::threshold(1.0)),
//!     ("response_match_score".to_owned(), Criterion::threshold(0.5)),
//! ]);
//! let result = Evaluator::new("weather", Arc::new(agent))
//!     .config(config)
//!     .evaluate(&set)
//!     .await
//!     .unwrap();
//! assert!(result.passed(), "{}", adk_eval::report::summary_table(&result));
//! # });
//! ```

mod config;
mod error;
mod eval_set;
mod evaluator;
mod inference;
mod legacy;
pub mod metrics;
pub mod report;
mod result;

pub use config::{Criterion, EvalConfig, TEST_CONFIG_FILE};
pub use error::{EvalError, EvalErrorKind};
pub use eval_set::{
    EvalCase, EvalSet, IntermediateData, Invocation, InvocationEvent, InvocationEvents, Rubric,
    RubricContent, SessionInput, ToolUses,
};
pub use evaluator::Evaluator;
pub use metrics::{
    EvalStatus, EvaluationResult, Judge, LlmJudge, Metric, MetricInput, PerInvocationResult,
    RubricScore, rouge1,
};
pub use result::{
    EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, EvalMetricResultPerInvocation,
    EvalSetResult, RESULT_FILE_EXTENSION,
};

/// Splits an `adk eval` argument `path:case_1,case_2` into the eval set's path and the cases to
/// run (all when none are named), as ADK's command line reads it.
///
/// ```
/// let (path, cases) = adk_eval::split_eval_set_argument("eval/weather.evalset.json:paris,tokyo");
/// assert_eq!(path, "eval/weather.evalset.json");
/// assert_eq!(cases, ["paris", "tokyo"]);
/// assert!(adk_eval::split_eval_set_argument("weather.evalset.json").1.is_empty());
/// ```
pub fn split_eval_set_argument(argument: &str) -> (&str, Vec<String>) {
    match argument.rsplit_once(':') {
        // A drive letter (`C:\...`) is not a case list.
        Some((path, cases)) if !path.is_empty() && !cases.contains(['/', '\\']) => (
            path,
            cases
                .split(',')
                .map(str::trim)
                .filter(|case| !case.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        _ => (argument, Vec::new()),
    }
}

// Evaluators are shared between tasks: a compile-time check that they stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Evaluator>();
    assert_send_sync::<EvalSetResult>();
};
