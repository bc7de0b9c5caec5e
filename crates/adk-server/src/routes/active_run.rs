//! [`ActiveRun`]: a run of `/run` or `/run_sse` with what it holds (its session's lock and its
//! place among the runs, its registration for cancel requests), and how it ends when it does
//! not end by itself.
//!
//! A run cancelled by request, or whose client went away, is ended as cancelled
//! (`Runner::cancel_invocation`) before its session's lock is let go: every call it left
//! unanswered is answered as cancelled and a last event says so, so the session is consistent
//! and the next request does not continue it. A run stopped by the server's shutdown is left as
//! a crash leaves it, for the next request to continue where the runner resumes cut-off
//! invocations.

use std::sync::Arc;

use adk_core::{Event, InvocationId, Result, SessionKey};
use adk_runner::{RunStream, Runner};
use futures::StreamExt as _;

use crate::running::{RunWatch, WatchGuard};
use crate::state::RunAdmission;

/// A run going on, with what it holds until it ends.
pub(super) struct ActiveRun {
    /// `None` once dropped: the stream goes before the admission, so the next run of the session
    /// never overlaps this one.
    events: Option<RunStream>,
    /// Set while the run may have to be ended as cancelled (a replay has nothing to end).
    closing: Option<Closing>,
    watch: Option<WatchGuard>,
    admission: Option<RunAdmission>,
}

/// What ending the run as cancelled needs.
struct Closing {
    runner: Runner,
    key: SessionKey,
}

impl ActiveRun {
    /// A run of `runner` in session `key`, registered with `watch` for cancel requests.
    pub(super) fn new(
        events: RunStream,
        admission: RunAdmission,
        runner: &Runner,
        key: SessionKey,
        watch: WatchGuard,
    ) -> Self {
        Self {
            events: Some(events),
            closing: Some(Closing {
                runner: runner.clone(),
                key,
            }),
            watch: Some(watch),
            admission: Some(admission),
        }
    }

    /// A run that only replays stored events: nothing to cancel or end.
    pub(super) fn replay(events: RunStream, admission: RunAdmission) -> Self {
        Self {
            events: Some(events),
            closing: None,
            watch: None,
            admission: Some(admission),
        }
    }

    /// The next event; the end of the run (or its failure) disarms the ending as cancelled.
    pub(super) async fn next(&mut self) -> Option<Result<Event>> {
        let next = self.events.as_mut()?.next().await;
        match &next {
            Some(Ok(event)) => {
                if let Some(watch) = &self.watch {
                    watch.watch().saw(event);
                }
            }
            Some(Err(_)) | None => self.closing = None,
        }
        next
    }

    /// Resolves when someone cancelled the run; never for a replay.
    pub(super) fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        let watch: Option<Arc<RunWatch>> = self.watch.as_ref().map(WatchGuard::watch);
        async move {
            match watch {
                Some(watch) => watch.cancelled().await,
                None => std::future::pending().await,
            }
        }
    }

    /// Leaves the run as a crash would (the server shuts down): it is dropped, not ended.
    pub(super) fn abandon(mut self) {
        self.closing = None;
    }

    /// Stops the run and ends its invocation as cancelled; returns the events that ending stored
    /// (none when the run had ended already or its invocation is not known).
    pub(super) async fn end_cancelled(mut self) -> Vec<Event> {
        match self.stop() {
            Some((closing, invocation)) => end(&closing, &invocation).await,
            None => Vec::new(),
        }
    }

    /// Drops the run's stream; what ending its invocation as cancelled needs, when it must be.
    fn stop(&mut self) -> Option<(Closing, InvocationId)> {
        self.events = None;
        let invocation = self.watch.as_ref()?.watch().current()?;
        Some((self.closing.take()?, invocation))
    }
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        let Some((closing, invocation)) = self.stop() else {
            return;
        };
        // The client went away mid-run: the run is ended as cancelled in a task of its own, which
        // keeps the session's lock until the session is consistent.
        let admission = self.admission.take();
        let watch = self.watch.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                end(&closing, &invocation).await;
                drop(watch);
                drop(admission);
            });
        }
    }
}

/// Ends `invocation` as cancelled; a failure is logged, as the run is gone either way.
async fn end(closing: &Closing, invocation: &InvocationId) -> Vec<Event> {
    let key = &closing.key;
    match closing
        .runner
        .cancel_invocation(key.user_id.clone(), key.session_id.clone(), invocation)
        .await
    {
        Ok(events) => events,
        Err(error) => {
            tracing::warn!(%error, %invocation, "cannot end a cancelled invocation in its session");
            Vec::new()
        }
    }
}
