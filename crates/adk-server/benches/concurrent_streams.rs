//! Many concurrent `/run_sse` streams against one server: throughput, time to first event and
//! memory per open stream.
//!
//! The server runs in a child process (this same binary, started with [`ROLE_ENV`] set), so its
//! resident memory is measured alone; it serves one weather agent on the real OpenAI adapter with
//! SQLite sessions. The model is a loopback mock of the Chat Completions API in this process that
//! waits 50 ms before it streams a three-chunk answer. For 1, 100 and 1,000 concurrent streams
//! (`streaming: true`), each in its own session, the benchmark reports the wall time of the round,
//! streams per second, the median and 99th-percentile time from sending the request to the first
//! SSE event, the server's CPU time (user and system, from `/proc`) per turn, and the server's
//! memory per open stream: a second round holds every stream open on a model that waits 2 s, and
//! the server's resident set is read once all of them have their answer's headers.
//!
//! Run with `cargo bench -p adk-server --bench concurrent_streams`. To see what the held streams'
//! memory is, set [`MEMORY_WRAPPER_ENV`] to a command the memory round's server is started under,
//! such as `heaptrack -o /tmp/streams` (its peak then names who holds what).
// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adk_core::SessionService;
use adk_flow::LlmAgent;
use adk_model::{OpenAi, RetryPolicy};
use adk_runner::Runner;
use adk_server::{Server, ServerConfig};
use adk_session::SqliteSessionService;
use adk_test::{MockResponse, MockServer};
use futures::StreamExt as _;
use serde_json::json;

/// Set in the child: the base URL of the mock model it talks to.
const ROLE_ENV: &str = "ADK_BENCH_SERVER_MODEL_URL";
/// A command (and its arguments, split at spaces) to start the memory round's server under: a
/// heap profiler. (The resident set the round reports is then the wrapper's own.)
const MEMORY_WRAPPER_ENV: &str = "ADK_BENCH_MEMORY_WRAPPER";
const APP: &str = "weather";
const MODEL_LATENCY: Duration = Duration::from_millis(50);
const HOLD_LATENCY: Duration = Duration::from_secs(2);
const CONCURRENCY: [usize; 3] = [1, 100, 1_000];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match std::env::var(ROLE_ENV) {
        Ok(model_url) => runtime.block_on(serve(&model_url)),
        // `cargo bench` passes `--bench`; `cargo test --benches` runs this once with no filter.
        Err(_) => runtime.block_on(benchmark()),
    }
}

/// The child: serves the weather app on a free port, prints `listening <address>`, and stops when
/// its standard input closes.
async fn serve(model_url: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sessions: Arc<dyn SessionService> = Arc::new(
        SqliteSessionService::open(dir.path().join("sessions.db"))
            .await
            .expect("a SQLite session store"),
    );
    let model = OpenAi::builder("gpt-4o-mini")
        .api_key("bench-key")
        .base_url(model_url)
        .retry(RetryPolicy::none())
        .build()
        .expect("a model");
    let agent = LlmAgent::builder("weather_agent")
        .model(model)
        .instruction("You answer questions about the weather.")
        .build()
        .expect("an agent");
    let runner = Runner::builder(APP, agent, sessions)
        .build()
        .expect("a runner");
    // The benchmark measures how many streams one server holds, so the run limit (64 by default,
    // the backpressure a deployment wants) is lifted above the largest round.
    let config = ServerConfig::default().max_concurrent_runs(2 * CONCURRENCY[2]);
    let server = Server::builder()
        .app(runner)
        .config(config)
        .build()
        .expect("a server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    println!("listening {}", listener.local_addr().expect("an address"));
    std::io::stdout().flush().expect("stdout");
    let stdin_closed = async {
        tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            while std::io::stdin()
                .read_line(&mut line)
                .is_ok_and(|read| read > 0)
            {
                line.clear();
            }
        })
        .await
        .expect("the stdin watcher");
    };
    server.serve(listener, stdin_closed).await.expect("serving");
}

/// A streamed Chat Completions answer in three chunks, after `latency`.
fn model_answer(latency: Duration) -> MockResponse {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(
            json!({"role": "assistant", "content": "It is sunny"}),
            json!(null)
        ),
        chunk(json!({"content": " in Paris."}), json!(null)),
        chunk(json!({}), json!("stop")),
    );
    MockResponse::sse(&body).delay_headers(latency)
}

/// The server child process and its address.
struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    base: String,
}

impl ServerProcess {
    /// Starts the server on `model_url`, under `wrapper` (a command and its arguments) if given.
    fn start(model_url: &str, wrapper: Option<&str>) -> Self {
        let this = std::env::current_exe().expect("this benchmark's path");
        let mut command = match wrapper.map(str::split_whitespace) {
            Some(mut words) => {
                let mut command = Command::new(words.next().expect("a wrapper command"));
                command.args(words).arg(this);
                command
            }
            None => Command::new(this),
        };
        let mut child = command
            .env(ROLE_ENV, model_url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server process starts");
        let stdout = child.stdout.take().expect("piped stdout");
        // A wrapper may say things of its own first.
        let address = BufReader::new(stdout)
            .lines()
            .map(|line| line.expect("the server's output"))
            .find_map(|line| line.strip_prefix("listening ").map(str::to_owned))
            .expect("the server's address");
        let stdin = child.stdin.take();
        Self {
            base: format!("http://{address}"),
            child,
            stdin,
        }
    }

    /// The CPU time the server has used so far, user and system, from `/proc/<pid>/stat`.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("the server's /proc stat");
        // The command's name, in parentheses, may hold spaces: the fields are counted after it.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("a /proc stat line")
            .1
            .split_whitespace()
            .collect();
        // utime and stime are the 14th and 15th fields of the line, in clock ticks of 1/100 s
        // (USER_HZ on Linux).
        let ticks: u64 =
            fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
        Duration::from_millis(ticks * 10)
    }

    /// The server's resident set size in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .expect("VmRSS in /proc status");
        kib * 1024
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Closing its standard input shuts the server down gracefully.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// A client allowed as many connections as there are streams.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(usize::MAX)
        .build()
        .expect("an HTTP client")
}

/// Creates sessions `s-{round}-0` to `s-{round}-{count - 1}`.
async fn create_sessions(client: &reqwest::Client, base: &str, round: &str, count: usize) {
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |index| async move {
            let status = client
                .post(format!("{base}/apps/{APP}/users/bench/sessions"))
                .json(&json!({"sessionId": format!("s-{round}-{index}")}))
                .send()
                .await
                .expect("create a session")
                .status();
            assert!(status.is_success(), "creating a session answered {status}");
        })
        .await;
}

/// Starts the `/run_sse` stream of session `s-{round}-{index}` and returns its response.
async fn start_stream(
    client: &reqwest::Client,
    base: &str,
    round: &str,
    index: usize,
) -> reqwest::Response {
    let response = client
        .post(format!("{base}/run_sse"))
        .json(&json!({
            "appName": APP, "userId": "bench", "sessionId": format!("s-{round}-{index}"),
            "newMessage": {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
            "streaming": true,
        }))
        .send()
        .await
        .expect("the run starts");
    assert!(response.status().is_success(), "{}", response.status());
    response
}

/// What one stream took: to its first event, and to its end; and how many events it had.
struct StreamTiming {
    first_event: Duration,
    events: usize,
}

/// Runs one stream to its end.
async fn one_stream(
    client: &reqwest::Client,
    base: &str,
    round: &str,
    index: usize,
) -> StreamTiming {
    let sent = Instant::now();
    let mut body = start_stream(client, base, round, index)
        .await
        .bytes_stream();
    let mut first_event = None;
    let mut text = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.expect("the stream's bytes");
        text.extend_from_slice(&chunk);
        if first_event.is_none() && text.windows(2).any(|pair| pair == b"\n\n") {
            first_event = Some(sent.elapsed());
        }
    }
    let text = String::from_utf8(text).expect("UTF-8 frames");
    assert!(!text.contains("\"error\""), "the run failed: {text}");
    StreamTiming {
        first_event: first_event.expect("at least one event"),
        events: text.matches("data: ").count(),
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let rank = ((sorted.len() as f64) * fraction).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One timed round of `count` concurrent streams.
async fn timed_round(server: &ServerProcess, count: usize) {
    let base = server.base.as_str();
    let client = client();
    let round = format!("t{count}");
    create_sessions(&client, base, &round, count).await;
    let cpu_before = server.cpu();
    let started = Instant::now();
    let timings =
        futures::future::join_all((0..count).map(|index| one_stream(&client, base, &round, index)))
            .await;
    let wall = started.elapsed();
    let cpu = server.cpu().saturating_sub(cpu_before);
    let mut first: Vec<Duration> = timings.iter().map(|timing| timing.first_event).collect();
    first.sort();
    // Two partial events and the final one.
    assert!(timings.iter().all(|timing| timing.events == 3));
    println!(
        "{count:>6} streams: wall {:>8.1} ms, {:>7.0} streams/s, first event p50 {:>6.1} ms, p99 {:>6.1} ms, server CPU {:.2} ms per turn",
        wall.as_secs_f64() * 1e3,
        count as f64 / wall.as_secs_f64(),
        percentile(&first, 0.5).as_secs_f64() * 1e3,
        percentile(&first, 0.99).as_secs_f64() * 1e3,
        cpu.as_secs_f64() * 1e3 / count as f64,
    );
}

/// Holds `count` streams open on a slow model and reads the server's memory per stream.
async fn memory_round(server: &ServerProcess, count: usize) {
    let client = client();
    let round = format!("m{count}");
    create_sessions(&client, &server.base, &round, count).await;
    let before = server.rss();
    let responses = futures::future::join_all(
        (0..count).map(|index| start_stream(&client, &server.base, &round, index)),
    )
    .await;
    // Every stream has its headers: each run is stored and waiting on the model.
    let open = server.rss();
    for response in responses {
        let text = response.text().await.expect("the stream ends");
        assert!(!text.contains("\"error\""), "the run failed: {text}");
    }
    let per_stream = open.saturating_sub(before) as f64 / count as f64;
    println!(
        "{count:>6} streams held open: server RSS {:.1} MB before, {:.1} MB open, {:.1} KB per stream",
        before as f64 / 1e6,
        open as f64 / 1e6,
        per_stream / 1e3,
    );
}

async fn benchmark() {
    let model = MockServer::repeating(model_answer(MODEL_LATENCY)).await;
    let server = ServerProcess::start(&format!("{}/v1", model.base_url()), None);
    // Warm the server up (connections, SQLite, allocator) before measuring.
    timed_round_quiet(&server.base).await;
    println!(
        "concurrent /run_sse streams, model latency {} ms",
        MODEL_LATENCY.as_millis()
    );
    for count in CONCURRENCY {
        timed_round(&server, count).await;
    }
    drop(server);

    let slow = MockServer::repeating(model_answer(HOLD_LATENCY)).await;
    let wrapper = std::env::var(MEMORY_WRAPPER_ENV).ok();
    let server = ServerProcess::start(&format!("{}/v1", slow.base_url()), wrapper.as_deref());
    timed_round_quiet(&server.base).await;
    println!(
        "memory per open stream, model latency {} s",
        HOLD_LATENCY.as_secs()
    );
    for count in [100, 1_000] {
        memory_round(&server, count).await;
    }
}

/// A warm-up round of 50 streams whose numbers are not reported.
async fn timed_round_quiet(base: &str) {
    let client = client();
    create_sessions(&client, base, "warm", 50).await;
    futures::future::join_all((0..50).map(|index| one_stream(&client, base, "warm", index))).await;
}
