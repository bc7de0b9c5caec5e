//! `SandboxedCodeExecutor`: model-written Python run locally under bubblewrap, with no network,
//! a read-only system, a scratch directory as the only writable place, and limits on time,
//! memory and file size.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::limits::shared_builder_setters;
use super::local_code_executor;
use super::process::{self, Launch, find_prlimit, find_program};
use super::scratch::Scratch;
use super::{CodeExecutorError, ExecutionLimits};

/// Where the scratch directory is inside the sandbox.
const SANDBOX_DIR: &str = "/scratch";

/// The top-level folders that hold programs and libraries besides `/usr`; each is mirrored into
/// the sandbox read-only when the host has it (as the symbolic link into `/usr` it is on
/// merged-`/usr` systems, or as a folder).
const SYSTEM_DIRS: [&str; 6] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// How long the check at construction may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs model-written Python in a bubblewrap sandbox.
///
/// Each run gets a fresh, empty scratch directory, mounted at `/scratch` and the run's working
/// and home directory. The sandbox has its own user, PID, network, IPC, UTS and cgroup
/// namespaces: no network interface but a loopback of its own, no view of the host's
/// processes, no capabilities. The system's `/usr` (and the program folders linked from the
/// root) are mounted read-only; nothing else of the host is visible, and the root, `/dev` and
/// `/proc` cannot be written. `prlimit` caps the address space and the size of a written file;
/// at the time limit the process group is killed, and with it the sandbox's PID namespace.
///
/// [`build`](SandboxedCodeExecutorBuilder::build) checks that the sandbox works on this machine
/// by running the interpreter in it once, and fails with
/// [`CodeExecutorErrorKind::SandboxUnavailable`](crate::CodeExecutorErrorKind::SandboxUnavailable)
/// otherwise: there is no fallback to running unsandboxed.
///
/// ```no_run
/// use std::time::Duration;
/// use adk_flow::{LlmAgent, SandboxedCodeExecutor};
///
/// # async fn example(model: std::sync::Arc<dyn adk_core::Llm>) -> adk_core::Result<()> {
/// let executor = SandboxedCodeExecutor::builder()
///     .timeout(Duration::from_secs(10))
///     .memory_limit(256 * 1024 * 1024)
///     .build()
///     .await?;
/// let analyst = LlmAgent::builder("analyst")
///     .model(model)
///     .instruction("Answer with Python: write it in a ```python block and it will be run.")
///     .code_executor(executor)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SandboxedCodeExecutor {
    limits: ExecutionLimits,
    bwrap: PathBuf,
    prlimit: PathBuf,
    python: PathBuf,
    sandbox_args: Vec<OsString>,
    scratch_root: Option<PathBuf>,
}

impl SandboxedCodeExecutor {
    /// An executor with the default limits, once the sandbox is found to work.
    pub async fn new() -> std::result::Result<Self, CodeExecutorError> {
        Self::builder().build().await
    }

    /// A builder for the limits and programs.
    pub fn builder() -> SandboxedCodeExecutorBuilder {
        SandboxedCodeExecutorBuilder::default()
    }

    /// The limits of each run.
    pub fn limits(&self) -> &ExecutionLimits {
        &self.limits
    }

    fn launch(&self, scratch: &Path) -> Launch {
        let mut args = self.sandbox_args.clone();
        args.extend([
            "--bind".into(),
            scratch.as_os_str().to_owned(),
            SANDBOX_DIR.into(),
            "--chdir".into(),
            SANDBOX_DIR.into(),
            // Last, after every mount: the sandbox's own root and /dev become read-only.
            "--remount-ro".into(),
            "/dev".into(),
            "--remount-ro".into(),
            "/".into(),
            "--".into(),
            self.python.as_os_str().to_owned(),
            // Isolated (no user site, no PYTHON* variables), no bytecode files in the scratch
            // directory, unbuffered so output written before a kill is not lost; the program
            // comes on standard input.
            "-I".into(),
            "-B".into(),
            "-u".into(),
            "-".into(),
        ]);
        Launch {
            program: self.bwrap.clone(),
            args,
            env: vec![
                ("PATH", "/usr/local/bin:/usr/bin:/bin".into()),
                ("HOME", SANDBOX_DIR.into()),
                ("TMPDIR", SANDBOX_DIR.into()),
                ("LANG", "C.UTF-8".into()),
            ],
            cwd: scratch.to_path_buf(),
        }
        .under_rlimits(&self.prlimit, &self.limits)
    }
}

local_code_executor!(SandboxedCodeExecutor);

/// Builds a [`SandboxedCodeExecutor`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SandboxedCodeExecutorBuilder {
    limits: ExecutionLimits,
    bwrap: Option<PathBuf>,
    prlimit: Option<PathBuf>,
    python: Option<PathBuf>,
    read_only_paths: Vec<PathBuf>,
    scratch_root: Option<PathBuf>,
}

impl SandboxedCodeExecutorBuilder {
    shared_builder_setters!();

    /// The bubblewrap program (default: `bwrap` on `PATH`).
    pub fn bwrap(mut self, program: impl Into<PathBuf>) -> Self {
        self.bwrap = Some(program.into());
        self
    }

    /// The Python interpreter, an absolute path visible in the sandbox (default:
    /// `/usr/bin/python3`, else `/usr/local/bin/python3`).
    pub fn python(mut self, interpreter: impl Into<PathBuf>) -> Self {
        self.python = Some(interpreter.into());
        self
    }

    /// A host folder to show in the sandbox read-only at the same path (an interpreter or
    /// packages installed outside `/usr`).
    pub fn read_only_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only_paths.push(path.into());
        self
    }

    /// Finds the programs, checks the limits and runs the interpreter in the sandbox once.
    ///
    /// # Errors
    ///
    /// `SandboxUnavailable` when bubblewrap is missing or cannot make its sandbox here (the
    /// message quotes why); `ProgramMissing` for a missing `prlimit` or interpreter;
    /// `InvalidLimit` for a zero limit.
    pub async fn build(self) -> std::result::Result<SandboxedCodeExecutor, CodeExecutorError> {
        self.limits.check()?;
        let bwrap_name = self.bwrap.unwrap_or_else(|| PathBuf::from("bwrap"));
        let bwrap = find_program(&bwrap_name).await.ok_or_else(|| {
            CodeExecutorError::SandboxUnavailable {
                reason: format!("bubblewrap (`{}`) was not found", bwrap_name.display()),
            }
        })?;
        let prlimit = find_prlimit(self.prlimit).await?;
        let python = find_python(self.python).await?;
        let mut sandbox_args = base_args();
        for dir in SYSTEM_DIRS {
            mirror(Path::new(dir), &mut sandbox_args).await;
        }
        for path in &self.read_only_paths {
            sandbox_args.extend(["--ro-bind".into(), path.into(), path.into()]);
        }
        let visible = python.starts_with("/usr")
            || self
                .read_only_paths
                .iter()
                .any(|path| python.starts_with(path));
        if !visible {
            return Err(CodeExecutorError::ProgramMissing {
                program: python.display().to_string(),
                hint: " inside the sandbox, which shows only /usr; add its folder with \
                       `read_only_path`"
                    .to_owned(),
            });
        }
        let executor = SandboxedCodeExecutor {
            limits: self.limits,
            bwrap,
            prlimit,
            python,
            sandbox_args,
            scratch_root: self.scratch_root,
        };
        probe(&executor).await?;
        Ok(executor)
    }
}

/// The namespaces and mounts every run starts from.
fn base_args() -> Vec<OsString> {
    [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

/// Shows a system folder in the sandbox as the host has it: a symbolic link stays one, a folder
/// is mounted read-only, and a missing one is left out.
async fn mirror(dir: &Path, args: &mut Vec<OsString>) {
    let Ok(metadata) = tokio::fs::symlink_metadata(dir).await else {
        return;
    };
    if metadata.is_symlink() {
        if let Ok(target) = tokio::fs::read_link(dir).await {
            args.extend(["--symlink".into(), target.into(), dir.into()]);
        }
    } else if metadata.is_dir() {
        args.extend(["--ro-bind".into(), dir.into(), dir.into()]);
    }
}

async fn find_python(
    configured: Option<PathBuf>,
) -> std::result::Result<PathBuf, CodeExecutorError> {
    let candidates = match configured {
        Some(path) => vec![path],
        None => vec![
            PathBuf::from("/usr/bin/python3"),
            PathBuf::from("/usr/local/bin/python3"),
        ],
    };
    for candidate in &candidates {
        if candidate.is_absolute() && find_program(candidate).await.is_some() {
            return Ok(candidate.clone());
        }
    }
    Err(CodeExecutorError::ProgramMissing {
        program: candidates[0].display().to_string(),
        hint: " (the sandbox needs an absolute path to a Python 3 interpreter)".to_owned(),
    })
}

/// Runs an empty program in the sandbox: bubblewrap fails here when the kernel or a container
/// refuses its namespaces, and that must surface now, not on the model's first code.
async fn probe(executor: &SandboxedCodeExecutor) -> std::result::Result<(), CodeExecutorError> {
    let scratch = Scratch::new(executor.scratch_root.clone()).await?;
    let limits = ExecutionLimits {
        timeout: PROBE_TIMEOUT,
        ..executor.limits.clone()
    };
    let finished = process::run(&executor.launch(scratch.path()), "", &limits).await?;
    if finished.status.is_some_and(|status| status.success()) {
        return Ok(());
    }
    let said = finished.stderr.text();
    Err(CodeExecutorError::SandboxUnavailable {
        reason: format!(
            "`{}` could not start the sandbox ({}){}",
            executor.bwrap.display(),
            match finished.status {
                Some(status) => status.to_string(),
                None if finished.timed_out => "it did not finish".to_owned(),
                None => "no exit status".to_owned(),
            },
            if said.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", said.trim())
            }
        ),
    })
}
