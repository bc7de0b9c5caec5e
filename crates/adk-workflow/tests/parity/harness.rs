//! The adk-rs side of a parity scenario: a scripted model that logs every request in the order the
//! models were called, and a run of turns through the real runner that records a transcript.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Agent, Content, FunctionCall, FunctionResponse, Llm, LlmRequest, LlmResponse,
    LlmResponseStream, Part, Role,
};
use adk_runner::Runner;
use adk_session::InMemorySessionService;
use adk_test::transcript::{Entry, Transcript};
use futures::StreamExt as _;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// The requests of every model of a scenario, with the turn they came in.
#[derive(Clone, Default)]
pub(crate) struct Log {
    turn: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<(usize, Value)>>>,
}

impl Log {
    /// A model named `name` answering with `responses`, one per call.
    pub(crate) fn model(&self, name: &str, responses: Vec<LlmResponse>) -> Arc<dyn Llm> {
        Arc::new(Scripted {
            name: name.to_owned(),
            responses: Mutex::new(responses.into()),
            log: self.clone(),
        })
    }
}

struct Scripted {
    name: String,
    responses: Mutex<VecDeque<LlmResponse>>,
    log: Log,
}

impl Llm for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, request: LlmRequest, _mode: adk_core::StreamingMode) -> LlmResponseStream {
        let mut tools: Vec<String> = request.tools.iter().map(|tool| tool.name.clone()).collect();
        tools.sort();
        let entry =
            json!({"model": self.name, "contents": request.contents.as_ref(), "tools": tools});
        let turn = self.log.turn.load(Ordering::SeqCst);
        self.log.requests.lock().push((turn, entry));
        let response = self.responses.lock().pop_front();
        let result = response.ok_or_else(|| {
            adk_core::Error::new(
                adk_core::ErrorKind::Model,
                "the scripted model has no answer left",
            )
        });
        futures::stream::iter([result]).boxed()
    }
}

/// A model answer made of one text part.
pub(crate) fn text(value: &str) -> LlmResponse {
    LlmResponse::new(Content::model(value))
}

/// A model answer that calls `name` with `args`, with the call id `id`.
pub(crate) fn call(name: &str, args: Value, id: &str) -> LlmResponse {
    LlmResponse::new(Content::new(
        Role::Model,
        [Part::function_call(
            FunctionCall::new(name, args).with_id(id),
        )],
    ))
}

/// A user message.
pub(crate) fn user(value: &str) -> Content {
    Content::user(value)
}

/// The user's function response to call `id` of `name`.
pub(crate) fn answer(id: &str, name: &str, response: Value) -> Content {
    Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new(name, response).with_id(id),
        )],
    )
}

/// Runs `turns` in one session of an app whose root is `root` and records the transcript.
pub(crate) async fn run(
    root: Arc<dyn Agent>,
    log: &Log,
    turns: Vec<Content>,
    resumable: bool,
) -> Transcript {
    let runner = Runner::builder("parity", root, InMemorySessionService::new())
        .auto_create_session(true)
        .resumable(resumable)
        .build()
        .expect("the runner builds");
    let mut transcript = Transcript::default();
    for (turn, message) in turns.into_iter().enumerate() {
        log.turn.store(turn, Ordering::SeqCst);
        let mut events = Box::pin(runner.run("user", "s1", message));
        let deadline = std::time::Duration::from_secs(30);
        loop {
            let next = tokio::time::timeout(deadline, events.next())
                .await
                .expect("the run does not hang");
            match next {
                None => break,
                Some(Ok(event)) => {
                    transcript.push(turn, Entry::Event(serde_json::to_value(&event).unwrap()))
                }
                Some(Err(error)) => {
                    transcript.push(
                        turn,
                        Entry::Error(
                            json!({"type": error.kind().as_str(), "message": error.message()}),
                        ),
                    );
                    break;
                }
            }
        }
    }
    for (turn, request) in log.requests.lock().drain(..) {
        transcript.push(turn, Entry::Request(request));
    }
    transcript
}

/// ADK Python's transcript of the scenario script `name` (under `tests/parity/python`).
pub(crate) fn python(name: &str, args: &[&str]) -> Transcript {
    let script: PathBuf = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/parity/python")
        .join(format!("{name}.py"));
    Transcript::of_python(&script, args)
}
