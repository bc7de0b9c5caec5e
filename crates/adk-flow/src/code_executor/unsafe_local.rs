//! `UnsafeLocalCodeExecutor`: model-written Python run as a plain child process, with the time,
//! memory and file limits but no sandbox. Only for code you would run yourself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::limits::shared_builder_setters;
use super::local_code_executor;
use super::process::{Launch, find_prlimit, find_program};
use super::{CodeExecutorError, ExecutionLimits};

/// Runs model-written Python on this machine **without a sandbox**.
///
/// **Unsafe**: the code runs as the user of this process, can read and write every file that
/// user can, reach the network, and start programs that outlive it by leaving its process
/// group. It is never chosen for you: the sandboxed executor fails rather than falling back to
/// this one, and a YAML config names it in full. Use it for code you trust, or inside a
/// sandbox of your own (a container or VM).
///
/// What it still does: each run gets a fresh scratch directory as its working directory, the
/// environment is cleared to `PATH`, `HOME` and the locale, `prlimit` caps memory and file
/// size, and at the time limit the process group is killed.
///
/// ```no_run
/// use adk_flow::UnsafeLocalCodeExecutor;
///
/// # async fn example() -> Result<(), adk_flow::CodeExecutorError> {
/// let executor = UnsafeLocalCodeExecutor::builder().python("python3").build().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct UnsafeLocalCodeExecutor {
    limits: ExecutionLimits,
    prlimit: PathBuf,
    python: PathBuf,
    scratch_root: Option<PathBuf>,
}

impl UnsafeLocalCodeExecutor {
    /// A builder for the limits and the interpreter.
    pub fn builder() -> UnsafeLocalCodeExecutorBuilder {
        UnsafeLocalCodeExecutorBuilder::default()
    }

    /// The limits of each run.
    pub fn limits(&self) -> &ExecutionLimits {
        &self.limits
    }

    fn launch(&self, scratch: &Path) -> Launch {
        let mut env: Vec<(&'static str, OsString)> = vec![
            ("HOME", scratch.into()),
            ("TMPDIR", scratch.into()),
            ("LANG", "C.UTF-8".into()),
            ("PYTHONIOENCODING", "utf-8".into()),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ];
        if let Some(path) = std::env::var_os("PATH") {
            env.push(("PATH", path));
        }
        Launch {
            program: self.python.clone(),
            args: vec!["-u".into(), "-".into()],
            env,
            cwd: scratch.to_path_buf(),
        }
        .under_rlimits(&self.prlimit, &self.limits)
    }
}

local_code_executor!(UnsafeLocalCodeExecutor);

/// Builds an [`UnsafeLocalCodeExecutor`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct UnsafeLocalCodeExecutorBuilder {
    limits: ExecutionLimits,
    prlimit: Option<PathBuf>,
    python: Option<PathBuf>,
    scratch_root: Option<PathBuf>,
}

impl UnsafeLocalCodeExecutorBuilder {
    shared_builder_setters!();

    /// The Python interpreter, a path or a name on `PATH` (default `python3`).
    pub fn python(mut self, interpreter: impl Into<PathBuf>) -> Self {
        self.python = Some(interpreter.into());
        self
    }

    /// Finds the interpreter and `prlimit`.
    ///
    /// # Errors
    ///
    /// `ProgramMissing` when either is not found; `InvalidLimit` for a zero limit.
    pub async fn build(self) -> std::result::Result<UnsafeLocalCodeExecutor, CodeExecutorError> {
        self.limits.check()?;
        let name = self.python.unwrap_or_else(|| PathBuf::from("python3"));
        let python =
            find_program(&name)
                .await
                .ok_or_else(|| CodeExecutorError::ProgramMissing {
                    program: name.display().to_string(),
                    hint: String::new(),
                })?;
        Ok(UnsafeLocalCodeExecutor {
            limits: self.limits,
            prlimit: find_prlimit(self.prlimit).await?,
            python,
            scratch_root: self.scratch_root,
        })
    }
}
