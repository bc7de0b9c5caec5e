//! `cargo xtask bench --serve`: the server benchmark, one weather agent served three ways side by
//! side against one loopback Gemini mock that answers after 50 ms (`perf-mock`):
//!
//! - adk-rs: `adk api_server` (the release build of adk-cli, its bundled `quickstart` app, SQLite
//!   sessions as by default; the run limit lifted above the largest round);
//! - ADK Python: its `adk api_server` (google-adk from the shared Python peers' virtualenv, its
//!   default uvicorn and local SQLite sessions) serving the same agent
//!   (`perf/python/quickstart/agent.py`);
//! - the floor: `perf-relay`, a bare axum server relaying the same two model calls as server-sent
//!   events with no agent and no session store.
//!
//! For each, `perf-load` warms the server up, runs rounds of 100 and 1,000 concurrent clients
//! (each creating its session and running one `/run_sse` turn), then holds as many streams open
//! on the mock to read the server's memory. The table gives turns per second, p50/p99 time to the
//! first event and to the last, server CPU per turn and server memory per open stream, with
//! adk-rs's ratios to the floor and to ADK Python. The command fails when a server answers a turn
//! wrongly, or when adk-rs or the floor fail one; ADK Python's failures under load are counted.
// The benchmark's table is its output.
#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::bench::{self, Mock};

/// The rounds' sizes: how many clients at once.
const CLIENTS: [usize; 2] = [100, 1_000];

/// The longest one turn may take before it counts as failed.
const TURN_TIMEOUT_S: u64 = 300;

/// The Python agent's source, copied beside ADK Python's sessions for each run.
const PYTHON_AGENT: [&str; 2] = ["__init__.py", "agent.py"];

/// Runs the benchmark in the workspace at `root` and prints its table.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let bin = bench::build(root, &["adk-perf", "adk-cli"])?;
    let python = python_peers(root)?;
    let mock = Mock::start(&bin, 50)?;
    let scratch = tempfile::tempdir().context("a temporary directory")?;

    let mut results = Vec::new();
    for server in [Server::Floor, Server::AdkRs, Server::Python] {
        println!("==> {}", server.name());
        let dir = scratch.path().join(server.slug());
        let mut measured = measure(server, root, &bin, &python, &mock, &dir, None)?;
        // Each memory round has a server of its own, fresh but for the warm-up, so that memory
        // freed by earlier rounds does not hide what the held streams take.
        for clients in CLIENTS {
            let held = measure(server, root, &bin, &python, &mock, &dir, Some(clients))?;
            measured.memory.extend(held.memory);
        }
        results.push(measured);
    }
    let [floor, ours, python] = <[Measured; 3]>::try_from(results)
        .map_err(|_| anyhow::anyhow!("three servers were measured"))?;
    println!("\n{}", table(&floor, &ours, &python));
    for (measured, server) in [
        (&floor, Server::Floor),
        (&ours, Server::AdkRs),
        (&python, Server::Python),
    ] {
        for round in std::iter::once(&measured.warm_up).chain(&measured.rounds) {
            if let Some(failure) = &round.sample_failure {
                println!(
                    "{}, {} clients: {} wrong, {} failed; for example: {failure}",
                    server.name(),
                    round.clients,
                    round.wrong,
                    round.failed
                );
            }
        }
    }
    let failures = [&floor, &ours, &python]
        .iter()
        .zip([Server::Floor, Server::AdkRs, Server::Python])
        .filter_map(|(measured, server)| measured.verdict(server))
        .collect::<Vec<_>>();
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    Ok(())
}

/// ADK Python's interpreter, from the shared peers' virtualenv. When it is not installed yet, the
/// `python_peers` example of adk-perf installs it through adk-test (pinned and under its file
/// lock, as the tests that talk to ADK Python do); it is found where adk-test puts it:
/// `$ADK_A2A_PEERS_DIR`, else `$HOME/.cache/adk-rs/a2a-peers`, once its install marker is written.
fn python_peers(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("ADK_A2A_PEERS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?)
            .join(".cache/adk-rs/a2a-peers"),
    };
    let python = dir.join("venv/bin/python");
    if dir.join(".installed").exists() && python.exists() {
        return Ok(python);
    }
    println!("==> installing ADK Python (cargo run -p adk-perf --example python_peers)");
    // The example is built in the dev profile: in release, adk-test's features would be unified
    // into the measured binaries' dependencies.
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "run",
            "--quiet",
            "-p",
            "adk-perf",
            "--example",
            "python_peers",
        ])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("could not start cargo")?;
    if !output.status.success() {
        bail!("installing the Python peers failed");
    }
    let python = PathBuf::from(String::from_utf8(output.stdout)?.trim());
    if !python.exists() {
        bail!(
            "the Python peers' interpreter {} is missing",
            python.display()
        );
    }
    Ok(python)
}

/// Starts `server` with its files in `dir` and runs `perf-load` against it: the timed rounds, or
/// the memory round of `memory` clients.
fn measure(
    server: Server,
    root: &Path,
    bin: &Path,
    python: &Path,
    mock: &Mock,
    dir: &Path,
    memory: Option<usize>,
) -> anyhow::Result<Measured> {
    // A fresh directory: a fresh session database.
    let dir = dir.join(memory.map_or_else(|| "timed".to_owned(), |n| format!("memory-{n}")));
    std::fs::create_dir_all(&dir)?;
    let running = server.start(root, bin, python, mock, &dir)?;
    let measured = load(bin, &running, mock, memory);
    drop(running);
    measured.with_context(|| {
        format!(
            "measuring {} (its log: {})",
            server.name(),
            dir.join("server.log").display()
        )
    })
}

/// The three servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Floor,
    AdkRs,
    Python,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Self::Floor => "floor (bare axum relay)",
            Self::AdkRs => "adk-rs adk api_server",
            Self::Python => "ADK Python adk api_server",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::AdkRs => "adk-rs",
            Self::Python => "python",
        }
    }

    /// Starts the server with its working files in `dir`.
    fn start(
        self,
        root: &Path,
        bin: &Path,
        python: &Path,
        mock: &Mock,
        dir: &Path,
    ) -> anyhow::Result<Running> {
        let log = File::create(dir.join("server.log"))?;
        let mut command;
        let port = match self {
            Self::Floor => {
                command = Command::new(bin.join("perf-relay"));
                command.args(["--model-url", &mock.url]);
                None
            }
            Self::AdkRs => {
                let port = free_port()?;
                command = Command::new(bin.join("adk"));
                command.args(["api_server", "--port", &port.to_string()]);
                // The default run limit (64) answers 503 beyond it: the benchmark measures what
                // one server holds, not its backpressure.
                command.args(["--max-concurrent-runs", "4000"]);
                command.env("ADK_MODEL", bench::MODEL);
                command.env("ADK_NO_LOCAL_MODEL", "true");
                Some(port)
            }
            Self::Python => {
                let port = free_port()?;
                let agents = dir.join("agents");
                let agent = agents.join("quickstart");
                std::fs::create_dir_all(&agent)?;
                for file in PYTHON_AGENT {
                    std::fs::copy(
                        root.join("perf/python/quickstart").join(file),
                        agent.join(file),
                    )
                    .with_context(|| format!("copying the Python agent's {file}"))?;
                }
                command = Command::new(python.with_file_name("adk"));
                command.args(["api_server", "--port", &port.to_string()]);
                command.arg(&agents);
                command.env("PYTHONUNBUFFERED", "1");
                Some(port)
            }
        };
        for variable in MODEL_VARIABLES {
            command.env_remove(variable);
        }
        command
            .env("GOOGLE_API_KEY", "perf-key")
            .env("GOOGLE_GEMINI_BASE_URL", mock.base())
            .current_dir(dir)
            .stdin(Stdio::null())
            .stderr(log.try_clone()?);
        let mut child;
        let port = match port {
            Some(port) => {
                child = command.stdout(log).spawn()?;
                port
            }
            None => {
                child = command.stdout(Stdio::piped()).spawn()?;
                bench::read_port(&mut child)?
            }
        };
        let running = Running {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        Ok(running)
    }
}

/// The variables that would send a server to a real model or service; only what the benchmark
/// sets counts.
const MODEL_VARIABLES: [&str; 12] = [
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ADK_PROVIDER",
    "ADK_DATABASE_URL",
    "ADK_MAX_CONCURRENT_RUNS",
    "ADK_MEMORY_SERVICE_URI",
];

/// A free loopback port, for the servers that are told theirs.
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A server process, killed when dropped.
struct Running {
    child: Child,
    base: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `perf-load` against `server` and reads its lines: the timed rounds, or the memory round
/// of `memory` clients.
fn load(
    bin: &Path,
    server: &Running,
    mock: &Mock,
    memory: Option<usize>,
) -> anyhow::Result<Measured> {
    let mut command = Command::new(bin.join("perf-load"));
    command
        .args(["--base", &server.base, "--mock", &mock.base()])
        .args(["--pid", &server.child.id().to_string()])
        .args(["--timeout-s", &TURN_TIMEOUT_S.to_string()]);
    if let Some(clients) = memory {
        command.args(["--memory", "--clients", &clients.to_string()]);
    } else {
        for clients in CLIENTS {
            command.args(["--clients", &clients.to_string()]);
        }
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .context("could not run perf-load")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!("perf-load failed after saying:\n{stdout}");
    }
    parse_measured(&stdout)
}

/// One timed round, as `perf-load` reported it.
#[derive(Debug, Clone, PartialEq)]
struct Round {
    clients: u64,
    correct: u64,
    wrong: u64,
    failed: u64,
    sample_failure: Option<String>,
    wall_us: u64,
    first_event_us: [u64; 2],
    last_event_us: [u64; 2],
    server_cpu_us: u64,
}

impl Round {
    fn turns_per_second(&self) -> f64 {
        self.correct as f64 / (self.wall_us as f64 / 1e6)
    }

    /// Server CPU per correct turn, in milliseconds.
    fn cpu_ms_per_turn(&self) -> f64 {
        self.server_cpu_us as f64 / 1e3 / self.correct.max(1) as f64
    }
}

/// One memory round, as `perf-load` reported it.
#[derive(Debug, Clone, PartialEq)]
struct Memory {
    clients: u64,
    idle_kib: u64,
    held_kib: u64,
    at_model: u64,
    failed: u64,
}

impl Memory {
    /// Resident memory per open stream, in KB.
    fn kb_per_stream(&self) -> f64 {
        self.held_kib.saturating_sub(self.idle_kib) as f64 * 1.024 / self.clients as f64
    }
}

/// Everything `perf-load` reported about one server.
#[derive(Debug, Clone, PartialEq)]
struct Measured {
    warm_up: Round,
    rounds: Vec<Round>,
    memory: Vec<Memory>,
}

impl Measured {
    /// Why this server fails the benchmark, if it does: any wrong answer; any failed turn of
    /// adk-rs or the floor, or of ADK Python's warm-up. ADK Python's failures under load (its
    /// SQLite sessions answer "database is locked" to concurrent writers) are counted, not fatal.
    fn verdict(&self, server: Server) -> Option<String> {
        let tolerated = server == Server::Python;
        let mut problems = String::new();
        let warm_up = std::iter::once((&self.warm_up, false));
        for (round, under_load) in warm_up.chain(self.rounds.iter().map(|round| (round, true))) {
            if round.wrong > 0 || (round.failed > 0 && !(tolerated && under_load)) {
                let _ = write!(
                    problems,
                    " {} clients: {} wrong, {} failed ({});",
                    round.clients,
                    round.wrong,
                    round.failed,
                    round.sample_failure.as_deref().unwrap_or("")
                );
            }
        }
        for memory in &self.memory {
            if memory.failed > 0 && !tolerated {
                let _ = write!(
                    problems,
                    " {} streams held: {} failed;",
                    memory.clients, memory.failed
                );
            }
        }
        (!problems.is_empty()).then(|| format!("{} answered wrongly:{problems}", server.name()))
    }
}

/// Reads `perf-load`'s `warmup`, `round` and `memory` lines.
fn parse_measured(stdout: &str) -> anyhow::Result<Measured> {
    let mut warm_up = None;
    let mut rounds = Vec::new();
    let mut memory = Vec::new();
    for line in stdout.lines() {
        let Some((kind, json)) = line.split_once(' ') else {
            continue;
        };
        let value: Value = match kind {
            "warmup" | "round" | "memory" => {
                serde_json::from_str(json).with_context(|| format!("perf-load's line {line:?}"))?
            }
            _ => continue,
        };
        match kind {
            "warmup" => warm_up = Some(parse_round(&value)?),
            "round" => rounds.push(parse_round(&value)?),
            _ => memory.push(parse_memory(&value)?),
        }
    }
    Ok(Measured {
        warm_up: warm_up.context("perf-load reported no warm-up")?,
        rounds,
        memory,
    })
}

fn number(value: &Value, key: &str) -> anyhow::Result<u64> {
    value[key]
        .as_u64()
        .with_context(|| format!("no number {key:?} in {value}"))
}

fn pair(value: &Value, key: &str) -> anyhow::Result<[u64; 2]> {
    match value[key].as_array().map(Vec::as_slice) {
        Some([p50, p99]) => Ok([
            p50.as_u64().context("a p50")?,
            p99.as_u64().context("a p99")?,
        ]),
        _ => bail!("no pair {key:?} in {value}"),
    }
}

fn parse_round(value: &Value) -> anyhow::Result<Round> {
    Ok(Round {
        clients: number(value, "clients")?,
        correct: number(value, "correct")?,
        wrong: number(value, "wrong")?,
        failed: number(value, "failed")?,
        sample_failure: value["sample_failure"].as_str().map(str::to_owned),
        wall_us: number(value, "wall_us")?,
        first_event_us: pair(value, "first_event_us")?,
        last_event_us: pair(value, "last_event_us")?,
        server_cpu_us: number(value, "server_cpu_us")?,
    })
}

fn parse_memory(value: &Value) -> anyhow::Result<Memory> {
    Ok(Memory {
        clients: number(value, "clients")?,
        idle_kib: number(value, "idle_kib")?,
        held_kib: number(value, "held_kib")?,
        at_model: number(value, "at_model")?,
        failed: number(value, "failed")?,
    })
}

/// A measure of the table: its name, how a value is written, and the value in a round.
struct Measure {
    what: &'static str,
    unit: Unit,
    of: fn(&Round) -> f64,
}

/// How a measure's values are written.
#[derive(Clone, Copy)]
enum Unit {
    PerSecond,
    Millis,
}

impl Unit {
    fn write(self, value: f64) -> String {
        match self {
            Self::PerSecond => format!("{value:.0}/s"),
            Self::Millis if value < 10.0 => format!("{value:.2} ms"),
            Self::Millis => format!("{value:.1} ms"),
        }
    }
}

const MEASURES: [Measure; 6] = [
    Measure {
        what: "turns per second",
        unit: Unit::PerSecond,
        of: Round::turns_per_second,
    },
    Measure {
        what: "first event p50",
        unit: Unit::Millis,
        of: |round| round.first_event_us[0] as f64 / 1e3,
    },
    Measure {
        what: "first event p99",
        unit: Unit::Millis,
        of: |round| round.first_event_us[1] as f64 / 1e3,
    },
    Measure {
        what: "last event p50",
        unit: Unit::Millis,
        of: |round| round.last_event_us[0] as f64 / 1e3,
    },
    Measure {
        what: "last event p99",
        unit: Unit::Millis,
        of: |round| round.last_event_us[1] as f64 / 1e3,
    },
    Measure {
        what: "server CPU per turn",
        unit: Unit::Millis,
        of: Round::cpu_ms_per_turn,
    },
];

/// The side-by-side table, in Markdown: for each round size, each measure for the floor, adk-rs
/// and ADK Python, and adk-rs's ratios to the other two.
fn table(floor: &Measured, ours: &Measured, python: &Measured) -> String {
    let mut out = String::from(
        "| clients | | floor | adk-rs | ADK Python | adk-rs ÷ floor | adk-rs ÷ ADK Python |\n\
         |---:|---|---:|---:|---:|---:|---:|\n",
    );
    let ratio = |ours: f64, theirs: f64| {
        if theirs > 0.0 {
            format!("{:.2}", ours / theirs)
        } else {
            "–".to_owned()
        }
    };
    for (index, round) in ours.rounds.iter().enumerate() {
        let (Some(floor_round), Some(python_round)) =
            (floor.rounds.get(index), python.rounds.get(index))
        else {
            continue;
        };
        let clients = round.clients;
        for measure in &MEASURES {
            let [f, o, p] = [floor_round, round, python_round].map(measure.of);
            let _ = writeln!(
                out,
                "| {clients} | {} | {} | {} | {} | {} | {} |",
                measure.what,
                measure.unit.write(f),
                measure.unit.write(o),
                measure.unit.write(p),
                ratio(o, f),
                ratio(o, p),
            );
        }
        if let (Some(f), Some(o), Some(p)) = (
            floor.memory.get(index),
            ours.memory.get(index),
            python.memory.get(index),
        ) {
            let held = |memory: &Memory| {
                let mut text = format!("{:.1} KB", memory.kb_per_stream());
                if memory.at_model < memory.clients {
                    let _ = write!(text, " ({} at the model)", memory.at_model);
                }
                text
            };
            let _ = writeln!(
                out,
                "| {clients} | server memory per open stream | {} | {} | {} | {} | {} |",
                held(f),
                held(o),
                held(p),
                ratio(o.kb_per_stream(), f.kb_per_stream()),
                ratio(o.kb_per_stream(), p.kb_per_stream()),
            );
        }
        let failed = |round: &Round| (round.failed + round.wrong).to_string();
        let _ = writeln!(
            out,
            "| {clients} | failed turns | {} | {} | {} | | |",
            failed(floor_round),
            failed(round),
            failed(python_round),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
noise before
warmup {\"clients\":20,\"correct\":20,\"wrong\":0,\"failed\":0,\"sample_failure\":null,\"wall_us\":200000,\"first_event_us\":[60000,70000],\"last_event_us\":[120000,130000],\"server_cpu_us\":40000}
round {\"clients\":100,\"correct\":100,\"wrong\":0,\"failed\":0,\"sample_failure\":null,\"wall_us\":250000,\"first_event_us\":[80000,95000],\"last_event_us\":[150000,190000],\"server_cpu_us\":120000}
memory {\"clients\":100,\"idle_kib\":10000,\"held_kib\":12500,\"at_model\":100,\"failed\":0}
";

    fn measured() -> Measured {
        parse_measured(REPORT).unwrap()
    }

    #[test]
    fn perf_loads_lines_are_read() {
        let measured = measured();
        assert_eq!(measured.warm_up.clients, 20);
        assert_eq!(measured.rounds.len(), 1);
        let round = &measured.rounds[0];
        assert_eq!(round.first_event_us, [80_000, 95_000]);
        assert!((round.turns_per_second() - 400.0).abs() < 1e-9);
        assert!((round.cpu_ms_per_turn() - 1.2).abs() < 1e-9);
        assert!((measured.memory[0].kb_per_stream() - 25.6).abs() < 1e-9);
        assert!(parse_measured("round {\"clients\":1}").is_err());
        assert!(parse_measured("nothing").is_err());
    }

    #[test]
    fn the_table_sets_the_servers_side_by_side_with_ratios() {
        let floor = measured();
        let mut ours = measured();
        ours.rounds[0].server_cpu_us = 240_000;
        let mut python = measured();
        python.rounds[0].server_cpu_us = 960_000;
        python.memory[0].at_model = 60;
        python.rounds[0].failed = 3;
        let table = table(&floor, &ours, &python);
        assert!(
            table.contains(
                "| 100 | server CPU per turn | 1.20 ms | 2.40 ms | 9.60 ms | 2.00 | 0.25 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| 100 | turns per second | 400/s | 400/s | 400/s | 1.00 | 1.00 |"),
            "{table}"
        );
        assert!(table.contains("25.6 KB (60 at the model)"), "{table}");
        assert!(
            table.contains("| 100 | failed turns | 0 | 0 | 3 | | |"),
            "{table}"
        );
    }

    #[test]
    fn wrong_answers_fail_every_server_and_python_may_fail_under_load() {
        let mut measured = measured();
        assert_eq!(measured.verdict(Server::AdkRs), None);
        measured.rounds[0].failed = 2;
        measured.rounds[0].sample_failure = Some("posting /run_sse: refused".to_owned());
        let verdict = measured.verdict(Server::AdkRs).unwrap();
        assert!(verdict.contains("100 clients: 0 wrong, 2 failed (posting /run_sse: refused)"));
        assert_eq!(measured.verdict(Server::Python), None);
        assert!(measured.verdict(Server::Floor).is_some());
        measured.warm_up.failed = 1;
        measured.rounds[0].failed = 0;
        assert!(measured.verdict(Server::Python).is_some());
        measured.warm_up.failed = 0;
        measured.rounds[0].wrong = 1;
        assert!(measured.verdict(Server::Python).is_some());
    }
}
