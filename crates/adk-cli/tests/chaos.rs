//! Chaos: three `adk api_server` replicas on one PostgreSQL (and, in a second test, one server
//! on SQLite) serve a payments agent while replicas are killed with SIGKILL, over and over, at
//! chosen points of a turn, and restarted.
//!
//! The agent is a YAML app whose one tool is an OpenAPI operation, `POST /payments` of a loopback
//! ledger standing for a payment API; the operation declares an `Idempotency-Key` header, which
//! the tool fills with the call's idempotency key. The ledger records every request it receives
//! and makes one payment per key, as payment APIs do. The model (loopback, OpenAI-compatible)
//! answers a user's message with a call of the tool, and the tool's answer with text. Clients
//! send each turn with an idempotency key and retry it after timeouts, connection errors, 503s
//! and 409s until one attempt is acknowledged.
//!
//! Replicas are killed while the model call of a turn is in flight (before the tool), right
//! after the model asked for the tool (before or while it starts), while the ledger holds a
//! payment request (during the tool, after its effect), right after the ledger answered (after
//! the tool, before its answer is stored), and at random moments. Afterwards, read back from
//! the database and the ledger: every turn's message is stored exactly once and every
//! acknowledged event exactly once, in order; every invocation has one call of the tool and one
//! answer to it, and ended with the model's answer or a stored cancellation; every payment
//! answer stored is the ledger's payment for that call's key; the ledger made exactly one
//! payment per paid turn (zero duplicate effects) and none that no stored answer knows. The
//! counts are printed.

mod support;

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adk_core::{Event, GetSessionRequest, SessionKey, SessionService};
use adk_session::{PostgresSessionService, SqliteSessionService};
use adk_test::{MockResponse, MockServer, ReceivedRequest, postgres_url};
use serde_json::{Value, json};
use support::{
    Random, Replicas, Served, api_server_on_postgres, assert_stored_once_in_order, completion,
    create_session, pick, serve_stored,
};
use tokio::sync::{Semaphore, mpsc};

const TURNS: usize = 5;
/// How many turns are in flight at once across the replicas.
const CLIENTS: usize = 12;
/// The app every replica serves.
const APP: &str = "payments";
/// Long enough never to run out on a loaded machine: it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(120);
/// How long a client waits for one attempt of a turn before it gives up and retries.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the ledger answers a slow payment: past the client's timeout.
const SLOW_PAYMENT: Duration = Duration::from_secs(4);
/// How long the model or the ledger holds the answer a kill is meant to land in.
const HELD: Duration = Duration::from_millis(800);
/// How often one turn is tried before the test gives up on it.
const ATTEMPTS: usize = 400;
/// The ledger's OpenAPI document: one operation, which takes an idempotency key.
const LEDGER_SPEC: &str = r#"openapi: 3.1.0
info: {title: Ledger, version: "1"}
paths:
  /payments:
    post:
      operationId: createPayment
      summary: Pays an amount for a turn of a session.
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [session, turn, cents]
              properties:
                session: {type: string}
                turn: {type: integer}
                cents: {type: integer}
      responses:
        "200": {description: The payment.}
"#;

/// Where a kill is meant to land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
enum Point {
    /// While the model call that will ask for the tool is in flight: the message is stored.
    ModelInFlight = 1,
    /// Right after the model asked for the tool: its call is stored or about to be, the tool
    /// not yet run or starting.
    CallAsked,
    /// While the ledger holds a payment request it has made: during the tool, after its effect.
    PaymentInFlight,
    /// Right after the ledger answered: after the tool, before its answer is stored.
    PaymentAnswered,
    /// At a random moment, on a random replica.
    Random,
}

const POINTS: [Point; 5] = [
    Point::ModelInFlight,
    Point::CallAsked,
    Point::PaymentInFlight,
    Point::PaymentAnswered,
    Point::Random,
];

impl Point {
    fn describe(self) -> &'static str {
        match self {
            Self::ModelInFlight => "model call in flight (before the tool)",
            Self::CallAsked => "right after the model asked for the tool",
            Self::PaymentInFlight => "payment in flight (during the tool)",
            Self::PaymentAnswered => "right after the payment answered (before its event)",
            Self::Random => "random moment",
        }
    }
}

/// What the model and the ledger share with the killer: the point armed (0 when none), and where
/// to send the order to kill a replica.
struct Trigger {
    armed: AtomicU8,
    orders: mpsc::UnboundedSender<(usize, Duration, Point)>,
}

impl Trigger {
    /// Claims `point` when it is armed: the caller orders the kill of `instance` after `after`.
    fn fire(&self, point: Point, instance: usize, after: Duration) -> bool {
        let claimed = self
            .armed
            .compare_exchange(point as u8, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if claimed {
            let _ = self.orders.send((instance, after, point));
        }
        claimed
    }
}

/// One request the ledger received.
#[derive(Debug, Clone)]
struct LedgerRequest {
    key: String,
    instance: usize,
}

/// The ledger: every request it received, and the one payment of each key.
#[derive(Debug, Default)]
struct Ledger {
    requests: Vec<LedgerRequest>,
    payments: HashMap<String, Value>,
}

/// The replica instance a request came from: its path starts with `/r<instance>/`.
fn instance_of(request: &ReceivedRequest) -> usize {
    request
        .path
        .trim_start_matches("/r")
        .split('/')
        .next()
        .and_then(|instance| instance.parse().ok())
        .unwrap_or(usize::MAX)
}

/// The ledger's answer to `request`: the payment of its key, made on the first request.
fn pay(
    ledger: &Mutex<Ledger>,
    trigger: &Trigger,
    random: &Mutex<Random>,
    request: &ReceivedRequest,
) -> MockResponse {
    let instance = instance_of(request);
    let Some(key) = request.header("idempotency-key").map(str::to_owned) else {
        return MockResponse::json(
            400,
            &json!({"error": "an Idempotency-Key header is required"}),
        );
    };
    let body = request.json();
    let payment = {
        let mut ledger = ledger.lock().unwrap();
        ledger.requests.push(LedgerRequest {
            key: key.clone(),
            instance,
        });
        let made = ledger.payments.len();
        ledger
            .payments
            .entry(key.clone())
            .or_insert_with(|| {
                json!({
                    "paymentId": format!("pay-{}", made + 1),
                    "key": key,
                    "session": body["session"],
                    "turn": body["turn"],
                    "cents": body["cents"],
                })
            })
            .clone()
    };
    let answer = MockResponse::json(200, &payment);
    if trigger.fire(Point::PaymentInFlight, instance, Duration::ZERO) {
        return answer.delay_headers(HELD);
    }
    if trigger.fire(Point::PaymentAnswered, instance, Duration::from_millis(2)) {
        return answer;
    }
    let roll = random.lock().unwrap().below(100);
    match roll {
        // A slow payment, past the client's patience: the client retries the turn.
        0 | 1 => answer.delay_headers(SLOW_PAYMENT),
        _ => answer.delay_headers(Duration::from_millis(u64::try_from(roll % 20).unwrap())),
    }
}

/// The text of an OpenAI message, whether its content is a string or a list of parts.
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

/// The model's answer to `request`: a call of the payment tool for a user's message
/// (`Pay <cents> cents for turn <n> of <session>.`), a text once the tool answered.
fn model(trigger: &Trigger, calls: &AtomicUsize, request: &ReceivedRequest) -> MockResponse {
    let instance = instance_of(request);
    let body = request.json();
    let last = body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .cloned()
        .unwrap_or_default();
    if last["role"] != "user" {
        let text = format!("Paid: {}", message_text(&last));
        return completion(json!({"role": "assistant", "content": text}), "stop")
            .delay_headers(Duration::from_millis(5));
    }
    let text = message_text(&last);
    let words: Vec<&str> = text.split_whitespace().collect();
    let (cents, turn, session) = match words.as_slice() {
        ["Pay", cents, "cents", "for", "turn", turn, "of", session] => (
            cents.parse::<u64>().unwrap_or_default(),
            turn.parse::<u64>().unwrap_or_default(),
            session.trim_end_matches('.'),
        ),
        _ => {
            return completion(
                json!({"role": "assistant", "content": format!("I cannot read {text:?}.")}),
                "stop",
            );
        }
    };
    let id = calls.fetch_add(1, Ordering::Relaxed);
    let arguments = json!({"body": {"session": session, "turn": turn, "cents": cents}});
    let answer = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{id}"),
            "type": "function",
            "function": {"name": "create_payment", "arguments": arguments.to_string()},
        }]}),
        "tool_calls",
    );
    if trigger.fire(Point::ModelInFlight, instance, Duration::ZERO) {
        return answer.delay_headers(HELD);
    }
    trigger.fire(Point::CallAsked, instance, Duration::from_millis(2));
    answer.delay_headers(Duration::from_millis(10))
}

/// The folder of replica `instance`: the payments app, calling the ledger under `/r<instance>`.
fn app_folder(root: &Path, ledger: &MockServer, instance: usize) -> PathBuf {
    let dir = root.join(format!("r{instance}"));
    std::fs::create_dir_all(dir.join(APP)).unwrap();
    std::fs::write(dir.join(APP).join("ledger.yaml"), LEDGER_SPEC).unwrap();
    std::fs::write(
        dir.join(APP).join("root_agent.yaml"),
        format!(
            "name: payments\nmodel: openai/mock-model\n\
             instruction: Pay what the user asks with create_payment, then say it is paid.\n\
             tools:\n  - name: OpenAPIToolset\n    args:\n      spec_path: ledger.yaml\n      \
             base_url: {}/r{instance}\n",
            ledger.base_url()
        ),
    )
    .unwrap();
    dir
}

/// Replica `instance`, serving `folder`'s payments app on `url`'s sessions, against the model
/// under `/r<instance>/v1`. At most 14 connections each (6 for sessions, one per run allowed at
/// once, so that a run's journal write never waits out the pool's timeout behind the others; 6
/// for locks, 1 for readiness, 1 listening for cancel requests), so that the replicas and a
/// restarted one fit in PostgreSQL's default 100 beside other tests.
async fn start_replica(model: &MockServer, url: &str, folder: &Path, instance: usize) -> Served {
    let mut command = api_server_on_postgres(
        model,
        url,
        folder,
        &[
            ".",
            "--max-concurrent-runs",
            "6",
            "--session-lock-wait",
            "30",
            "--db-pool-size",
            "6",
        ],
    );
    command.env(
        "OPENAI_BASE_URL",
        format!("{}/r{instance}/v1", model.base_url()),
    );
    serve_stored(command, PATIENCE).await
}

/// Keeps the warnings and errors of a stopped server's `log` in `logs`.
fn keep_warnings(logs: &Mutex<Vec<String>>, log: &str) {
    logs.lock().unwrap().extend(
        log.lines()
            .filter(|line| line.contains("WARN") || line.contains("ERROR"))
            .map(str::to_owned),
    );
}

/// What the clients count.
#[derive(Debug, Default)]
struct Counts {
    sent: AtomicUsize,
    acknowledged: AtomicUsize,
    retried: AtomicUsize,
    timeouts: AtomicUsize,
    connection_errors: AtomicUsize,
    unavailable: AtomicUsize,
    held: AtomicUsize,
}

impl Counts {
    /// Counts an attempt that got no answer: it timed out, or its connection failed.
    fn failed(&self, error: &reqwest::Error) {
        let count = if error.is_timeout() {
            &self.timeouts
        } else {
            &self.connection_errors
        };
        count.fetch_add(1, Ordering::Relaxed);
    }
}

/// One turn: `Pay <cents> cents for turn <n> of <session>.`, sent with the idempotency key
/// `<session>/<n>` to random replicas until one acknowledges it: the events it answered.
async fn turn(
    client: &reqwest::Client,
    replicas: &Replicas,
    counts: &Counts,
    random: &mut Random,
    (user, session, n): (&str, &str, usize),
) -> Vec<Value> {
    let body = json!({
        "appName": APP, "userId": user, "sessionId": session,
        "newMessage": {"role": "user", "parts": [{
            "text": format!("Pay {} cents for turn {n} of {session}.", 100 + n),
        }]},
    });
    let key = format!("{session}/{n}");
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            counts.retried.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let base = pick(replicas, random);
        counts.sent.fetch_add(1, Ordering::Relaxed);
        let sent = client
            .post(format!("{base}/run"))
            .header("Idempotency-Key", &key)
            .json(&body)
            .timeout(CLIENT_TIMEOUT)
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                counts.failed(&error);
                continue;
            }
        };
        let status = response.status();
        let answer = match response.json::<Value>().await {
            Ok(answer) => answer,
            Err(error) => {
                counts.failed(&error);
                continue;
            }
        };
        if status.is_success() {
            counts.acknowledged.fetch_add(1, Ordering::Relaxed);
            return answer.as_array().cloned().unwrap_or_default();
        }
        // A full or restarting replica (503) or a session still held (409) is retried; anything
        // else is a bug.
        match status.as_u16() {
            503 => counts.unavailable.fetch_add(1, Ordering::Relaxed),
            409 => counts.held.fetch_add(1, Ordering::Relaxed),
            _ => panic!("turn {n} of {session}: {status} {answer}"),
        };
    }
    panic!("turn {n} of {session} was never acknowledged");
}

/// The running replicas, by slot, and how to start another.
struct Fleet {
    served: Vec<Option<(usize, Served)>>,
    replicas: Replicas,
    model: Arc<MockServer>,
    ledger: Arc<MockServer>,
    url: String,
    root: PathBuf,
    next_instance: usize,
    logs: Arc<Mutex<Vec<String>>>,
}

impl Fleet {
    /// Starts the next instance in `slot`.
    async fn start(&mut self, slot: usize) {
        let instance = self.next_instance;
        self.next_instance += 1;
        let folder = app_folder(&self.root, &self.ledger, instance);
        let served = start_replica(&self.model, &self.url, &folder, instance).await;
        let base = served.base.clone();
        if slot < self.served.len() {
            self.served[slot] = Some((instance, served));
            self.replicas.lock().unwrap()[slot] = base;
        } else {
            self.served.push(Some((instance, served)));
            self.replicas.lock().unwrap().push(base);
        }
    }

    /// The instances running.
    fn running(&self) -> Vec<usize> {
        self.served
            .iter()
            .flatten()
            .map(|(instance, _)| *instance)
            .collect()
    }

    /// Kills the replica running `instance` with SIGKILL and starts another in its slot; `false`
    /// when that instance is no longer running.
    async fn kill(&mut self, instance: usize) -> bool {
        let Some(slot) = self
            .served
            .iter()
            .position(|running| running.as_ref().is_some_and(|(id, _)| *id == instance))
        else {
            return false;
        };
        // The slot's address stays in the list until the new one is up: clients meet a refused
        // connection meanwhile, as they would meet a dead replica.
        if let Some((_, served)) = self.served[slot].take() {
            keep_warnings(&self.logs, &served.kill().await);
        }
        self.start(slot).await;
        true
    }

    async fn stop(self) {
        for (_, served) in self.served.into_iter().flatten() {
            keep_warnings(&self.logs, &served.kill().await);
        }
    }
}

/// Kills replicas until `wanted` kills landed or `done` is set: arms each point in turn, waits for
/// the model or the ledger to claim it (or, for [`Point::Random`], picks a replica and a moment),
/// kills, restarts, and lets the fleet settle a moment before the next. Returns the kills by
/// point.
async fn kill_repeatedly(
    fleet: &mut Fleet,
    trigger: &Trigger,
    orders: &mut mpsc::UnboundedReceiver<(usize, Duration, Point)>,
    done: &tokio::sync::watch::Receiver<bool>,
    wanted: usize,
) -> HashMap<Point, usize> {
    let mut random = Random::seeded(u64::MAX);
    let mut kills: HashMap<Point, usize> = HashMap::new();
    let mut landed = 0;
    let mut round = 0;
    while landed < wanted && !*done.borrow() {
        let point = POINTS[round % POINTS.len()];
        round += 1;
        tokio::time::sleep(Duration::from_millis(100 + random.below(200) as u64)).await;
        let (instance, after) = if point == Point::Random {
            let running = fleet.running();
            (running[random.below(running.len())], Duration::ZERO)
        } else {
            trigger.armed.store(point as u8, Ordering::SeqCst);
            let order = tokio::time::timeout(Duration::from_secs(5), orders.recv()).await;
            // Disarmed whether or not it was claimed; a claim that came just now is dropped
            // with the stale orders below.
            trigger.armed.store(0, Ordering::SeqCst);
            match order {
                Ok(Some((instance, after, claimed))) if claimed == point => (instance, after),
                _ => continue,
            }
        };
        tokio::time::sleep(after).await;
        if fleet.kill(instance).await {
            landed += 1;
            *kills.entry(point).or_default() += 1;
        }
        while orders.try_recv().is_ok() {}
    }
    kills
}

/// One chaos run: where the sessions live, how many replicas serve them, how much load, how
/// many kills.
struct Setup {
    /// The database, as the report names it.
    database: &'static str,
    /// The `--session-service-uri` of every replica.
    url: String,
    replicas: usize,
    sessions: usize,
    kills: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_killed_at_every_point_of_a_turn_pay_once_and_lose_nothing() {
    let Some(url) = postgres_url() else {
        return;
    };
    let store = PostgresSessionService::connect(&url).await.unwrap();
    let setup = Setup {
        database: "PostgreSQL",
        url,
        replicas: 3,
        sessions: 100,
        kills: 20,
    };
    chaos(setup, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sqlite_server_killed_at_every_point_of_a_turn_pays_once_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let store = SqliteSessionService::open(&path).await.unwrap();
    let setup = Setup {
        database: "SQLite",
        url: format!("sqlite://{}", path.display()),
        replicas: 1,
        sessions: 40,
        kills: 10,
    };
    chaos(setup, &store).await;
}

/// Serves the payments app from `setup.replicas` servers on `setup.url` under load while
/// killing them, then audits the sessions (read from `store`, the same database) and the ledger.
async fn chaos(setup: Setup, store: &dyn SessionService) {
    let Setup {
        database,
        url,
        replicas: replica_count,
        sessions: session_count,
        kills: wanted,
    } = setup;
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let (orders, mut received_orders) = mpsc::unbounded_channel();
    let trigger = Arc::new(Trigger {
        armed: AtomicU8::new(0),
        orders,
    });
    let ledger_book = Arc::new(Mutex::new(Ledger::default()));
    let ledger = {
        let (book, trigger) = (ledger_book.clone(), trigger.clone());
        let random = Mutex::new(Random::seeded(7));
        MockServer::start_checked([], move |request| {
            Some(pay(&book, &trigger, &random, request))
        })
        .await
    };
    let model = {
        let trigger = trigger.clone();
        let calls = AtomicUsize::new(0);
        MockServer::start_checked([], move |request| Some(model(&trigger, &calls, request))).await
    };
    let replicas: Replicas = Arc::default();
    let mut fleet = Fleet {
        served: Vec::new(),
        replicas: replicas.clone(),
        model: Arc::new(model),
        ledger: Arc::new(ledger),
        url: url.clone(),
        root: root.path().to_owned(),
        next_instance: 0,
        logs: Arc::default(),
    };
    for slot in 0..replica_count {
        fleet.start(slot).await;
    }
    let run = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let sessions: Vec<(String, String)> = (0..session_count)
        .map(|i| (format!("u{i}-{run}"), format!("s{i}-{run}")))
        .collect();

    let client = reqwest::Client::new();
    let counts = Arc::new(Counts::default());
    let limit = Arc::new(Semaphore::new(CLIENTS));
    // The events each turn's acknowledged attempt answered, by session and turn.
    let acknowledged: Arc<Mutex<HashMap<String, Vec<Vec<Value>>>>> = Arc::default();
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
                acknowledged
                    .lock()
                    .unwrap()
                    .entry(session.clone())
                    .or_default()
                    .push(events);
            }
        });
    }
    let (finished, done) = tokio::sync::watch::channel(false);
    let loaded = tokio::spawn(async move {
        while let Some(joined) = load.join_next().await {
            joined.unwrap();
        }
        let _ = finished.send(true);
    });
    let kills = tokio::time::timeout(
        PATIENCE,
        kill_repeatedly(&mut fleet, &trigger, &mut received_orders, &done, wanted),
    )
    .await
    .expect("the kills end");
    tokio::time::timeout(PATIENCE, loaded)
        .await
        .expect("every turn is acknowledged")
        .unwrap();
    let load_time = started.elapsed();

    // With the kills over, one more turn per session: it continues whatever the last kill cut
    // off, and shows that every session goes on.
    let mut random = Random::seeded(session_count as u64);
    for (user, session) in &sessions {
        let events = turn(
            &client,
            &replicas,
            &counts,
            &mut random,
            (user, session, TURNS + 1),
        )
        .await;
        acknowledged
            .lock()
            .unwrap()
            .get_mut(session)
            .unwrap()
            .push(events);
    }

    // Read back from the database, not through the servers, which are done.
    fleet.stop().await;
    let acknowledged = acknowledged.lock().unwrap().clone();
    let mut stored = Vec::with_capacity(sessions.len());
    for (user, session) in &sessions {
        let key = SessionKey::new(APP, user.as_str(), session.as_str());
        let found = store
            .get_session(GetSessionRequest::new(key))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("session {session} is stored"));
        stored.push((session, found));
    }
    let book = ledger_book.lock().unwrap();
    let mut audit = Audit::default();
    for (session, found) in &stored {
        audit.session(session, &found.events, &acknowledged[*session], &book);
    }
    audit.ledger(&book);

    let kills_line: Vec<String> = POINTS
        .iter()
        .map(|point| {
            format!(
                "{} {}",
                kills.get(point).copied().unwrap_or(0),
                point.describe()
            )
        })
        .collect();
    let line = format!(
        "chaos: {session_count} sessions x {} turns on {replica_count} {database} server(s) in \
         {:.1}s \
         (load {:.1}s)\n\
         chaos: kills {} ({})\n\
         chaos: requests sent {}, acknowledged {}, retried {} (timeouts {}, connection errors {}, \
         503 {}, 409 {})\n\
         chaos: turns stored once {}, acknowledged events {} all stored once; invocations \
         completed in their own request {}, completed on resume {}, ended cancelled {}\n\
         chaos: ledger requests {}, distinct effects {}, keys sent more than once {} (by another \
         server {}), turns paid {}, duplicate effects {}, effects no stored answer knows {}",
        TURNS + 1,
        started.elapsed().as_secs_f64(),
        load_time.as_secs_f64(),
        kills.values().sum::<usize>(),
        kills_line.join(", "),
        counts.sent.load(Ordering::Relaxed),
        counts.acknowledged.load(Ordering::Relaxed),
        counts.retried.load(Ordering::Relaxed),
        counts.timeouts.load(Ordering::Relaxed),
        counts.connection_errors.load(Ordering::Relaxed),
        counts.unavailable.load(Ordering::Relaxed),
        counts.held.load(Ordering::Relaxed),
        audit.turns,
        audit.acknowledged_events,
        audit.completed,
        audit.resumed,
        audit.cancelled,
        book.requests.len(),
        book.payments.len(),
        audit.keys_repeated,
        audit.keys_across_replicas,
        audit.paid_turns,
        audit.duplicate_effects,
        audit.unknown_effects,
    );
    drop(book);
    // Straight to stderr, past the harness's capture: the counts are the test's report.
    let _ = writeln!(std::io::stderr(), "\n{line}");
    assert_eq!(audit.duplicate_effects, 0, "{line}");
    assert_eq!(audit.unknown_effects, 0, "{line}");
    assert!(
        kills.values().sum::<usize>() >= wanted / 2,
        "too few kills landed: {line}"
    );
}

/// What the audit of the stored sessions and the ledger found.
#[derive(Debug, Default)]
struct Audit {
    turns: usize,
    acknowledged_events: usize,
    completed: usize,
    resumed: usize,
    cancelled: usize,
    /// The keys of the payments the stored answers hold, with their session and turn.
    answered: HashMap<String, (String, u64)>,
    keys_repeated: usize,
    /// Keys sent by more than one server: calls run again by another after a kill.
    keys_across_replicas: usize,
    paid_turns: usize,
    duplicate_effects: usize,
    unknown_effects: usize,
}

impl Audit {
    /// Checks one session's events against what its turns acknowledged and what the ledger holds.
    fn session(
        &mut self,
        session: &str,
        events: &[Event],
        acknowledged: &[Vec<Value>],
        book: &Ledger,
    ) {
        let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
        // Every acknowledged event is stored exactly once, in the order it was acknowledged.
        let all = acknowledged.iter().flatten();
        assert_stored_once_in_order(
            session,
            &ids,
            all.map(|event| event["id"].as_str().unwrap()),
        );
        self.acknowledged_events += acknowledged.iter().map(Vec::len).sum::<usize>();
        let acknowledged_in: HashMap<&str, usize> = acknowledged
            .iter()
            .enumerate()
            .flat_map(|(turn, events)| {
                events
                    .iter()
                    .map(move |event| (event["id"].as_str().unwrap(), turn + 1))
            })
            .collect();
        for n in 1..=TURNS + 1 {
            let text = format!("Pay {} cents for turn {n} of {session}.", 100 + n);
            let messages: Vec<&Event> = events
                .iter()
                .filter(|event| {
                    event.author == "user" && event.text().as_deref() == Some(text.as_str())
                })
                .collect();
            assert_eq!(
                messages.len(),
                1,
                "{session}: turn {n}'s message is stored {} times",
                messages.len()
            );
            self.turns += 1;
            let invocation = &messages[0].invocation_id;
            let own: Vec<&Event> = events
                .iter()
                .filter(|event| &event.invocation_id == invocation && event.author != "user")
                .collect();
            let calls: Vec<_> = own
                .iter()
                .flat_map(|event| event.function_calls())
                .collect();
            let answers: Vec<_> = own
                .iter()
                .flat_map(|event| event.function_responses())
                .collect();
            let last = own
                .last()
                .unwrap_or_else(|| panic!("{session}: turn {n} has no answer"));
            if last.response.error_code.as_deref() == Some("CANCELLED") {
                self.cancelled += 1;
                assert!(
                    calls.len() <= 1,
                    "{session}: turn {n} asked {} calls",
                    calls.len()
                );
            } else {
                assert_eq!(
                    calls.len(),
                    1,
                    "{session}: turn {n} asked {} calls",
                    calls.len()
                );
                assert!(
                    last.text().is_some_and(|text| text.starts_with("Paid: ")),
                    "{session}: turn {n} ended with {last:?}"
                );
                // Completed in the request of its own turn, or by a later one that resumed it.
                // An answer no acknowledgement holds was stored by a later turn's attempt that
                // resumed this invocation, then died before storing its own message.
                if acknowledged_in.get(last.id.as_str()) == Some(&n) {
                    self.completed += 1;
                } else {
                    self.resumed += 1;
                }
            }
            assert_eq!(
                answers.len(),
                calls.len(),
                "{session}: turn {n}: {answers:?}"
            );
            for answer in answers {
                let payment = &Value::Object(answer.response.clone());
                let Some(key) = payment["key"].as_str() else {
                    // Only a cancellation answers a call with no payment.
                    assert!(
                        payment.to_string().contains("cancelled"),
                        "{session}: turn {n}: {payment}"
                    );
                    continue;
                };
                assert_eq!(
                    book.payments.get(key),
                    Some(payment),
                    "{session}: turn {n}'s stored payment is the ledger's for its key"
                );
                assert_eq!(payment["session"], session);
                assert_eq!(payment["turn"], json!(n));
                let again = self
                    .answered
                    .insert(key.to_owned(), (session.to_owned(), n as u64));
                assert!(
                    again.is_none(),
                    "{session}: the payment of {key} is answered twice"
                );
            }
        }
    }

    /// Checks the ledger: one payment per paid turn, and each payment known to a stored answer.
    fn ledger(&mut self, book: &Ledger) {
        let mut by_turn: HashMap<(String, u64), usize> = HashMap::new();
        for payment in book.payments.values() {
            let turn = (
                payment["session"].as_str().unwrap_or_default().to_owned(),
                payment["turn"].as_u64().unwrap_or_default(),
            );
            *by_turn.entry(turn).or_default() += 1;
        }
        self.paid_turns = by_turn.len();
        self.duplicate_effects = by_turn.values().map(|count| count - 1).sum();
        self.unknown_effects = book
            .payments
            .keys()
            .filter(|key| !self.answered.contains_key(*key))
            .count();
        let mut sent: HashMap<&str, HashSet<usize>> = HashMap::new();
        let mut times: HashMap<&str, usize> = HashMap::new();
        for request in &book.requests {
            sent.entry(&request.key)
                .or_default()
                .insert(request.instance);
            *times.entry(&request.key).or_default() += 1;
        }
        self.keys_repeated = times.values().filter(|count| **count > 1).count();
        self.keys_across_replicas = sent.values().filter(|sent| sent.len() > 1).count();
    }
}
