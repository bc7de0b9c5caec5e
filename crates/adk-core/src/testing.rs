//! Test doubles for code built on adk-rs (feature `test-util`): [`ScriptedModel`], a model that
//! answers from a script and records what it was asked, so that an agent's tests, examples and
//! documentation run without a network or a key.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::{
    Content, Error, ErrorKind, FunctionCall, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part,
    Role, StreamingMode,
};
use futures::StreamExt as _;
use parking_lot::Mutex;
use serde_json::Value;

/// One answer of the script: the responses of one model call, or a failure.
#[derive(Debug, Clone)]
enum Turn {
    Respond(Vec<LlmResponse>),
    Fail(ErrorKind, String),
}

/// A model that answers each call with the next turn of its script, and records every request.
///
/// Clones share the script and the record, so a test can keep one clone and hand the other to
/// an agent.
///
/// ```
/// use adk_core::testing::ScriptedModel;
/// use serde_json::json;
///
/// let model = ScriptedModel::new("scripted")
///     .then_call("get_weather", json!({"city": "Paris"}))
///     .then_text("It is sunny");
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    name: String,
    script: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<LlmRequest>>>,
}

impl ScriptedModel {
    /// A model named `name` with an empty script.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            script: Arc::default(),
            requests: Arc::default(),
        }
    }

    /// Answers the next call with `response`.
    pub fn then(self, response: LlmResponse) -> Self {
        self.then_stream(vec![response])
    }

    /// Answers the next call with these responses in order (partial chunks, then the final one).
    pub fn then_stream(self, responses: Vec<LlmResponse>) -> Self {
        self.script.lock().push_back(Turn::Respond(responses));
        self
    }

    /// Answers the next call with `chunks` streamed as partial text responses, then their
    /// concatenation as the final response (finish reason `STOP`), as a streaming provider's
    /// adapter gives them.
    pub fn then_text_stream(self, chunks: &[&str]) -> Self {
        let mut responses: Vec<LlmResponse> = chunks
            .iter()
            .map(|chunk| {
                let mut response = LlmResponse::new(Content::model(*chunk));
                response.partial = Some(true);
                response
            })
            .collect();
        let mut last = LlmResponse::new(Content::model(chunks.concat()));
        last.finish_reason = Some(crate::FinishReason::Stop);
        responses.push(last);
        self.then_stream(responses)
    }

    /// Answers the next call with a model text.
    pub fn then_text(self, text: &str) -> Self {
        self.then(LlmResponse::new(Content::model(text)))
    }

    /// Answers the next call with one function call.
    pub fn then_call(self, name: &str, args: Value) -> Self {
        self.then_calls(&[(name, args)])
    }

    /// Answers the next call with several function calls in one response.
    pub fn then_calls(self, calls: &[(&str, Value)]) -> Self {
        let parts = calls
            .iter()
            .map(|(name, args)| Part::function_call(FunctionCall::new(*name, args.clone())));
        self.then(LlmResponse::new(Content::new(Role::Model, parts)))
    }

    /// Fails the next call with a model error saying `message`.
    pub fn then_fail(self, message: &str) -> Self {
        self.then_fail_with(ErrorKind::Model, message)
    }

    /// Fails the next call with an error of `kind` saying `message` (a context overflow, say).
    pub fn then_fail_with(self, kind: ErrorKind, message: &str) -> Self {
        self.script
            .lock()
            .push_back(Turn::Fail(kind, message.to_owned()));
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().clone()
    }

    /// The turns not used yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().len()
    }
}

impl Llm for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, request: LlmRequest, _mode: StreamingMode) -> LlmResponseStream {
        let call_number = {
            let mut requests = self.requests.lock();
            requests.push(request);
            requests.len()
        };
        match self.script.lock().pop_front() {
            Some(Turn::Respond(responses)) => {
                futures::stream::iter(responses.into_iter().map(Ok)).boxed()
            }
            Some(Turn::Fail(kind, message)) => {
                futures::stream::iter([Err(Error::new(kind, message))]).boxed()
            }
            None => futures::stream::iter([Err(Error::new(
                ErrorKind::Model,
                format!("the scripted model has no answer left for call {call_number}"),
            ))])
            .boxed(),
        }
    }
}
