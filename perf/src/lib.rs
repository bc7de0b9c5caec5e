//! The performance workload of adk-rs, shared by its three programs:
//!
//! - `perf-mock`: a loopback Gemini API that answers a request without a function response with a
//!   `get_weather` call, and one with a function response with a sentence (unary JSON, or SSE for
//!   `streamGenerateContent`), after an optional latency;
//! - `perf-adk`: invocations through adk-rs: a new in-memory session each, the runner, an
//!   `LlmAgent` with one tool on the Gemini adapter: two model calls and one tool call;
//! - `perf-floor`: the same two calls made with a bare reqwest client and `serde_json`, the least
//!   any client must do.
//!
//! `cargo xtask bench` builds them in release mode and measures instructions per invocation
//! (callgrind), cold start, peak memory and concurrency. Each client prints one line when it is
//! done: `done <microseconds since start> <peak RSS in KiB>`.
//!
//! The server benchmark (`cargo xtask bench --serve`, [`serve`]) adds two programs:
//!
//! - `perf-relay`: the servers' floor, a bare axum server that answers `/run_sse` by relaying
//!   the same two Gemini calls as server-sent events, with no agent and no session store;
//! - `perf-load`: the load client, which runs rounds of concurrent clients (each creating a
//!   session and running one turn) against a server and reads its CPU time and memory.

pub mod serve;

use std::time::Instant;

/// The user's message of every invocation.
pub const QUESTION: &str = "What is the weather in Paris?";

/// The model name the clients ask for.
pub const MODEL: &str = "gemini-2.5-flash";

/// The settings of a client run, from its arguments.
#[derive(Debug, Clone)]
pub struct ClientArgs {
    /// The mock's base URL up to the API version (`http://127.0.0.1:PORT/v1beta`).
    pub url: String,
    /// How many invocations to run.
    pub invocations: usize,
    /// How many run at once.
    pub concurrency: usize,
    /// Whether the model streams its answers (SSE).
    pub sse: bool,
}

impl ClientArgs {
    /// Reads `--url URL`, `--invocations N`, `--concurrency C` and `--sse` from the process's
    /// arguments.
    ///
    /// # Panics
    ///
    /// On an unknown or malformed argument, with usage: this is a benchmark program.
    pub fn from_env() -> Self {
        let mut args = Self {
            url: String::new(),
            invocations: 1,
            concurrency: 1,
            sse: false,
        };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            let mut value = || words.next().unwrap_or_else(|| usage(&word));
            match word.as_str() {
                "--url" => args.url = value(),
                "--invocations" => {
                    args.invocations = value().parse().unwrap_or_else(|_| usage("--invocations"))
                }
                "--concurrency" => {
                    args.concurrency = value().parse().unwrap_or_else(|_| usage("--concurrency"))
                }
                "--sse" => args.sse = true,
                other => usage(other),
            }
        }
        if args.url.is_empty() {
            usage("--url");
        }
        args.concurrency = args.concurrency.max(1);
        args
    }
}

fn usage(word: &str) -> ! {
    panic!("bad argument {word:?}; usage: --url URL [--invocations N] [--concurrency C] [--sse]")
}

/// The weather `get_weather` reports, for both clients.
pub fn weather(city: &str) -> serde_json::Value {
    serde_json::json!({"city": city, "sky": "sunny", "celsius": 21.0})
}

/// Prints the closing line: the time since `started` and the process's peak RSS.
pub fn report(started: Instant) {
    let peak_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.split_whitespace().next()?.parse::<u64>().ok())
        })
        .unwrap_or(0);
    // The line is the program's output, read by `cargo xtask bench`.
    #[allow(clippy::print_stdout)]
    {
        println!("done {} {peak_kib}", started.elapsed().as_micros());
    }
}
