//! `cargo xtask bench`: the performance workload of `perf/` measured side by side with its floor.
//!
//! One invocation is a new in-memory session, two Gemini calls (a `get_weather` call, then the
//! answer) and one tool call, against a loopback mock in its own process (`perf-mock`); the floor
//! (`perf-floor`) makes the same two calls with a bare reqwest client. Both are built in release
//! mode. Reported, for adk-rs and the floor:
//!
//! - instructions per invocation, unary and SSE: callgrind's total for 21 invocations minus the
//!   total for 1, over 20 (so start-up is left out), which does not depend on the machine's load;
//! - cold start: from spawning the program to its line saying the first invocation is done
//!   (median of 20);
//! - peak RSS after 220 invocations;
//! - 200 concurrent invocations on a model with 50 ms latency: wall time inside the program and
//!   peak RSS (median of 5).
// The benchmark's table is its output.
#![allow(clippy::print_stdout)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// Runs the benchmark in the workspace at `root` and prints its table.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    if Command::new("valgrind")
        .arg("--version")
        .output()
        .map_or(true, |output| !output.status.success())
    {
        bail!(
            "`cargo xtask bench` counts instructions with valgrind; install it (apt-get install valgrind)"
        );
    }
    let bin = build(root, &["adk-perf"])?;
    let mock = Mock::start(&bin, 0)?;
    let adk = Client::new(&bin, "perf-adk", &mock.url);
    let floor = Client::new(&bin, "perf-floor", &mock.url);

    let mut rows = Vec::new();
    for sse in [false, true] {
        let label = if sse {
            "instructions / invocation, SSE"
        } else {
            "instructions / invocation, unary"
        };
        let ours = adk.instructions_per_invocation(sse)?;
        let theirs = floor.instructions_per_invocation(sse)?;
        rows.push(Row::new(
            label,
            format!("{:.3} M", ours / 1e6),
            format!("{:.3} M", theirs / 1e6),
            ours / theirs,
        ));
    }
    let ours = adk.cold_start()?;
    let theirs = floor.cold_start()?;
    rows.push(Row::new(
        "cold start: process start → first invocation done",
        millis(ours),
        millis(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64(),
    ));
    let ours = adk.run(220, 1)?.peak_kib;
    let theirs = floor.run(220, 1)?.peak_kib;
    rows.push(Row::new(
        "peak RSS after 220 invocations",
        mib(ours),
        mib(theirs),
        ours as f64 / theirs as f64,
    ));
    drop(mock);

    let slow = Mock::start(&bin, 50)?;
    let adk = Client::new(&bin, "perf-adk", &slow.url);
    let floor = Client::new(&bin, "perf-floor", &slow.url);
    let ours = adk.concurrent()?;
    let theirs = floor.concurrent()?;
    rows.push(Row::new(
        "200 concurrent invocations, model latency 50 ms: wall",
        millis(ours.wall),
        millis(theirs.wall),
        ours.wall.as_secs_f64() / theirs.wall.as_secs_f64(),
    ));
    rows.push(Row::new(
        "200 concurrent invocations, model latency 50 ms: peak RSS",
        mib(ours.peak_kib),
        mib(theirs.peak_kib),
        ours.peak_kib as f64 / theirs.peak_kib as f64,
    ));

    println!("\n| | adk-rs | hand-written reqwest (floor) | ratio |");
    println!("|---|---|---|---|");
    for row in rows {
        println!(
            "| {} | {} | {} | {:.2} |",
            row.what, row.ours, row.floor, row.ratio
        );
    }
    Ok(())
}

/// One line of the table.
struct Row {
    what: &'static str,
    ours: String,
    floor: String,
    ratio: f64,
}

impl Row {
    fn new(what: &'static str, ours: String, floor: String, ratio: f64) -> Self {
        Self {
            what,
            ours,
            floor,
            ratio,
        }
    }
}

fn millis(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 * 1024.0 / 1e6)
}

/// The model name the mock answers for.
pub(crate) const MODEL: &str = "gemini-2.5-flash";

/// Builds the programs of `packages` in release mode; returns the folder holding them.
pub(crate) fn build(root: &Path, packages: &[&str]) -> anyhow::Result<PathBuf> {
    let selection: Vec<&str> = packages
        .iter()
        .flat_map(|package| ["-p", package])
        .collect();
    println!(
        "==> building the workload (cargo build --release {})",
        selection.join(" ")
    );
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--bins"])
        .args(&selection)
        .current_dir(root)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("building the workload failed");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join("release"))
}

/// The loopback Gemini mock, killed when dropped.
pub(crate) struct Mock {
    child: Child,
    /// Its base URL up to the API version (`http://127.0.0.1:PORT/v1beta`).
    pub(crate) url: String,
}

impl Mock {
    pub(crate) fn start(bin: &Path, latency_ms: u64) -> anyhow::Result<Self> {
        let mut child = Command::new(bin.join("perf-mock"))
            .args(["--latency-ms", &latency_ms.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .context("could not start perf-mock")?;
        let port = read_port(&mut child).context("perf-mock's port")?;
        Ok(Self {
            url: format!("http://127.0.0.1:{port}/v1beta"),
            child,
        })
    }

    /// Its base URL without the API version, as Google's SDKs take it.
    pub(crate) fn base(&self) -> String {
        self.url.trim_end_matches("/v1beta").to_owned()
    }
}

/// Reads the `listening <port>` line a workload server prints first on its piped stdout.
pub(crate) fn read_port(child: &mut Child) -> anyhow::Result<u16> {
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("piped stdout")?)
        .read_line(&mut line)
        .context("the server said nothing")?;
    line.trim()
        .strip_prefix("listening ")
        .and_then(|port| port.parse().ok())
        .with_context(|| format!("no port in {line:?}"))
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one client run said: its time since start and its peak RSS.
struct Done {
    wall: Duration,
    peak_kib: u64,
}

/// One of the two client programs against one mock.
struct Client {
    program: PathBuf,
    url: String,
}

impl Client {
    fn new(bin: &Path, name: &str, url: &str) -> Self {
        Self {
            program: bin.join(name),
            url: url.to_owned(),
        }
    }

    fn command(&self, invocations: usize, concurrency: usize, sse: bool) -> Command {
        let mut command = Command::new(&self.program);
        command.args([
            "--url",
            &self.url,
            "--invocations",
            &invocations.to_string(),
            "--concurrency",
            &concurrency.to_string(),
        ]);
        if sse {
            command.arg("--sse");
        }
        command
    }

    /// Runs `invocations`, `concurrency` at a time, and reads the closing line.
    fn run(&self, invocations: usize, concurrency: usize) -> anyhow::Result<Done> {
        let output = self
            .command(invocations, concurrency, false)
            .output()
            .with_context(|| format!("could not run {}", self.program.display()))?;
        parse_done(&output)
    }

    /// Callgrind's instructions for 21 invocations minus those for 1, over 20.
    fn instructions_per_invocation(&self, sse: bool) -> anyhow::Result<f64> {
        let one = self.instructions(1, sse)?;
        let many = self.instructions(21, sse)?;
        Ok((many.saturating_sub(one)) as f64 / 20.0)
    }

    fn instructions(&self, invocations: usize, sse: bool) -> anyhow::Result<u64> {
        let command = self.command(invocations, 1, sse);
        let output = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(command.get_program())
            .args(command.get_args())
            .output()
            .context("could not run valgrind")?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            bail!(
                "{} under callgrind failed:\n{stderr}",
                self.program.display()
            );
        }
        stderr
            .lines()
            .find_map(|line| line.split("Collected :").nth(1))
            .and_then(|count| count.trim().parse().ok())
            .with_context(|| format!("no instruction count in callgrind's output:\n{stderr}"))
    }

    /// The median time from spawning the program to its closing line, for one invocation.
    fn cold_start(&self) -> anyhow::Result<Duration> {
        let mut times = Vec::new();
        for _ in 0..20 {
            let started = Instant::now();
            let mut child = self
                .command(1, 1, false)
                .stdout(Stdio::piped())
                .spawn()
                .context("could not start the client")?;
            let mut line = String::new();
            BufReader::new(child.stdout.take().context("piped stdout")?).read_line(&mut line)?;
            times.push(started.elapsed());
            child.wait()?;
            if !line.starts_with("done ") {
                bail!("{} said {line:?}", self.program.display());
            }
        }
        times.sort();
        Ok(times[times.len() / 2])
    }

    /// The median of 5 runs of 200 invocations all at once.
    fn concurrent(&self) -> anyhow::Result<Done> {
        let mut runs = Vec::new();
        for _ in 0..5 {
            runs.push(self.run(200, 200)?);
        }
        runs.sort_by_key(|done| done.wall);
        Ok(runs.swap_remove(2))
    }
}

/// Reads `done <microseconds> <peak KiB>` from a client's output.
fn parse_done(output: &std::process::Output) -> anyhow::Result<Done> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<u64> = stdout
        .lines()
        .find_map(|line| line.strip_prefix("done "))
        .map(|rest| {
            rest.split_whitespace()
                .filter_map(|word| word.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    match fields.as_slice() {
        [micros, peak_kib] if output.status.success() => Ok(Done {
            wall: Duration::from_micros(*micros),
            peak_kib: *peak_kib,
        }),
        _ => bail!(
            "the client failed: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_is_read() {
        let output = std::process::Command::new("sh")
            .args(["-c", "echo 'done 1500 2048'"])
            .output()
            .unwrap();
        let done = parse_done(&output).unwrap();
        assert_eq!(done.wall, Duration::from_micros(1500));
        assert_eq!(done.peak_kib, 2048);
        let failed = std::process::Command::new("sh")
            .args(["-c", "echo oops; exit 3"])
            .output()
            .unwrap();
        assert!(parse_done(&failed).is_err());
    }
}
