//! One run of a program with limits: the code goes in on standard input, standard output and
//! error come back bounded, and at the time limit (or when the caller drops the future) the
//! program's whole process group is killed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};

use super::{CodeExecutorError, ExecutionLimits};

/// How long output is still read after the process group was killed: a process that left the
/// group (a new session of its own) may hold the pipes open.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// A program and its arguments, environment and working directory.
#[derive(Debug, Clone)]
pub(super) struct Launch {
    pub(super) program: PathBuf,
    pub(super) args: Vec<OsString>,
    pub(super) env: Vec<(&'static str, OsString)>,
    pub(super) cwd: PathBuf,
}

impl Launch {
    /// `prlimit` in front of the program, so the limits hold from the first instruction of the
    /// program on (they are inherited by everything it starts).
    pub(super) fn under_rlimits(self, prlimit: &Path, limits: &ExecutionLimits) -> Self {
        let mut args: Vec<OsString> = vec![
            format!("--as={}", limits.memory_bytes).into(),
            format!("--fsize={}", limits.max_file_bytes).into(),
            "--core=0".into(),
            "--".into(),
            self.program.into_os_string(),
        ];
        args.extend(self.args);
        Self {
            program: prlimit.to_path_buf(),
            args,
            env: self.env,
            cwd: self.cwd,
        }
    }
}

/// What a program printed (up to the limit).
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub(super) bytes: Vec<u8>,
    pub(super) truncated: bool,
}

impl Captured {
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// How a run ended.
#[derive(Debug)]
pub(super) struct Finished {
    pub(super) stdout: Captured,
    pub(super) stderr: Captured,
    /// `None` when the process could not be waited for after it was killed.
    pub(super) status: Option<ExitStatus>,
    pub(super) timed_out: bool,
}

/// Kills a process group once, at the latest when dropped, so a cancelled run leaves nothing
/// behind. Once killed it forgets the group, whose id may be reused later.
struct GroupKiller(AtomicI32);

impl GroupKiller {
    fn new(pid: Option<u32>) -> Self {
        Self(AtomicI32::new(
            pid.and_then(|id| i32::try_from(id).ok()).unwrap_or(0),
        ))
    }

    fn kill(&self) {
        if let Some(group) = Pid::from_raw(self.0.swap(0, Ordering::AcqRel)) {
            // The group may be gone already, which is what we want; nothing else to do.
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `launch` with `code` on its standard input.
pub(super) async fn run(
    launch: &Launch,
    code: &str,
    limits: &ExecutionLimits,
) -> Result<Finished, CodeExecutorError> {
    let mut command = Command::new(&launch.program);
    command
        .args(&launch.args)
        .env_clear()
        .envs(launch.env.iter().map(|(key, value)| (key, value)))
        .current_dir(&launch.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that the time limit takes down everything it started and
        // nothing else.
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| CodeExecutorError::Spawn {
        program: launch.program.clone(),
        source,
    })?;
    let group = GroupKiller::new(child.id());
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut out = Captured::default();
    let mut err = Captured::default();
    let mut status = None;
    let timed_out;
    {
        let work = async {
            futures::join!(
                feed(stdin, code),
                capture(stdout, &mut out, limits.max_output_bytes),
                capture(stderr, &mut err, limits.max_output_bytes),
                wait(&mut child, &group, &mut status),
            )
        };
        tokio::pin!(work);
        timed_out = tokio::time::timeout(limits.timeout, &mut work)
            .await
            .is_err();
        if timed_out {
            group.kill();
            // The output written before the kill is the model's best clue; read what is left.
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut work).await;
        }
    }
    if status.is_none() {
        status = child.try_wait().ok().flatten();
    }
    Ok(Finished {
        stdout: out,
        stderr: err,
        status,
        timed_out,
    })
}

/// Writes the code and closes standard input. A program that exits without reading it all
/// breaks the pipe, which is no error of the run.
async fn feed(stdin: Option<ChildStdin>, code: &str) {
    if let Some(mut stdin) = stdin {
        let _ = stdin.write_all(code.as_bytes()).await;
        let _ = stdin.shutdown().await;
    }
}

/// Reads a stream to its end, keeping at most `limit` bytes.
async fn capture(stream: Option<impl AsyncRead + Unpin>, into: &mut Captured, limit: usize) {
    let Some(mut stream) = stream else { return };
    let mut buffer = vec![0; 16 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                let room = limit.saturating_sub(into.bytes.len());
                into.bytes.extend_from_slice(&buffer[..read.min(room)]);
                into.truncated |= read > room;
            }
        }
    }
}

/// Waits for the program, then kills what it left running in its group: a background process
/// holding the pipes open would otherwise keep the run going until the time limit.
async fn wait(child: &mut Child, group: &GroupKiller, status: &mut Option<ExitStatus>) {
    *status = child.wait().await.ok();
    group.kill();
}

/// Finds a program: a path is taken as it is, a bare name is looked up on `PATH`.
pub(super) async fn find_program(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return is_file(name).await.then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if is_file(&candidate).await {
            return Some(candidate);
        }
    }
    None
}

async fn is_file(path: &Path) -> bool {
    tokio::fs::metadata(path)
        .await
        .is_ok_and(|metadata| metadata.is_file())
}

/// Finds `prlimit`, which applies the memory and file limits.
pub(super) async fn find_prlimit(
    configured: Option<PathBuf>,
) -> std::result::Result<PathBuf, CodeExecutorError> {
    let name = configured.unwrap_or_else(|| PathBuf::from("prlimit"));
    find_program(&name)
        .await
        .ok_or_else(|| CodeExecutorError::ProgramMissing {
            program: name.display().to_string(),
            hint: " (Debian: `apt-get install util-linux`)".to_owned(),
        })
}
