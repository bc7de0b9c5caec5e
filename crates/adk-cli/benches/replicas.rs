//! Throughput and latency of 1, 2 and 3 `adk api_server` replicas on one PostgreSQL: the same
//! load of sessions × turns, spread round-robin over the replicas, against a loopback model that
//! answers at once. On a machine with few cores this shows what coordinating through the database
//! costs, not a speed-up. Needs `ADK_POSTGRES_URL`; prints one line per replica count.
//!
//! `cargo bench -p adk-cli --bench replicas`

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use adk_test::{MockServer, POSTGRES_URL_ENV};
use serde_json::json;
use support::{api_server_on_postgres, chat_answer, serve_stored};

const SESSIONS: usize = 60;
const TURNS: usize = 5;
/// Turns in flight at once, across the replicas.
const CLIENTS: usize = 12;

fn main() {
    // `cargo test --benches` runs this too, with `--bench` absent: measure only when asked.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let Ok(url) = std::env::var(POSTGRES_URL_ENV) else {
        let _ = writeln!(
            std::io::stderr(),
            "replicas: {POSTGRES_URL_ENV} is not set; nothing measured"
        );
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let model = MockServer::repeating(chat_answer("Noted.")).await;
        for replicas in 1..=3 {
            measure(&model, &url, replicas).await;
        }
    });
}

/// Runs the load on `count` fresh replicas and prints turns per second and latency percentiles.
async fn measure(model: &MockServer, url: &str, count: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut served = Vec::new();
    for _ in 0..count {
        let command = api_server_on_postgres(
            model,
            url,
            dir.path(),
            &["--db-pool-size", "8", "--max-concurrent-runs", "16"],
        );
        served.push(serve_stored(command, Duration::from_secs(120)).await);
    }
    let bases: Arc<Vec<String>> =
        Arc::new(served.iter().map(|served| served.base.clone()).collect());
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let run = format!("bench-{}-{count}-{millis}", std::process::id());
    let client = reqwest::Client::new();
    // Sessions are made before the clock starts.
    for i in 0..SESSIONS {
        let base = &bases[i % count];
        let created = client
            .post(format!("{base}/apps/quickstart/users/{run}/sessions"))
            .json(&json!({"sessionId": format!("s{i}")}))
            .send()
            .await
            .unwrap();
        assert!(created.status().is_success());
    }
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (client, bases, next, run) = (client.clone(), bases.clone(), next.clone(), run.clone());
        clients.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                // Turn `k` is turn `k / SESSIONS` of session `k % SESSIONS`: a session's turns
                // never overlap while clients are fewer than sessions.
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= SESSIONS * TURNS {
                    return latencies;
                }
                let base = &bases[k % bases.len()];
                let body = json!({
                    "appName": "quickstart", "userId": run, "sessionId": format!("s{}", k % SESSIONS),
                    "newMessage": {"role": "user", "parts": [{"text": format!("turn {}", k / SESSIONS)}]},
                });
                let sent = Instant::now();
                let response = client.post(format!("{base}/run")).json(&body).send().await.unwrap();
                assert!(response.status().is_success(), "{}", response.status());
                let _ = response.bytes().await.unwrap();
                latencies.push(sent.elapsed());
            }
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = clients.join_next().await {
        latencies.extend(done.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let at = |fraction: f64| {
        latencies[((latencies.len() as f64 * fraction) as usize).min(latencies.len() - 1)]
    };
    let _ = writeln!(
        std::io::stdout(),
        "replicas: {count} replica(s), {} turns, {CLIENTS} clients: {:.0} turns/s, p50 {:.1} ms, p99 {:.1} ms",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        at(0.50).as_secs_f64() * 1000.0,
        at(0.99).as_secs_f64() * 1000.0,
    );
    for served in served {
        served.kill().await;
    }
}
