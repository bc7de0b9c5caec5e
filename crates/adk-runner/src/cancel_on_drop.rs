//! The stream a run hands its caller: the invocation's events, cancelling the invocation's work
//! when it is dropped before the run ends.
//!
//! A hand-written stream rather than an `async` block: it only passes events on, and a block that
//! yields would keep room for an event in its state for as long as the run waits on the model.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use adk_core::{Event, Result};
use futures::{Stream, StreamExt as _};
use tokio_util::sync::DropGuard;

/// The invocation's events, as the runner traces them.
type Events = Pin<Box<dyn Stream<Item = Result<Event>> + Send + 'static>>;

/// Yields `events` until they end or fail. Dropping it before then, or a failure, drops the guard,
/// which cancels the invocation's work; a run that completes, paused or not, disarms it, as work
/// a long-running tool started may go on after the invocation paused.
pub(crate) struct CancelOnDrop {
    /// `None` once the run ended.
    running: Option<(Events, DropGuard)>,
}

impl CancelOnDrop {
    pub(crate) fn new(events: Events, guard: DropGuard) -> Self {
        Self {
            running: Some((events, guard)),
        }
    }
}

impl Stream for CancelOnDrop {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some((events, _)) = &mut self.running else {
            return Poll::Ready(None);
        };
        let item = ready!(events.poll_next_unpin(cx));
        match &item {
            Some(Ok(_)) => {}
            // The events go first, then the guard cancels what they left running.
            Some(Err(_)) => self.running = None,
            None => {
                if let Some((events, guard)) = self.running.take() {
                    drop(events);
                    guard.disarm();
                }
            }
        }
        Poll::Ready(item)
    }
}

#[cfg(test)]
mod tests {
    use adk_core::{Error, ErrorKind, InvocationId};
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn event(author: &str) -> Result<Event> {
        Ok(Event::new(InvocationId::from("i-1"), author))
    }

    /// A guarded stream of `items`, and the token its guard cancels.
    fn guarded(items: Vec<Result<Event>>) -> (CancelOnDrop, CancellationToken) {
        let token = CancellationToken::new();
        let events: Events = Box::pin(futures::stream::iter(items));
        (CancelOnDrop::new(events, token.clone().drop_guard()), token)
    }

    #[tokio::test]
    async fn a_run_that_ends_is_not_cancelled_even_when_dropped_afterwards() {
        let (mut events, token) = guarded(vec![event("a"), event("b")]);
        let mut authors = Vec::new();
        while let Some(item) = events.next().await {
            authors.push(item.expect("an event").author);
        }
        assert_eq!(authors, ["a", "b"]);
        assert!(events.next().await.is_none(), "the stream stays ended");
        drop(events);
        assert!(!token.is_cancelled());
    }

    #[tokio::test]
    async fn a_failure_ends_the_stream_and_cancels_the_run() {
        let failure = Err(Error::new(ErrorKind::Model, "the model went away"));
        let (mut events, token) = guarded(vec![event("a"), failure, event("never")]);
        assert_eq!(
            events
                .next()
                .await
                .expect("an item")
                .expect("an event")
                .author,
            "a"
        );
        assert!(!token.is_cancelled());
        let error = events
            .next()
            .await
            .expect("an item")
            .expect_err("the failure");
        assert_eq!(error.kind(), ErrorKind::Model);
        assert!(
            token.is_cancelled(),
            "the failure cancels the invocation's work"
        );
        assert!(events.next().await.is_none(), "nothing follows the failure");
    }

    #[tokio::test]
    async fn dropping_the_stream_before_the_end_cancels_the_run() {
        let (mut events, token) = guarded(vec![event("a"), event("b")]);
        events.next().await.expect("an item").expect("an event");
        drop(events);
        assert!(token.is_cancelled());
    }
}
