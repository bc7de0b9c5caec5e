//! [`FnProcessor`]: a task handled by a closure.

use std::future::Future;
use std::sync::Arc;

use adk_core::Result;
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use serde_json::Value;

use crate::{TaskInput, TaskProcessor, TaskStep, TaskStream};

type Body = dyn Fn(TaskInput) -> BoxFuture<'static, Result<Value>> + Send + Sync;

/// Runs an async closure on the task; what it returns is the task's output.
///
/// ```
/// use adk_orchestrator::FnProcessor;
/// use serde_json::json;
///
/// let count = FnProcessor::new("Counts the words of the results it builds on.", |input| async move {
///     let words: usize = input
///         .dependency_outputs
///         .values()
///         .filter_map(|output| output.as_str())
///         .map(|text| text.split_whitespace().count())
///         .sum();
///     Ok(json!(words))
/// });
/// # let _ = count;
/// ```
pub struct FnProcessor {
    description: String,
    body: Arc<Body>,
}

impl FnProcessor {
    /// A processor described to the analyzer by `description` that runs `body`.
    pub fn new<F, Fut>(description: impl Into<String>, body: F) -> Self
    where
        F: Fn(TaskInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value>> + Send + 'static,
    {
        Self {
            description: description.into(),
            body: Arc::new(move |input| body(input).boxed()),
        }
    }
}

impl TaskProcessor for FnProcessor {
    fn description(&self) -> &str {
        &self.description
    }

    fn process(&self, input: TaskInput) -> TaskStream {
        (self.body)(input)
            .map(|result| result.map(TaskStep::Output))
            .into_stream()
            .boxed()
    }
}
