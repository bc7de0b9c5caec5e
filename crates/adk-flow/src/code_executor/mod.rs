//! Code executors: who runs the code a model writes. The trait and the provider's executor live
//! here; `sandboxed` runs code locally under bubblewrap, `unsafe_local` runs it locally without a
//! sandbox for those who ask for it by name, and both share `process` (one run of a program with
//! limits), `scratch` (the run's directory and the files it leaves) and `report` (what the model
//! reads).

mod error;
mod limits;
mod process;
mod report;
mod sandboxed;
mod scratch;
mod unsafe_local;

use std::path::Path;

use adk_core::{
    Blob, CodeExecutionResult, Error, ErrorKind, ExecutableCode, InvocationContext, Language,
    Result,
};
use async_trait::async_trait;

pub use error::{CodeExecutorError, CodeExecutorErrorKind};
pub use limits::ExecutionLimits;
pub use sandboxed::{SandboxedCodeExecutor, SandboxedCodeExecutorBuilder};
pub use unsafe_local::{UnsafeLocalCodeExecutor, UnsafeLocalCodeExecutorBuilder};

/// Runs code a model wrote.
///
/// The flow hands an executor the first block of code of a model's answer (an `executableCode`
/// part, or a fenced ```` ```tool_code ```` / ```` ```python ```` block in its text) and puts
/// what it returns in an event of `inlineData` parts (the files) and a `codeExecutionResult` part, after which the
/// model is called again.
#[async_trait]
pub trait CodeExecutor: Send + Sync {
    /// Whether the model's provider runs the code itself; then adk-rs only asks it to.
    fn is_builtin(&self) -> bool {
        false
    }

    /// Runs `code` and reports what it printed or how it failed. An error is for the executor
    /// itself failing (it could not start a process); the code failing is a result whose
    /// outcome says so, which the model reads.
    async fn execute(
        &self,
        ctx: &InvocationContext,
        code: &ExecutableCode,
    ) -> Result<CodeExecution>;
}

/// What running one block of code gave: the result the model reads, and the files the code
/// wrote.
///
/// ```
/// use adk_core::{CodeExecutionResult, Outcome};
/// use adk_flow::CodeExecution;
///
/// let run = CodeExecution::from(CodeExecutionResult {
///     outcome: Outcome::OutcomeOk,
///     output: Some("42\n".into()),
/// });
/// assert!(run.files.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CodeExecution {
    /// How the run ended and what it printed, as ADK's `codeExecutionResult` part.
    pub result: CodeExecutionResult,
    /// The files the code wrote, each with its path in the scratch directory as display name.
    pub files: Vec<Blob>,
    /// The program's exit status, when it exited by itself.
    pub exit_code: Option<i32>,
}

impl CodeExecution {
    /// The files the code wrote.
    pub fn with_files(mut self, files: Vec<Blob>) -> Self {
        self.files = files;
        self
    }

    /// The program's exit status.
    pub fn with_exit_code(mut self, exit_code: Option<i32>) -> Self {
        self.exit_code = exit_code;
        self
    }
}

impl From<CodeExecutionResult> for CodeExecution {
    fn from(result: CodeExecutionResult) -> Self {
        Self {
            result,
            files: Vec::new(),
            exit_code: None,
        }
    }
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
    ) -> Result<CodeExecution> {
        Err(Error::new(
            ErrorKind::Config,
            "the built-in code executor runs code on the model provider, not locally",
        ))
    }
}

/// Implements [`CodeExecutor`] for a local executor (a struct with `limits` and `scratch_root`
/// fields and a `launch(&self, scratch) -> process::Launch` method): its code runs through
/// [`run_python`], so both local executors differ only in the program they launch.
macro_rules! local_code_executor {
    ($executor:ty) => {
        #[async_trait::async_trait]
        impl super::CodeExecutor for $executor {
            async fn execute(
                &self,
                _ctx: &adk_core::InvocationContext,
                code: &adk_core::ExecutableCode,
            ) -> adk_core::Result<super::CodeExecution> {
                Ok(
                    super::run_python(code, &self.limits, self.scratch_root.as_deref(), |dir| {
                        self.launch(dir)
                    })
                    .await?,
                )
            }
        }
    };
}
use local_code_executor;

/// Runs Python code the way both local executors do: in a fresh scratch directory, with the
/// program `launch` makes for that directory, reported for the model.
async fn run_python(
    code: &ExecutableCode,
    limits: &ExecutionLimits,
    scratch_root: Option<&Path>,
    launch: impl FnOnce(&Path) -> process::Launch,
) -> std::result::Result<CodeExecution, CodeExecutorError> {
    match code.language {
        Language::Python | Language::LanguageUnspecified => {}
        other => return Ok(report::refused(other)),
    }
    let scratch = scratch::Scratch::new(scratch_root.map(Path::to_path_buf)).await?;
    let launch = launch(scratch.path());
    let finished = process::run(&launch, &code.code, limits).await?;
    let files = scratch.files(limits).await?;
    Ok(report::report(finished, files, limits))
}

adk_core::__into_shared!(
    /// A [`CodeExecutor`] as a builder takes it: the code executor itself, an `Arc` of it, or an
    /// `Arc<dyn CodeExecutor>`.
    IntoCodeExecutor,
    into_code_executor,
    CodeExecutor,
    "`{Self}` is not a code executor"
);
