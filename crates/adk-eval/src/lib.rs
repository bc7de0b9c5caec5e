#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod config;
mod criterion;
mod error;
mod eval_set;
mod evaluator;
mod inference;
pub mod metrics;
mod python_json;
pub mod report;
mod result;
pub mod simulation;
mod store;

pub use config::{EvalConfig, TEST_CONFIG_FILE};
pub use criterion::Criterion;
pub use error::{EvalError, EvalErrorKind};
pub use eval_set::{
    ConversationScenario, ConversationScenarios, EvalCase, EvalSet, IntermediateData, Invocation,
    InvocationEvent, InvocationEvents, Rubric, RubricContent, SessionInput, ToolUses, UserBehavior,
    UserPersona,
};
pub use evaluator::{EVAL_SESSION_ID_PREFIX, Evaluator};
pub use inference::session_invocations;
pub use metrics::{
    EvalStatus, EvaluationResult, IntoJudge, IntoMetric, Judge, LlmJudge, Metric, MetricInput,
    PerInvocationResult, RubricScore, rouge1,
};
pub use result::{
    EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, EvalMetricResultPerInvocation,
    EvalSetResult, RESULT_FILE_EXTENSION,
};
pub use simulation::{UserSimulatorConfig, UserSimulatorKind};
pub use store::{EVAL_SET_FILE_EXTENSION, EvalStore, EvalStoreError};

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
