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

use crate::runner::RunStream;

/// Yields `events` until they end or fail. Dropping it before then, or a failure, drops the guard,
/// which cancels the invocation's work; a run that completes, paused or not, disarms it, as work
/// a long-running tool started may go on after the invocation paused.
pub(crate) struct CancelOnDrop {
    /// `None` once the run ended.
    running: Option<(RunStream, DropGuard)>,
}

impl CancelOnDrop {
    pub(crate) fn new(events: RunStream, guard: DropGuard) -> Self {
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
