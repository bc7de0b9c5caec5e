//! [`AnalysisError`]: the analyzer gave no usable plan in any attempt.

use crate::{PlanError, XmlError};

/// Why one attempt of the analyzer gave no plan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisFailure {
    /// The model call failed.
    #[error("the model call failed: {0}")]
    Model(#[source] adk_core::Error),
    /// The answer could not be read as tasks.
    #[error("the answer is not a plan: {0}")]
    Parse(#[source] XmlError),
    /// The tasks could not be put in order.
    #[error("the tasks cannot be planned: {0}")]
    Plan(#[source] PlanError),
}

/// The analyzer gave no usable plan in any of its attempts; the run stops before any task runs.
/// Converted into an [`adk_core::Error`] of kind `Agent` that keeps it as its source.
#[derive(Debug, thiserror::Error)]
#[error("the analyzer gave no usable plan in {attempts} attempt(s); the last one failed: {last}")]
#[non_exhaustive]
pub struct AnalysisError {
    /// How many attempts were made.
    pub attempts: u32,
    /// Why the last one failed.
    #[source]
    pub last: AnalysisFailure,
}

impl From<AnalysisError> for adk_core::Error {
    fn from(error: AnalysisError) -> Self {
        adk_core::Error::new(adk_core::ErrorKind::Agent, error.to_string()).with_source(error)
    }
}
