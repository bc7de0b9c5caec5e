//! Three `adk api_server` replicas on one PostgreSQL under a load of 200 sessions × 5 turns sent
//! to replicas at random, one replica killed with SIGKILL mid-run and restarted. Afterwards, read
//! back from the database: every acknowledged event is stored exactly once and in order, each
//! session's state is the fold of its events' state deltas, and every session can continue.
//!
//! The model is a loopback OpenAI-compatible server answering every call with the same text. The
//! test prints how many turns were sent, acknowledged and retried, and how many events are stored.
//! It costs about half a minute on two cores beside the build.

mod support;

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adk_core::{GetSessionRequest, SessionKey, SessionService as _};
use adk_session::PostgresSessionService;
use adk_test::{MockServer, postgres_url};
use serde_json::{Map, Value, json};
use support::{
    Random, Replicas, Served, api_server_on_postgres, assert_stored_once_in_order, chat_answer,
    create_session, pick, serve_stored,
};
use tokio::process::Command;
use tokio::sync::Semaphore;

const REPLICAS: usize = 3;
const SESSIONS: usize = 200;
const TURNS: usize = 5;
/// How many turns are in flight at once across the replicas.
const CLIENTS: usize = 24;
/// The app every replica serves.
const APP: &str = "quickstart";
/// Long enough never to run out on a loaded machine: it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(120);
/// How often one turn is tried before the test gives up on it.
const ATTEMPTS: usize = 600;

/// What the load generator counts.
#[derive(Debug, Default)]
struct Counts {
    sent: AtomicUsize,
    acknowledged: AtomicUsize,
    retried: AtomicUsize,
}

/// A replica: the `adk` binary on `url`'s sessions, against the loopback `model`. At most 21
/// connections each (8 for sessions, 12 for locks, 1 for readiness), so that three replicas and a
/// restarted one fit in PostgreSQL's default 100 beside other tests; a replica that gets more than
/// 12 of the 24 turns in flight answers 503 and the turn is retried elsewhere.
fn replica(model: &MockServer, url: &str, dir: &std::path::Path) -> Command {
    api_server_on_postgres(
        model,
        url,
        dir,
        &[
            "--max-concurrent-runs",
            "12",
            "--session-lock-wait",
            "30",
            "--db-pool-size",
            "8",
        ],
    )
}

/// One turn of `session` of `user`, sent to random replicas until one acknowledges it: the events
/// it answered.
async fn turn(
    client: &reqwest::Client,
    replicas: &Replicas,
    counts: &Counts,
    random: &mut Random,
    (user, session, n): (&str, &str, usize),
) -> Vec<Value> {
    let body = json!({
        "appName": APP, "userId": user, "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": format!("{session} turn {n}")}]},
        "stateDelta": {"turns": n, format!("turn_{n}"): format!("{session}/{n}")},
    });
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            counts.retried.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let base = pick(replicas, random);
        counts.sent.fetch_add(1, Ordering::Relaxed);
        let Ok(response) = client.post(format!("{base}/run")).json(&body).send().await else {
            continue;
        };
        let status = response.status();
        let Ok(answer) = response.json::<Value>().await else {
            continue;
        };
        if status.is_success() {
            counts.acknowledged.fetch_add(1, Ordering::Relaxed);
            return answer.as_array().cloned().unwrap_or_default();
        }
        // A full or restarting replica (503) or a session still held (409) is retried; anything
        // else is a bug.
        assert!(
            status == 503 || status == 409,
            "turn {n} of {session}: {status} {answer}"
        );
    }
    panic!("turn {n} of {session} was never acknowledged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_one_postgres_lose_nothing_when_one_is_killed() {
    let Some(url) = postgres_url() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Every call gets the same short answer, a little late so that runs overlap the kill.
    let model =
        MockServer::repeating(chat_answer("Noted.").delay_headers(Duration::from_millis(20))).await;
    let mut served = Vec::new();
    for _ in 0..REPLICAS {
        served.push(serve_stored(replica(&model, &url, dir.path()), PATIENCE).await);
    }
    let replicas: Replicas = Arc::new(Mutex::new(
        served.iter().map(|served| served.base.clone()).collect(),
    ));
    let run = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    // One user per session, so that `user:` state is the session's alone.
    let sessions: Vec<(String, String)> = (0..SESSIONS)
        .map(|i| (format!("u{i}-{run}"), format!("s{i}")))
        .collect();

    let client = reqwest::Client::new();
    let counts = Arc::new(Counts::default());
    let limit = Arc::new(Semaphore::new(CLIENTS));
    let acknowledged: Arc<Mutex<HashMap<String, Vec<String>>>> = Arc::default();
    let mut load = tokio::task::JoinSet::new();
    for (i, (user, session)) in sessions.iter().cloned().enumerate() {
        let (client, replicas, counts, limit, acknowledged) = (
            client.clone(),
            replicas.clone(),
            counts.clone(),
            limit.clone(),
            acknowledged.clone(),
        );
        load.spawn(async move {
            let mut random = Random::seeded(i as u64);
            create_session(
                &client,
                &replicas,
                &mut random,
                (APP, &user, &session),
                ATTEMPTS,
            )
            .await;
            for n in 1..=TURNS {
                let _slot = limit.acquire().await.unwrap();
                let events = turn(
                    &client,
                    &replicas,
                    &counts,
                    &mut random,
                    (&user, &session, n),
                )
                .await;
                let ids = events
                    .iter()
                    .map(|event| event["id"].as_str().unwrap().to_owned());
                acknowledged
                    .lock()
                    .unwrap()
                    .entry(session.clone())
                    .or_default()
                    .extend(ids);
            }
        });
    }

    // A third of the way through, replica 0 dies without a chance to finish anything, and comes
    // back on a new port.
    let third = SESSIONS * TURNS / 3;
    tokio::time::timeout(PATIENCE, async {
        while counts.acknowledged.load(Ordering::Relaxed) < third {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a third of the turns are acknowledged");
    let killed: Served = served.remove(0);
    killed.kill().await;
    let restarted = serve_stored(replica(&model, &url, dir.path()), PATIENCE).await;
    replicas.lock().unwrap()[0] = restarted.base.clone();
    served.insert(0, restarted);

    while let Some(finished) = load.join_next().await {
        finished.unwrap();
    }

    // Read back from the database, not through the replicas.
    let store = PostgresSessionService::connect(&url).await.unwrap();
    let acknowledged = acknowledged.lock().unwrap().clone();
    let mut stored_events = 0;
    for (user, session) in &sessions {
        let key = SessionKey::new(APP, user.as_str(), session.as_str());
        let stored = store
            .get_session(GetSessionRequest::new(key))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("session {session} is stored"));
        stored_events += stored.events.len();
        let ids: Vec<&str> = stored
            .events
            .iter()
            .map(|event| event.id.as_str())
            .collect();
        // Every acknowledged event is stored exactly once, in the order it was acknowledged.
        assert_stored_once_in_order(
            session,
            &ids,
            acknowledged[session].iter().map(String::as_str),
        );
        // The state is the fold of the events' state deltas, and holds every turn.
        let mut folded = Map::new();
        for event in &stored.events {
            for (key, value) in &event.actions.state_delta {
                folded.insert(key.clone(), value.clone());
            }
        }
        assert_eq!(
            stored.state, folded,
            "{session}: state is not the fold of its events"
        );
        assert_eq!(stored.state["turns"], json!(TURNS), "{session}");
        for n in 1..=TURNS {
            assert_eq!(
                stored.state[&format!("turn_{n}")],
                json!(format!("{session}/{n}"))
            );
        }
    }

    let line = format!(
        "replicas: {SESSIONS} sessions x {TURNS} turns on {REPLICAS} replicas, one killed and \
         restarted: sent {}, acknowledged {}, retried {}, stored {stored_events} events",
        counts.sent.load(Ordering::Relaxed),
        counts.acknowledged.load(Ordering::Relaxed),
        counts.retried.load(Ordering::Relaxed),
    );

    // Every session can continue, at any replica.
    let mut random = Random::seeded(SESSIONS as u64);
    for (user, session) in &sessions {
        let events = turn(
            &client,
            &replicas,
            &counts,
            &mut random,
            (user, session, TURNS + 1),
        )
        .await;
        assert!(!events.is_empty(), "{session} continues");
    }

    // Straight to stderr, past the harness's capture: the counts are the test's report.
    let _ = writeln!(std::io::stderr(), "\n{line}");
    for served in served {
        served.kill().await;
    }
}
