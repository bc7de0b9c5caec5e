//! The test step: every test binary of the workspace built once, then run a few at a time,
//! slowest first, each with the environment `cargo test` gives it; the doctests run beside them
//! through cargo.
//!
//! `cargo test` runs its binaries one after another, so the step's wall time is the sum of them
//! all, and the many tests that wait on a peer (a Python server, a browser, a database) leave the
//! cores idle. Here the wall time is about the longest binary's, every binary runs even when one
//! fails, and each one's output is printed whole when it ends, so the log still reads binary by
//! binary.
// The step reports on stdout, like the rest of xtask.
#![allow(clippy::print_stdout)]

mod binaries;
mod tally;
mod timings;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::bail;

pub use binaries::TestBinary;
pub use tally::{SKIPPED_MARKER, TallyReader, TestTally};
pub use timings::Timings;

/// The environment variable that sets how many test binaries run at once.
pub const JOBS_ENV: &str = "ADK_TEST_JOBS";

/// One thing the step runs: a test binary, or the doctests through cargo.
#[derive(Debug, Clone)]
enum Job {
    Binary(TestBinary),
    Doctests(Vec<String>),
}

impl Job {
    fn key(&self) -> String {
        match self {
            Self::Binary(binary) => binary.key(),
            Self::Doctests(_) => "doctests".to_owned(),
        }
    }

    fn label(&self) -> String {
        match self {
            Self::Binary(binary) => binary.label(),
            Self::Doctests(_) => "doctests".to_owned(),
        }
    }

    /// The command that runs the job, with what `cargo test` would set for it.
    fn command(&self, root: &Path) -> Command {
        match self {
            Self::Binary(binary) => {
                let mut command = Command::new(&binary.executable);
                command
                    .current_dir(&binary.manifest_dir)
                    .env("CARGO", crate::tools::cargo())
                    .env("CARGO_MANIFEST_DIR", &binary.manifest_dir)
                    .env(
                        "CARGO_MANIFEST_PATH",
                        binary.manifest_dir.join("Cargo.toml"),
                    )
                    .env("CARGO_PKG_NAME", &binary.package)
                    .env("CARGO_PKG_VERSION", &binary.version);
                if let Some(deps) = binary.executable.parent() {
                    command.env("LD_LIBRARY_PATH", library_path(deps));
                }
                command
            }
            Self::Doctests(args) => {
                let mut command = Command::new(crate::tools::cargo());
                command.args(args).arg("--doc").current_dir(root);
                command
            }
        }
    }
}

/// `deps` first, then the caller's `LD_LIBRARY_PATH`, as cargo sets it for a test binary.
fn library_path(deps: &Path) -> OsString {
    let mut path = deps.as_os_str().to_owned();
    if let Some(existing) = std::env::var_os("LD_LIBRARY_PATH").filter(|path| !path.is_empty()) {
        path.push(":");
        path.push(existing);
    }
    path
}

/// What running one job gave.
struct Finished {
    job: Job,
    elapsed: Duration,
    output: std::io::Result<Output>,
}

impl Finished {
    fn succeeded(&self) -> bool {
        self.output
            .as_ref()
            .is_ok_and(|output| output.status.success())
    }

    /// Prints the job's whole output under a heading, and adds its summaries to `tally`.
    fn report(&self, tally: &mut TestTally) {
        let mut out = std::io::stdout().lock();
        let verdict = if self.succeeded() { "ok" } else { "FAILED" };
        // Output is best effort: a closed stdout must not stop the run.
        let _ = writeln!(
            out,
            "\n--> {} {verdict} in {:.1}s",
            self.job.label(),
            self.elapsed.as_secs_f64()
        );
        match &self.output {
            Ok(output) => {
                let stdout = String::from_utf8_lossy(&output.stdout);
                let mut reader = TallyReader::default();
                for line in stdout.lines() {
                    reader.observe(line);
                }
                tally.add(reader.tally());
                let _ = out.write_all(&output.stdout);
                if !output.stderr.is_empty() {
                    let _ = writeln!(out, "--- stderr of {}:", self.job.label());
                    let _ = out.write_all(&output.stderr);
                }
                if !output.status.success() {
                    let _ = writeln!(
                        out,
                        "--- {} exited with {}",
                        self.job.label(),
                        output.status
                    );
                }
            }
            Err(error) => {
                let _ = writeln!(out, "--- could not start {}: {error}", self.job.label());
            }
        }
        let _ = out.flush();
    }
}

/// How many jobs run at once: [`JOBS_ENV`] when set, else the machine's cores, at least two
/// (most binaries spend their time waiting on peers) and at most four (each binary already runs
/// its tests on every core).
pub fn jobs() -> usize {
    std::env::var(JOBS_ENV)
        .ok()
        .and_then(|jobs| jobs.parse().ok())
        .filter(|&jobs| jobs > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(2, std::num::NonZeroUsize::get)
                .clamp(2, 4)
        })
}

/// Builds the tests of `cargo <args>` (`test --workspace --all-features`), runs them as the
/// module says, and returns their tally. Every binary runs even when one fails.
///
/// # Errors
///
/// When the build fails, or when any binary or the doctests fail (named in the error).
pub fn run(root: &Path, args: &[&str]) -> anyhow::Result<TestTally> {
    let binaries = binaries::build(root, args)?;
    let timings_file = binaries
        .first()
        .and_then(|binary| binary.executable.parent())
        .map(Timings::file_for);
    let mut timings = timings_file
        .as_deref()
        .map(Timings::load)
        .unwrap_or_default();

    let mut jobs: Vec<Job> = binaries.into_iter().map(Job::Binary).collect();
    jobs.push(Job::Doctests(
        args.iter().map(|&arg| arg.to_owned()).collect(),
    ));
    timings.order(&mut jobs, Job::key);
    let workers = self::jobs().min(jobs.len()).max(1);
    println!(
        "--> running {} test binaries and the doctests, {workers} at a time, slowest first",
        jobs.len() - 1
    );

    let queue = Mutex::new(VecDeque::from(jobs));
    let results = Mutex::new((TestTally::default(), Vec::new(), Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(job) = next(&queue) {
                    println!("--> started {}", job.label());
                    let started = Instant::now();
                    let output = job.command(root).output();
                    let finished = Finished {
                        elapsed: started.elapsed(),
                        job,
                        output,
                    };
                    let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
                    let (tally, failed, times) = &mut *results;
                    finished.report(tally);
                    if !finished.succeeded() {
                        failed.push(finished.job.label());
                    }
                    times.push((finished.job.key(), finished.elapsed));
                }
            });
        }
    });

    let (tally, failed, times) = results.into_inner().unwrap_or_else(|e| e.into_inner());
    for (key, elapsed) in &times {
        timings.record(key, *elapsed);
    }
    if let Some(file) = &timings_file {
        // The timings only order the next run; failing to keep them loses nothing else.
        if let Err(error) = std::fs::write(file, timings.render()) {
            println!(
                "--> could not keep the test timings in {}: {error}",
                file.display()
            );
        }
    }
    if !failed.is_empty() {
        println!("{tally}");
        bail!("{} failed: {}", failed.len(), failed.join(", "));
    }
    Ok(tally)
}

/// The next job of `queue`, if any is left.
fn next(queue: &Mutex<VecDeque<Job>>) -> Option<Job> {
    queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
}
