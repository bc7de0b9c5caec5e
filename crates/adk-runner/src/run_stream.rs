//! [`RunStream`]: the events of one run, with the helpers every caller writes: the final answer's
//! text, or every event.

use std::pin::Pin;
use std::task::{Context, Poll};

use adk_core::{Error, ErrorKind, Event, InvocationId, Result};
use futures::{Stream, StreamExt as _, TryStreamExt as _};

/// The events of a run, as they come (partial ones too when streaming); dropping it cancels the
/// run.
///
/// It is a [`Stream`] of `Result<Event>`; [`final_text`](Self::final_text) and
/// [`collect_events`](Self::collect_events) run it to the end.
#[must_use = "a run does nothing until its stream is polled"]
pub struct RunStream {
    events: Pin<Box<dyn Stream<Item = Result<Event>> + Send + 'static>>,
    invocation_id: Option<InvocationId>,
}

impl RunStream {
    pub(crate) fn new(events: impl Stream<Item = Result<Event>> + Send + 'static) -> Self {
        Self {
            events: Box::pin(events),
            invocation_id: None,
        }
    }

    /// This stream, running invocation `invocation_id` first.
    pub(crate) fn with_invocation_id(mut self, invocation_id: InvocationId) -> Self {
        self.invocation_id = Some(invocation_id);
        self
    }

    /// The invocation the run runs first, known before its first event: a server uses it to
    /// cancel the run by id. `None` for a run with nothing to run, or one that only replays
    /// stored events. A run that first resumes an invocation cut off by a crash
    /// ([`RunnerBuilder::resume_interrupted`](crate::RunnerBuilder::resume_interrupted)) names
    /// that one; its events name the next.
    pub fn invocation_id(&self) -> Option<&InvocationId> {
        self.invocation_id.as_ref()
    }

    /// A run that only replays `events` that were stored before (a retried request answered
    /// with what its first attempt stored, say): nothing runs.
    ///
    /// ```
    /// use adk_core::{Content, Event, InvocationId};
    /// use adk_runner::RunStream;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> adk_core::Result<()> {
    /// let answer = Event::new(InvocationId::from("e-1"), "agent").with_content(Content::model("Hi"));
    /// assert_eq!(RunStream::replay([answer]).final_text().await?, "Hi");
    /// # Ok(()) }
    /// ```
    pub fn replay(events: impl IntoIterator<Item = Event>) -> Self {
        let events: Vec<Event> = events.into_iter().collect();
        Self::new(futures::stream::iter(events.into_iter().map(Ok)))
    }

    /// Runs to the end and returns the text of the last final response (the answer the user
    /// reads), whichever agent gave it.
    ///
    /// # Errors
    ///
    /// The error that ended the run; [`ErrorKind::Agent`] when the run ended without a text
    /// answer (it paused for a confirmation, say, or its last agent answered with data only).
    pub async fn final_text(mut self) -> Result<String> {
        let mut answer = None;
        while let Some(event) = self.events.next().await {
            let event = event?;
            if event.is_partial() || !event.is_final_response() {
                continue;
            }
            if let Some(text) = event.text().filter(|text| !text.is_empty()) {
                answer = Some(text);
            }
        }
        answer.ok_or_else(|| {
            Error::new(
                ErrorKind::Agent,
                "the run ended without a text answer: read its events (collect_events) to see \
                 what it did instead, such as a call that waits for the user",
            )
        })
    }

    /// Runs to the end and returns every event, partial ones included.
    ///
    /// # Errors
    ///
    /// The error that ended the run; the events before it are then stored but not returned.
    pub async fn collect_events(self) -> Result<Vec<Event>> {
        self.events.try_collect().await
    }
}

impl Stream for RunStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.events.size_hint()
    }
}

impl std::fmt::Debug for RunStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream").finish_non_exhaustive()
    }
}
