//! [`EndlessModel`]: an [`Llm`] that never stops answering, for tests of what happens to a run
//! nobody reads: a client that stops reading, a cancellation that must not wait forever.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Content, FunctionCall, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Role,
};
use futures::StreamExt as _;
use serde_json::json;
use tokio::sync::Notify;

/// What each call answers.
#[derive(Debug, Clone)]
enum Answer {
    /// A function call to this tool, with a numbered argument and this many bytes of padding.
    Call { tool: String, padding: usize },
    /// Partial text chunks of this many bytes, forever.
    Text { chunk: usize },
}

/// A model whose every call answers, and whose text answers never end; it counts its calls and
/// tells when an answer's stream was dropped before its end (the run was cancelled).
///
/// ```
/// use adk_test::EndlessModel;
///
/// let model = EndlessModel::calling("fetch", 1024);
/// assert_eq!(model.calls(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct EndlessModel {
    answer: Answer,
    calls: Arc<AtomicUsize>,
    dropped: Arc<Notify>,
}

impl EndlessModel {
    /// Every call answers with a call of `tool` (`{"n": <call number>, "padding": "xxx..."}`,
    /// `padding` bytes of it), so that an agent with the tool loops for as long as it runs.
    pub fn calling(tool: &str, padding: usize) -> Self {
        Self::new(Answer::Call {
            tool: tool.to_owned(),
            padding,
        })
    }

    /// Every call streams partial text chunks of `chunk` bytes and never ends.
    pub fn streaming_text(chunk: usize) -> Self {
        Self::new(Answer::Text { chunk })
    }

    fn new(answer: Answer) -> Self {
        Self {
            answer,
            calls: Arc::default(),
            dropped: Arc::default(),
        }
    }

    /// How many calls were made.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Acquire)
    }

    /// Completes once an endless text answer was dropped (its run was cancelled).
    pub async fn answer_dropped(&self) {
        self.dropped.notified().await;
    }
}

/// Tells the model when the answer it belongs to is dropped.
struct DropSignal(Arc<Notify>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

impl Llm for EndlessModel {
    fn name(&self) -> &str {
        "endless"
    }

    fn generate(&self, _request: LlmRequest, _mode: adk_core::StreamingMode) -> LlmResponseStream {
        let number = self.calls.fetch_add(1, Ordering::AcqRel) + 1;
        match &self.answer {
            Answer::Call { tool, padding } => {
                let call = FunctionCall::new(
                    tool.clone(),
                    json!({"n": number, "padding": "x".repeat(*padding)}),
                );
                let response =
                    LlmResponse::new(Content::new(Role::Model, [Part::function_call(call)]));
                // Yield to the scheduler first, as a network call would, so that an endless run
                // does not keep a worker from everything else.
                futures::stream::once(async move {
                    tokio::task::yield_now().await;
                    Ok(response)
                })
                .boxed()
            }
            Answer::Text { chunk } => {
                let text = "y".repeat(*chunk);
                let signal = DropSignal(self.dropped.clone());
                futures::stream::unfold((signal, text), |(signal, text)| async move {
                    // Yield to the scheduler between chunks, as a network stream would.
                    tokio::task::yield_now().await;
                    let mut response = LlmResponse::new(Content::model(text.clone()));
                    response.partial = Some(true);
                    Some((Ok(response), (signal, text)))
                })
                .boxed()
            }
        }
    }
}
