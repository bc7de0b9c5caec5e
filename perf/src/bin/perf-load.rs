//! The server benchmark's load client: against one server (`--base URL`, process `--pid PID`)
//! it waits for the server to answer, warms it up, then runs each timed round (`--clients N`,
//! repeatable): N concurrent clients, each creating its own session and posting one `/run_sse`
//! turn; or, with `--memory`, each memory round: N streams held open on the mock (`--mock URL`,
//! its control endpoints) while the server's resident set is read. Every turn's events are checked (the
//! tool's call and response, the final answer). Prints one `round <JSON>` or `memory <JSON>`
//! line per round (`adk_perf::serve::Round`, `Memory`). See the crate docs.

use std::time::{Duration, Instant};

use adk_perf::QUESTION;
use adk_perf::serve::{
    APP, Memory, Round, TurnCheck, drain_events, p50_p99, process_cpu, process_rss_kib,
};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// The settings of a run, from its arguments.
struct Args {
    base: String,
    mock: String,
    pid: u32,
    clients: Vec<usize>,
    timeout: Duration,
    /// Run memory rounds instead of timed ones.
    memory: bool,
}

impl Args {
    fn from_env() -> Self {
        let mut args = Self {
            base: String::new(),
            mock: String::new(),
            pid: 0,
            clients: Vec::new(),
            timeout: Duration::from_secs(300),
            memory: false,
        };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            if word == "--memory" {
                args.memory = true;
                continue;
            }
            let value = words.next().unwrap_or_else(|| usage(&word));
            match word.as_str() {
                "--base" => args.base = value,
                "--mock" => args.mock = value,
                "--pid" => args.pid = value.parse().unwrap_or_else(|_| usage(&word)),
                "--clients" => args
                    .clients
                    .push(value.parse().unwrap_or_else(|_| usage(&word))),
                "--timeout-s" => {
                    args.timeout =
                        Duration::from_secs(value.parse().unwrap_or_else(|_| usage(&word)));
                }
                other => usage(other),
            }
        }
        if args.base.is_empty() || args.mock.is_empty() || args.pid == 0 {
            usage("--base, --mock and --pid are required");
        }
        args
    }
}

fn usage(word: &str) -> ! {
    panic!(
        "bad argument {word:?}; usage: perf-load --base URL --mock URL --pid PID \
         [--clients N]... [--timeout-s S] [--memory]"
    )
}

/// How one turn went.
enum Outcome {
    /// Answered correctly: the times from posting `/run_sse` to the first event and to the end.
    Correct { first: Duration, last: Duration },
    /// The stream ended without what a correct turn has.
    Wrong(String),
    /// The turn failed before its stream ended.
    Failed(String),
}

/// A client allowed as many connections as there are streams.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(usize::MAX)
        .build()
        .expect("an HTTP client")
}

/// Creates user `user`'s session and returns its id.
async fn create_session(
    client: &reqwest::Client,
    base: &str,
    user: &str,
) -> Result<String, String> {
    let response = client
        .post(format!("{base}/apps/{APP}/users/{user}/sessions"))
        .json(&json!({}))
        .send()
        .await
        .map_err(|error| format!("creating a session: {error}"))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|error| format!("reading the new session: {error}"))?;
    if !status.is_success() {
        return Err(format!("creating a session answered {status}: {text}"));
    }
    let session: Value =
        serde_json::from_str(&text).map_err(|error| format!("the new session: {error}: {text}"))?;
    session["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("the new session has no id: {text}"))
}

/// Posts one turn and returns its response once its headers are in.
async fn start_turn(
    client: &reqwest::Client,
    base: &str,
    user: &str,
    session: &str,
) -> Result<reqwest::Response, String> {
    let response = client
        .post(format!("{base}/run_sse"))
        .json(&json!({
            "appName": APP, "userId": user, "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": QUESTION}]},
            "streaming": true,
        }))
        .send()
        .await
        .map_err(|error| format!("posting /run_sse: {error}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        return Err(format!("/run_sse answered {status}: {text}"));
    }
    Ok(response)
}

/// Reads a turn's stream to its end, checking its events; `sent` is when it was posted.
async fn finish_turn(response: reqwest::Response, sent: Instant) -> Outcome {
    let mut check = TurnCheck::default();
    let mut first = None;
    let mut buffer = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) => buffer.extend_from_slice(&chunk),
            Err(error) => return Outcome::Failed(format!("reading the stream: {error}")),
        }
        for data in drain_events(&mut buffer) {
            first.get_or_insert_with(|| sent.elapsed());
            match serde_json::from_slice::<Value>(&data) {
                Ok(event) => check.observe(&event),
                Err(error) => {
                    return Outcome::Wrong(format!(
                        "an event is not JSON ({error}): {}",
                        String::from_utf8_lossy(&data)
                    ));
                }
            }
        }
    }
    let last = sent.elapsed();
    match (first, check.correct()) {
        (Some(first), true) => Outcome::Correct { first, last },
        (None, _) => Outcome::Wrong("the stream ended without an event".to_owned()),
        (Some(_), false) if check.error.is_some() => Outcome::Failed(check.describe()),
        (Some(_), false) => Outcome::Wrong(check.describe()),
    }
}

/// One client: its session, then its turn.
async fn one_turn(client: &reqwest::Client, base: &str, user: String) -> Outcome {
    let session = match create_session(client, base, &user).await {
        Ok(session) => session,
        Err(error) => return Outcome::Failed(error),
    };
    let sent = Instant::now();
    match start_turn(client, base, &user, &session).await {
        Ok(response) => finish_turn(response, sent).await,
        Err(error) => Outcome::Failed(error),
    }
}

/// `clients` turns at once, each given `timeout`.
async fn turns(args: &Args, round: &str, clients: usize) -> Vec<Outcome> {
    let client = client();
    let client = &client;
    futures::future::join_all((0..clients).map(|index| async move {
        let turn = one_turn(client, &args.base, format!("{round}-{index}"));
        tokio::time::timeout(args.timeout, turn)
            .await
            .unwrap_or_else(|_| Outcome::Failed(format!("no answer in {:?}", args.timeout)))
    }))
    .await
}

/// A timed round of `clients` concurrent turns.
async fn timed_round(args: &Args, clients: usize) -> Round {
    let cpu_before = process_cpu(args.pid).expect("the server's CPU time");
    let started = Instant::now();
    let outcomes = turns(args, &format!("t{clients}"), clients).await;
    let wall = started.elapsed();
    let cpu = process_cpu(args.pid).expect("the server's CPU time") - cpu_before;
    let mut firsts = Vec::new();
    let mut lasts = Vec::new();
    let (mut wrong, mut failed, mut sample_failure) = (0, 0, None);
    for outcome in outcomes {
        match outcome {
            Outcome::Correct { first, last } => {
                firsts.push(first);
                lasts.push(last);
            }
            Outcome::Wrong(why) => {
                wrong += 1;
                sample_failure.get_or_insert(why);
            }
            Outcome::Failed(why) => {
                failed += 1;
                sample_failure.get_or_insert(why);
            }
        }
    }
    Round {
        clients,
        correct: firsts.len(),
        wrong,
        failed,
        sample_failure,
        wall_us: micros(wall),
        first_event_us: p50_p99(&mut firsts),
        last_event_us: p50_p99(&mut lasts),
        server_cpu_us: micros(cpu),
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// Asks the mock to hold or release its answers, or how many it holds.
async fn control(client: &reqwest::Client, mock: &str, what: &str) -> String {
    let request = if what == "pending" {
        client.get(format!("{mock}/control/{what}"))
    } else {
        client.post(format!("{mock}/control/{what}"))
    };
    request
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("the mock's control endpoint answers")
        .text()
        .await
        .expect("the mock's control answer")
}

/// Holds `clients` streams open on the mock, reads the server's resident set, then lets them
/// finish.
async fn memory_round(args: &Args, clients: usize) -> Memory {
    let client = client();
    let client = &client;
    let round = format!("m{clients}");
    let idle_kib = process_rss_kib(args.pid).expect("the server's RSS");
    control(client, &args.mock, "hold").await;
    let opened = futures::future::join_all((0..clients).map(|index| {
        let user = format!("{round}-{index}");
        async move {
            let session = create_session(client, &args.base, &user).await?;
            let sent = Instant::now();
            let response = start_turn(client, &args.base, &user, &session).await?;
            Ok::<_, String>((response, sent))
        }
    }));
    // Streams have their headers before their runs reach the model on some servers; wait until
    // the model calls stop arriving as well.
    let (opened, at_model) = tokio::time::timeout(args.timeout, async {
        let opened = opened.await;
        let mut at_model = 0;
        let mut still = 0;
        while still < 10 && at_model < clients {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now: usize = control(client, &args.mock, "pending")
                .await
                .parse()
                .expect("a count");
            still = if now == at_model { still + 1 } else { 0 };
            at_model = now;
        }
        (opened, at_model)
    })
    .await
    .expect("the streams open");
    let held_kib = process_rss_kib(args.pid).expect("the server's RSS");
    control(client, &args.mock, "release").await;
    let outcomes = futures::future::join_all(opened.into_iter().map(|opened| async move {
        match opened {
            Ok((response, sent)) => tokio::time::timeout(args.timeout, finish_turn(response, sent))
                .await
                .unwrap_or_else(|_| Outcome::Failed("no answer".to_owned())),
            Err(error) => Outcome::Failed(error),
        }
    }))
    .await;
    Memory {
        clients,
        idle_kib,
        held_kib,
        at_model,
        failed: outcomes
            .iter()
            .filter(|outcome| !matches!(outcome, Outcome::Correct { .. }))
            .count(),
    }
}

/// Waits up to a minute for the server to list its apps.
async fn wait_ready(base: &str) {
    let client = client();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = client
            .get(format!("{base}/list-apps"))
            .send()
            .await
            .is_ok_and(|response| response.status().is_success());
        if ready {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{base} did not answer in a minute"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Prints a line for xtask to read.
fn say(kind: &str, value: &impl serde::Serialize) {
    let line = serde_json::to_string(value).expect("a JSON line");
    // The lines are the program's output, read by `cargo xtask bench --serve`.
    #[allow(clippy::print_stdout)]
    {
        println!("{kind} {line}");
    }
}

#[tokio::main]
async fn main() {
    let args = Args::from_env();
    wait_ready(&args.base).await;
    // Warm the server up (connections, the session store, the allocator) before measuring; its
    // turns must be correct like the others.
    let warm_up = timed_round(&args, 20).await;
    say("warmup", &warm_up);
    for &clients in &args.clients {
        if args.memory {
            say("memory", &memory_round(&args, clients).await);
        } else {
            say("round", &timed_round(&args, clients).await);
        }
    }
}
