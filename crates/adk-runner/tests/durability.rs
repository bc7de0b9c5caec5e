//! The effect journal end to end: a run "crashes" (its stream is dropped) while its tools run,
//! after their intents were recorded and before their results were; the resumed invocation runs
//! the idempotent tool again with the same idempotency key, and asks the user before running the
//! effectful one again, which it never does silently.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_core::{Event, FunctionDeclaration, InvocationId, SessionKey, SessionService};
use adk_runner::{RunRequest, Runner};
use adk_session::{InMemorySessionService, SqliteSessionService};
use adk_test::ScriptedModel;
use adk_tool::{Tool, ToolContext, ToolEffect};
use futures::StreamExt as _;
use parking_lot::Mutex;
use serde_json::{Value, json};
use support::{APP, SESSION, USER, agent, answer, run_request, runner_on};
use tokio::sync::mpsc;

/// How long a test waits for something that should happen at once, before failing.
const GUARD: Duration = Duration::from_secs(30);

/// What the tools saw: the idempotency key of each run, by tool.
#[derive(Default)]
struct Ledger {
    charges: Vec<String>,
    reservations: Vec<String>,
}

/// A tool that writes the idempotency key of each run to the ledger and tells `started` when it
/// starts; its first run never finishes, standing for the work a crash cuts off.
struct Recording {
    name: &'static str,
    effect: ToolEffect,
    ledger: Arc<Mutex<Ledger>>,
    started: mpsc::UnboundedSender<&'static str>,
}

#[async_trait::async_trait]
impl Tool for Recording {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "Acts on an item."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new(self.name, self.description()))
    }

    fn effect(&self) -> ToolEffect {
        self.effect
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> adk_core::Result<Value> {
        let key = ctx.idempotency_key().expect("a function call has a key");
        let first = {
            let mut ledger = self.ledger.lock();
            let runs = match self.effect {
                ToolEffect::Effectful => &mut ledger.charges,
                _ => &mut ledger.reservations,
            };
            runs.push(key);
            runs.len() == 1
        };
        let _ = self.started.send(self.name);
        if first {
            futures::future::pending::<()>().await;
        }
        Ok(json!({"done": args["item"]}))
    }
}

/// `charge` (effectful) and `reserve` (idempotent).
fn tools(
    ledger: &Arc<Mutex<Ledger>>,
    started: &mpsc::UnboundedSender<&'static str>,
) -> [Arc<dyn Tool>; 2] {
    let tool = |name, effect| -> Arc<dyn Tool> {
        Arc::new(Recording {
            name,
            effect,
            ledger: ledger.clone(),
            started: started.clone(),
        })
    };
    [
        tool("charge", ToolEffect::Effectful),
        tool("reserve", ToolEffect::Idempotent),
    ]
}

/// Runs until both tools started, then drops the run as a crash would; returns the invocation.
async fn crash_while_tools_run(
    runner: &Runner,
    started: &mut mpsc::UnboundedReceiver<&'static str>,
) -> InvocationId {
    let mut run = runner.run(USER, SESSION, "Pay for the seat and reserve it");
    let mut invocation = None;
    let both_started = async {
        started.recv().await.expect("a tool started");
        started.recv().await.expect("the other tool started");
    };
    let polled = async {
        while let Some(event) = run.next().await {
            invocation.get_or_insert(event.expect("no error before the crash").invocation_id);
        }
        panic!("the run ended before its tools started");
    };
    tokio::time::timeout(GUARD, async {
        tokio::select! {
            () = both_started => {}
            () = polled => {}
        }
    })
    .await
    .expect("the tools started");
    drop(run);
    invocation.expect("the model's call event was yielded before the tools ran")
}

fn model() -> ScriptedModel {
    ScriptedModel::new("m")
        .then_calls(&[
            ("charge", json!({"item": "seat 12A"})),
            ("reserve", json!({"item": "seat 12A"})),
        ])
        .then_text("Paid and reserved.")
}

/// What the calls of `name` among `events` were answered with.
fn responses(events: &[Event], name: &str) -> Vec<Value> {
    events
        .iter()
        .flat_map(Event::function_responses)
        .filter(|response| response.name == name)
        .map(|response| Value::Object(response.response.clone()))
        .collect()
}

async fn resume_after_a_crash(sessions: Arc<dyn SessionService>, decision: Decision) {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let model = model();
    let [charge, reserve] = tools(&ledger, &started_tx);
    let assistant = agent("assistant", &model)
        .tool(charge)
        .tool(reserve)
        .build()
        .unwrap();
    let runner = runner_on(assistant, sessions.clone())
        .resumable(true)
        .build()
        .unwrap();

    let invocation = crash_while_tools_run(&runner, &mut started).await;
    let key = SessionKey::new(APP, USER, SESSION);
    let journal = sessions
        .tool_journal(&key, &invocation)
        .await
        .unwrap()
        .expect("the service keeps a journal");
    assert_eq!(
        journal.len(),
        2,
        "both intents recorded before the tools ran"
    );
    assert!(journal.iter().all(|entry| !entry.is_complete()));

    let resumed = tokio::time::timeout(
        GUARD,
        run_request(
            &runner,
            RunRequest::new(USER, SESSION).resume(invocation.clone()),
        ),
    )
    .await
    .expect("the resumed run ends");
    assert!(resumed.error.is_none(), "{:?}", resumed.error);
    {
        let ledger = ledger.lock();
        assert_eq!(
            ledger.charges.len(),
            1,
            "the effectful tool did not run again"
        );
        assert_eq!(
            ledger.reservations.len(),
            2,
            "the idempotent tool ran again"
        );
        assert_eq!(
            ledger.reservations[0], ledger.reservations[1],
            "with the same idempotency key"
        );
    }
    assert_eq!(
        responses(&resumed.events, "reserve"),
        [json!({"done": "seat 12A"})]
    );
    let charge_answer = responses(&resumed.events, "charge");
    assert!(
        charge_answer[0]["error"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{charge_answer:?}"
    );
    let request = resumed
        .events
        .iter()
        .flat_map(Event::function_calls)
        .find(|call| call.name == "adk_request_confirmation")
        .expect("the user is asked to decide");
    assert_eq!(request.args["originalFunctionCall"]["name"], "charge");
    assert_eq!(model.remaining(), 1, "the model waits for the decision");

    {
        let journal = sessions
            .tool_journal(&key, &invocation)
            .await
            .unwrap()
            .unwrap();
        let reserve = journal
            .iter()
            .find(|entry| entry.intent.tool_name == "reserve")
            .unwrap();
        assert!(reserve.is_complete(), "completed with its stored answer");
        assert_eq!(reserve.attempts, 2);
        let charge = journal
            .iter()
            .find(|entry| entry.intent.tool_name == "charge")
            .unwrap();
        assert!(!charge.is_complete());
        assert_eq!(
            request.args["toolConfirmation"]["payload"]["adkInterruptedCall"]["attempts"],
            1
        );
    }

    let decided = answer(
        &runner,
        "adk_request_confirmation",
        request.id.clone().unwrap(),
        json!({"confirmed": decision == Decision::Confirm}),
    )
    .await;
    assert!(decided.error.is_none(), "{:?}", decided.error);
    let answered = responses(&decided.events, "charge");
    match decision {
        // Declined (answered without the payload, as a plain client does): the call is answered
        // without running.
        Decision::Decline => {
            assert_eq!(ledger.lock().charges.len(), 1, "a declined call never runs");
            assert!(
                answered[0]["error"]
                    .as_str()
                    .unwrap()
                    .contains("chose not to run"),
                "{answered:?}"
            );
        }
        // Confirmed: it runs once more, with the same key, and its result completes the journal.
        Decision::Confirm => {
            let charges = ledger.lock().charges.clone();
            assert_eq!(charges.len(), 2, "a confirmed call runs again");
            assert_eq!(charges[0], charges[1], "with the same idempotency key");
            assert_eq!(answered, [json!({"done": "seat 12A"})]);
            let journal = sessions
                .tool_journal(&key, &invocation)
                .await
                .unwrap()
                .unwrap();
            let charge = journal
                .iter()
                .find(|entry| entry.intent.tool_name == "charge")
                .unwrap();
            assert_eq!(charge.attempts, 2);
            assert!(charge.is_complete());
        }
    }
    assert!(
        decided
            .events
            .iter()
            .any(|event| event.text().as_deref() == Some("Paid and reserved.")),
        "the model answers once the call is decided: {:?}",
        decided.events
    );
    assert_eq!(model.remaining(), 0);
}

/// The user's answer to the question about the interrupted effectful call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Confirm,
    Decline,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_interrupted_call_runs_again_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = SqliteSessionService::open(dir.path().join("sessions.db"))
        .await
        .unwrap();
    resume_after_a_crash(Arc::new(sessions), Decision::Confirm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_resume_reruns_idempotent_calls_and_asks_before_effectful_ones() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = SqliteSessionService::open(dir.path().join("sessions.db"))
        .await
        .unwrap();
    resume_after_a_crash(Arc::new(sessions), Decision::Decline).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_resume_reruns_idempotent_calls_and_asks_before_effectful_ones() {
    resume_after_a_crash(Arc::new(InMemorySessionService::new()), Decision::Decline).await;
}
