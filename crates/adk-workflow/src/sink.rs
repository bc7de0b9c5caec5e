//! Where the nodes of one run send their events, and the stream that hands them to the runner.
//!
//! Every node of a run, however deeply nested, sends its events into one queue. A node that sends
//! a complete event waits until the runner took it and asked for the next one: by then the runner
//! stored the event and applied it to the session, so what the node does next sees it (an agent
//! reading its history, a later node reading state). Streamed chunks do not wait. The stream
//! drives the run itself when it is polled, so dropping it cancels every node.

use std::pin::Pin;
use std::task::{Context, Poll};

use adk_core::{Event, Result};
use futures::channel::{mpsc, oneshot};
use futures::future::BoxFuture;
use futures::{FutureExt as _, Stream, StreamExt as _};

/// One queued event, with the signal that releases its sender.
type Queued = (Event, Option<oneshot::Sender<()>>);

/// The sending end nodes hold.
#[derive(Clone)]
pub(crate) struct EventSink {
    sender: mpsc::UnboundedSender<Queued>,
}

impl EventSink {
    /// Whether nobody listens any more.
    pub(crate) fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Sends `event`; for a complete event, waits until the runner took it. Returns `false` when
    /// nobody listens any more (the run was dropped).
    pub(crate) async fn send(&self, event: Event) -> bool {
        if event.is_partial() {
            return self.sender.unbounded_send((event, None)).is_ok();
        }
        let (taken, wait) = oneshot::channel();
        if self.sender.unbounded_send((event, Some(taken))).is_err() {
            return false;
        }
        wait.await.is_ok()
    }
}

/// The stream of a run's events: what the nodes sent, in order, then the run's error if it failed.
pub(crate) struct RunStream {
    driver: Option<BoxFuture<'static, Result<()>>>,
    queue: mpsc::UnboundedReceiver<Queued>,
    /// The sender of the event yielded last, released when the stream is polled again.
    taken: Option<oneshot::Sender<()>>,
    failure: Option<adk_core::Error>,
}

impl RunStream {
    /// A sink and the stream that runs `drive` (made with the sink) and yields what it sends.
    pub(crate) fn new(drive: impl FnOnce(EventSink) -> BoxFuture<'static, Result<()>>) -> Self {
        let (sender, queue) = mpsc::unbounded();
        let driver = drive(EventSink { sender });
        Self {
            driver: Some(driver),
            queue,
            taken: None,
            failure: None,
        }
    }
}

impl Stream for RunStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(taken) = this.taken.take() {
            // Asked for the next event: the one before it was handled.
            let _ = taken.send(());
        }
        loop {
            if let Poll::Ready(Some((event, taken))) = this.queue.poll_next_unpin(cx) {
                this.taken = taken;
                return Poll::Ready(Some(Ok(event)));
            }
            let Some(driver) = this.driver.as_mut() else {
                return Poll::Ready(this.failure.take().map(Err));
            };
            match driver.poll_unpin(cx) {
                Poll::Ready(result) => {
                    this.driver = None;
                    this.failure = result.err();
                    // What the run sent before it ended is still to be yielded.
                    this.queue.close();
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
