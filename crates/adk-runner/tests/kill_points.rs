//! A property of durable invocations: whatever await point of an invocation a crash cuts it at,
//! a fresh runner on the same store resumes it and nothing is done twice.
//!
//! Each case generates a scripted conversation (rounds of tool calls, then an answer) over three
//! tools, one read-only, one idempotent with a key and one effectful, and one kill point: the run
//! dropped after some events, while the model answers, inside a tool before or after its effect,
//! or the store failing from some write on (once after the write committed, as a connection cut
//! while the answer travels). Then a new runner, as a restarted process, resumes the invocation
//! and declines every interrupted effectful call it asks about. Afterwards the stored session
//! and the ledger of effects must say: every effect happened at most once per idempotency key,
//! and exactly once for every call answered with its result; every stored event is stored once,
//! each model answer once and in the script's order, each call answered once after it; and the
//! invocation completed.
//!
//! The model answers from the history it is given, not from a queue, so a model call made again
//! on resume gets the same answer, as a real model asked the same question would give.

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use adk_core::{
    Content, Error, ErrorKind, Event, FunctionCall, FunctionCallId, FunctionDeclaration,
    GetSessionRequest, InvocationId, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Role,
    Session, SessionKey, SessionService, StreamingMode, ToolIntent,
};
use adk_flow::LlmAgent;
use adk_runner::{RunRequest, Runner};
use adk_session::{InMemorySessionService, SqliteSessionService};
use adk_tool::{Tool, ToolContext, ToolEffect};
use futures::StreamExt as _;
use parking_lot::Mutex;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};
use support::{APP, SESSION, USER, run_request};
use tokio::sync::Notify;

/// How long a case waits for something that should happen at once, before failing.
const GUARD: Duration = Duration::from_secs(30);

/// The tools, by effect: what the script's calls pick from.
const TOOLS: [(&str, ToolEffect); 3] = [
    ("read", ToolEffect::ReadOnly),
    ("reserve", ToolEffect::Idempotent),
    ("charge", ToolEffect::Effectful),
];

/// The model's last answer, which ends the invocation.
const ANSWER: &str = "All done.";

/// A conversation: the rounds of calls the model makes, each a list of tool names.
type Script = Vec<Vec<&'static str>>;

/// Where the first run is cut off.
#[derive(Debug, Clone)]
enum Kill {
    /// The run is dropped after it yielded this many events (never, if it yields fewer).
    AfterEvents(usize),
    /// The run is dropped while the model answers this round (the last round is the answer).
    InModel(Index),
    /// The run is dropped inside this call's tool, before or after its effect.
    InTool {
        round: Index,
        slot: Index,
        after_effect: bool,
    },
    /// Every write of the store from this one on fails; with `committed`, this one is stored
    /// before it reports its failure.
    StoreFails { writes: usize, committed: bool },
}

/// One run of a tool: which call it answered and the key it was given.
#[derive(Debug)]
struct ToolRun {
    tool: &'static str,
    call: FunctionCallId,
    key: String,
}

/// What happened outside the session: every run of a tool, and the effects, as an API would
/// keep them (the idempotent one by key, the effectful one every time).
#[derive(Default)]
struct Ledger {
    runs: Vec<ToolRun>,
    reservations: HashSet<String>,
    charges: Vec<String>,
}

/// What the tools and the model share in one case: the ledger, and the kill point's trap, which
/// springs once and tells the test.
struct World {
    ledger: Mutex<Ledger>,
    /// The (round, slot, after effect) of the tool call to stop in, or the round of the model
    /// call to stop in (slot `usize::MAX`), until it sprang.
    trap: Mutex<Option<(usize, usize, bool)>>,
    sprung: Notify,
}

impl World {
    fn new(script: &Script, kill: &Kill) -> Arc<Self> {
        let trap = match kill {
            Kill::InModel(round) => Some((round.index(script.len() + 1), usize::MAX, false)),
            Kill::InTool {
                round,
                slot,
                after_effect,
            } => {
                let round = round.index(script.len());
                Some((round, slot.index(script[round].len()), *after_effect))
            }
            Kill::AfterEvents(_) | Kill::StoreFails { .. } => None,
        };
        Arc::new(Self {
            ledger: Mutex::default(),
            trap: Mutex::new(trap),
            sprung: Notify::new(),
        })
    }

    /// Whether the trap is set at `(round, slot)` (and `after_effect`), disarming it if so.
    fn spring(&self, round: usize, slot: usize, after_effect: bool) -> bool {
        let mut trap = self.trap.lock();
        if *trap == Some((round, slot, after_effect)) {
            *trap = None;
            self.sprung.notify_one();
            true
        } else {
            false
        }
    }
}

/// A model that answers from the history: round `n` of the script once it sees `n` rounds of
/// calls answered, then [`ANSWER`].
struct HistoryModel {
    script: Script,
    world: Arc<World>,
}

impl Llm for HistoryModel {
    fn name(&self) -> &str {
        "history"
    }

    fn generate(&self, request: LlmRequest, _mode: StreamingMode) -> LlmResponseStream {
        let round = request
            .contents
            .iter()
            .filter(|content| {
                content.role == Some(Role::Model)
                    && content
                        .function_calls()
                        .any(|call| TOOLS.iter().any(|(name, _)| *name == call.name))
            })
            .count();
        let content = match self.script.get(round) {
            Some(calls) => Content::new(
                Role::Model,
                calls.iter().enumerate().map(|(slot, tool)| {
                    Part::function_call(FunctionCall::new(
                        *tool,
                        json!({"round": round, "slot": slot}),
                    ))
                }),
            ),
            None => Content::model(ANSWER),
        };
        let answer = futures::stream::iter([Ok(LlmResponse::new(content))]);
        if self.world.spring(round, usize::MAX, false) {
            return futures::stream::pending().boxed();
        }
        answer.boxed()
    }
}

/// A tool of the ledger, with the effect its name says.
struct LedgerTool {
    name: &'static str,
    effect: ToolEffect,
    world: Arc<World>,
}

#[async_trait::async_trait]
impl Tool for LedgerTool {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "Acts on the ledger."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new(self.name, self.description()))
    }

    fn effect(&self) -> ToolEffect {
        self.effect
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> adk_core::Result<Value> {
        let place = |key: &str| usize::try_from(args[key].as_u64().unwrap()).unwrap();
        let (round, slot) = (place("round"), place("slot"));
        let key = ctx.idempotency_key().expect("a call has a key");
        self.world.ledger.lock().runs.push(ToolRun {
            tool: self.name,
            call: ctx.function_call_id().unwrap().clone(),
            key: key.clone(),
        });
        if self.world.spring(round, slot, false) {
            futures::future::pending::<()>().await;
        }
        {
            let mut ledger = self.world.ledger.lock();
            match self.effect {
                ToolEffect::Idempotent => {
                    ledger.reservations.insert(key);
                }
                ToolEffect::Effectful => ledger.charges.push(key),
                _ => {}
            }
        }
        if self.world.spring(round, slot, true) {
            futures::future::pending::<()>().await;
        }
        Ok(json!({"done": [round, slot]}))
    }
}

/// A session store whose writes fail from the `fail_from`-th on (counting from 0), as a
/// database that goes away; with `committed`, that first failing write is stored first.
struct FailingStore {
    inner: Arc<dyn SessionService>,
    writes: AtomicUsize,
    fail_from: usize,
    committed: bool,
}

impl FailingStore {
    /// Makes `write` (not started yet) the next write: done, not done and failed, or done and
    /// failed.
    async fn write<T>(
        &self,
        write: impl Future<Output = adk_core::Result<T>>,
    ) -> adk_core::Result<T> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst);
        if n < self.fail_from {
            return write.await;
        }
        if n == self.fail_from && self.committed {
            write.await?;
        }
        Err(Self::gone())
    }

    fn gone() -> Error {
        Error::new(ErrorKind::Session, "the database went away")
    }
}

#[async_trait::async_trait]
impl SessionService for FailingStore {
    async fn create_session(
        &self,
        request: adk_core::CreateSessionRequest,
    ) -> adk_core::Result<Session> {
        self.inner.create_session(request).await
    }

    async fn get_session(&self, request: GetSessionRequest) -> adk_core::Result<Option<Session>> {
        self.inner.get_session(request).await
    }

    async fn list_sessions(&self, app: &str, user: &str) -> adk_core::Result<Vec<Session>> {
        self.inner.list_sessions(app, user).await
    }

    async fn delete_session(&self, key: &SessionKey) -> adk_core::Result<()> {
        self.inner.delete_session(key).await
    }

    async fn persist_event(
        &self,
        key: &SessionKey,
        revision: u64,
        event: &Event,
    ) -> adk_core::Result<u64> {
        self.write(self.inner.persist_event(key, revision, event))
            .await
    }

    async fn record_tool_intent(
        &self,
        key: &SessionKey,
        intent: &ToolIntent,
    ) -> adk_core::Result<()> {
        self.write(self.inner.record_tool_intent(key, intent)).await
    }

    async fn tool_journal(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> adk_core::Result<Option<Vec<adk_core::JournalEntry>>> {
        self.inner.tool_journal(key, invocation_id).await
    }
}

/// A runner of the script's agent on `sessions`, as a server builds it: resumable, resuming
/// what a crash cut off.
fn runner(script: &Script, world: &Arc<World>, sessions: Arc<dyn SessionService>) -> Runner {
    let mut agent = LlmAgent::builder("assistant").model(HistoryModel {
        script: script.clone(),
        world: world.clone(),
    });
    for (name, effect) in TOOLS {
        agent = agent.tool(Arc::new(LedgerTool {
            name,
            effect,
            world: world.clone(),
        }) as Arc<dyn Tool>);
    }
    Runner::builder(APP, agent.build().unwrap(), sessions)
        .auto_create_session(true)
        .resumable(true)
        .resume_interrupted(true)
        .build()
        .unwrap()
}

/// Runs the user's message until the kill point, then drops the run as a crash would.
async fn first_run(runner: &Runner, world: &World, kill: &Kill) {
    let mut run = runner.run(USER, SESSION, "go");
    let mut yielded = 0;
    let polled = async {
        while let Some(item) = run.next().await {
            if item.is_err() {
                // A store that went away ends the run with its error.
                return;
            }
            yielded += 1;
            if matches!(kill, Kill::AfterEvents(after) if *after == yielded) {
                return;
            }
        }
    };
    tokio::time::timeout(GUARD, async {
        tokio::select! {
            () = polled => {}
            () = world.sprung.notified() => {}
        }
    })
    .await
    .expect("the first run reaches its kill point or its end");
}

/// The stored test session.
async fn stored(sessions: &dyn SessionService) -> Session {
    sessions
        .get_session(GetSessionRequest::new(SessionKey::new(APP, USER, SESSION)))
        .await
        .unwrap()
        .expect("the session was created")
}

/// The questions about interrupted calls that the session holds and nobody answered.
fn pending_decisions(session: &Session) -> Vec<FunctionCallId> {
    let answered: HashSet<&FunctionCallId> = session
        .events
        .iter()
        .flat_map(Event::function_responses)
        .filter_map(|response| response.id.as_ref())
        .collect();
    session
        .events
        .iter()
        .flat_map(Event::function_calls)
        .filter(|call| call.name == "adk_request_confirmation")
        .filter_map(|call| call.id.clone())
        .filter(|id| !answered.contains(id))
        .collect()
}

/// One case: the first run cut at `kill`, a fresh runner resuming it, then the invariants.
async fn case(sessions: Arc<dyn SessionService>, script: Script, kill: Kill) {
    let world = World::new(&script, &kill);
    let first_store: Arc<dyn SessionService> = match kill {
        Kill::StoreFails { writes, committed } => Arc::new(FailingStore {
            inner: sessions.clone(),
            writes: AtomicUsize::new(0),
            fail_from: writes,
            committed,
        }),
        _ => sessions.clone(),
    };
    let crashed = runner(&script, &world, first_store);
    first_run(&crashed, &world, &kill).await;
    drop(crashed);

    // A restarted process: a new runner on the healthy store resumes the cut-off invocation and
    // the user declines every interrupted effectful call it asks about.
    let restarted = runner(&script, &world, sessions.clone());
    let resumed = tokio::time::timeout(GUARD, async {
        if let Some(run) = restarted
            .resume_interrupted(USER, SESSION, adk_core::RunConfig::default())
            .await
            .expect("the resume starts")
        {
            adk_test::RunOutcome::collect(run).await
        } else {
            adk_test::RunOutcome::default()
        }
    })
    .await
    .expect("the resume ends");
    assert!(
        resumed.error.is_none(),
        "the resume failed: {:?}",
        resumed.error
    );
    for _ in 0..=script.len() {
        let questions = pending_decisions(&stored(sessions.as_ref()).await);
        if questions.is_empty() {
            break;
        }
        let answers = questions.into_iter().map(|question| {
            adk_core::FunctionResponse::new("adk_request_confirmation", json!({"confirmed": false}))
                .with_id(question)
        });
        let declined = tokio::time::timeout(
            GUARD,
            run_request(
                &restarted,
                RunRequest::new(USER, SESSION).function_responses(answers),
            ),
        )
        .await
        .expect("the decision's run ends");
        assert!(declined.error.is_none(), "{:?}", declined.error);
    }

    check(
        &stored(sessions.as_ref()).await,
        &script,
        &world.ledger.lock(),
    );
}

/// The invariants, on the stored session and the ledger.
fn check(session: &Session, script: &Script, ledger: &Ledger) {
    let events = &session.events;
    let ids: HashSet<_> = events.iter().map(|event| &event.id).collect();
    assert_eq!(ids.len(), events.len(), "an event is stored twice");

    let messages = events
        .iter()
        .filter(|event| event.author == adk_core::USER_AUTHOR && event.text().is_some())
        .count();
    if messages == 0 {
        // The store failed before the message was stored: nothing ran.
        assert!(events.is_empty(), "{}", adk_test::render_events(events));
        assert!(
            ledger.runs.is_empty(),
            "a tool ran for a message never stored"
        );
        return;
    }
    assert_eq!(messages, 1, "the message is stored once");

    // Each model answer is stored once, in the script's order, and the invocation completed.
    let rounds: Vec<(usize, &Event)> = events
        .iter()
        .enumerate()
        .filter(|(_, event)| {
            event
                .function_calls()
                .any(|call| TOOLS.iter().any(|(name, _)| *name == call.name))
        })
        .collect();
    let stored_script: Script = rounds
        .iter()
        .map(|(_, event)| {
            event
                .function_calls()
                .map(|call| TOOLS.iter().find(|(name, _)| *name == call.name).unwrap().0)
                .collect()
        })
        .collect();
    assert_eq!(
        &stored_script, script,
        "each model answer stored once, in order"
    );
    let answers = events
        .iter()
        .filter(|event| event.text().as_deref() == Some(ANSWER))
        .count();
    assert_eq!(
        answers,
        1,
        "the invocation completed once: {}",
        adk_test::render_events(events)
    );
    // The answer is the last event that says something (an end-of-agent marker may follow).
    let last_said = events
        .iter()
        .rev()
        .find(|event| event.response.content.is_some());
    assert_eq!(
        last_said.and_then(Event::text).as_deref(),
        Some(ANSWER),
        "{}",
        adk_test::render_events(events)
    );
    let invocations: HashSet<_> = events.iter().map(|event| &event.invocation_id).collect();
    assert_eq!(invocations.len(), 1, "one invocation, resumed in place");

    // Each call is answered once (a question to the user about it aside), after it.
    let mut results: HashMap<&FunctionCallId, Value> = HashMap::new();
    for (index, event) in rounds {
        for call in event.function_calls() {
            let id = call.id.as_ref().expect("calls have ids");
            let answers: Vec<(usize, &adk_core::FunctionResponse)> = events
                .iter()
                .enumerate()
                .filter(|(_, answer)| !answer.actions.requested_tool_confirmations.contains_key(id))
                .flat_map(|(at, answer)| {
                    answer
                        .function_responses()
                        .filter(|response| response.id.as_ref() == Some(id))
                        .map(move |response| (at, response))
                })
                .collect();
            assert_eq!(
                answers.len(),
                1,
                "call {id} answered once: {}",
                adk_test::render_events(events)
            );
            let (at, answer) = answers[0];
            assert!(at > index, "call {id} is answered after it");
            results.insert(id, Value::Object(answer.response.clone()));
        }
    }

    // Every run of a call had the call's one key; no two calls share a key.
    let mut keys: HashMap<&FunctionCallId, &str> = HashMap::new();
    for run in &ledger.runs {
        let key = keys.entry(&run.call).or_insert(&run.key);
        assert_eq!(*key, run.key, "a call ran again with another key");
    }
    let distinct: HashSet<&&str> = keys.values().collect();
    assert_eq!(distinct.len(), keys.len(), "two calls share a key");

    // Effects: at most once per key, exactly once for a call answered with its result.
    for (call, key) in &keys {
        let tool = ledger
            .runs
            .iter()
            .find(|run| run.call == **call)
            .unwrap()
            .tool;
        let succeeded = results
            .get(call)
            .is_some_and(|result| result.get("done").is_some());
        match tool {
            "charge" => {
                let runs = ledger.runs.iter().filter(|run| run.call == **call).count();
                assert!(runs <= 1, "an effectful call ran {runs} times");
                let charges = ledger.charges.iter().filter(|charge| charge == key).count();
                assert!(charges <= 1, "charged {charges} times");
                if succeeded {
                    assert_eq!(charges, 1, "an answered charge was made");
                }
            }
            "reserve" if succeeded => {
                assert!(
                    ledger.reservations.contains(*key),
                    "an answered reservation was made"
                );
            }
            _ => {}
        }
    }
}

fn tool_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(TOOLS.map(|(name, _)| name).to_vec())
}

fn scripts() -> impl Strategy<Value = Script> {
    prop::collection::vec(prop::collection::vec(tool_name(), 1..=3), 1..=3)
}

fn kills() -> impl Strategy<Value = Kill> {
    prop_oneof![
        (1usize..12).prop_map(Kill::AfterEvents),
        any::<Index>().prop_map(Kill::InModel),
        (any::<Index>(), any::<Index>(), any::<bool>()).prop_map(|(round, slot, after_effect)| {
            Kill::InTool {
                round,
                slot,
                after_effect,
            }
        }),
        (0usize..12, any::<bool>())
            .prop_map(|(writes, committed)| Kill::StoreFails { writes, committed }),
    ]
}

/// The runtime a case runs on: two workers, as the server's tests use.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn in_memory_invocations_survive_any_kill_point(script in scripts(), kill in kills()) {
        runtime().block_on(case(Arc::new(InMemorySessionService::new()), script, kill));
    }

    #[test]
    fn sqlite_invocations_survive_any_kill_point(script in scripts(), kill in kills()) {
        runtime().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let sessions = SqliteSessionService::open(dir.path().join("sessions.db"))
                .await
                .unwrap();
            case(Arc::new(sessions), script, kill).await;
        });
    }
}
