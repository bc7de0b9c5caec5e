//! Code executors: who runs the code a model writes.

use adk_core::{CodeExecutionResult, Error, ErrorKind, ExecutableCode, InvocationContext, Result};
use async_trait::async_trait;

/// Runs code a model wrote.
#[async_trait]
pub trait CodeExecutor: Send + Sync {
    /// Whether the model's provider runs the code itself; then adk-rs only asks it to.
    fn is_builtin(&self) -> bool {
        false
    }

    /// Runs `code` and reports what it printed or how it failed.
    async fn execute(
        &self,
        ctx: &InvocationContext,
        code: &ExecutableCode,
    ) -> Result<CodeExecutionResult>;
}

/// The provider's own code execution (Gemini's): the request asks the model to run its code
/// server-side, and results come back in the response.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltInCodeExecutor;

#[async_trait]
impl CodeExecutor for BuiltInCodeExecutor {
    fn is_builtin(&self) -> bool {
        true
    }

    async fn execute(
        &self,
        _ctx: &InvocationContext,
        _code: &ExecutableCode,
    ) -> Result<CodeExecutionResult> {
        Err(Error::new(
            ErrorKind::Config,
            "the built-in code executor runs code on the model provider, not locally",
        ))
    }
}

adk_core::__into_shared!(
    /// A [`CodeExecutor`] as a builder takes it: the code executor itself, an `Arc` of it, or an
    /// `Arc<dyn CodeExecutor>`.
    IntoCodeExecutor,
    into_code_executor,
    CodeExecutor,
    "`{Self}` is not a code executor"
);
