//! The runs this server is running, by session, and how a run learns that someone cancelled it:
//! at once when the cancel request reaches this server, or from the session store when it
//! reached another replica (`SessionService::cancel_requested`, polled while the run goes on).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use adk_core::{Event, InvocationId, SessionKey, SessionService};
use tokio_util::sync::CancellationToken;

/// How often a run asks the session store whether another replica asked to cancel it.
const STORE_POLL: Duration = Duration::from_millis(250);

/// The runs going on in this server, one per session (a session's lock admits one at a time).
#[derive(Default)]
pub(crate) struct RunningRuns {
    runs: Mutex<HashMap<SessionKey, Arc<RunWatch>>>,
}

impl RunningRuns {
    /// Registers the run of session `key` that runs `invocation` first; it is unregistered when
    /// the returned guard is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        key: SessionKey,
        invocation: Option<InvocationId>,
        sessions: Arc<dyn SessionService>,
    ) -> WatchGuard {
        let watch = Arc::new(RunWatch {
            key: key.clone(),
            token: CancellationToken::new(),
            current: Mutex::new(invocation),
            sessions,
        });
        self.lock().insert(key, watch.clone());
        WatchGuard {
            runs: self.clone(),
            watch,
        }
    }

    /// Cancels the run of session `key` here when it is running `invocation`; `false` when no
    /// run of this server runs it.
    pub(crate) fn cancel_here(&self, key: &SessionKey, invocation: &InvocationId) -> bool {
        let runs = self.lock();
        let Some(watch) = runs.get(key) else {
            return false;
        };
        if watch.current().as_ref() != Some(invocation) {
            return false;
        }
        watch.token.cancel();
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionKey, Arc<RunWatch>>> {
        // The map stays whole whatever panicked while it was held: every change is one call.
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a run watches to learn it was cancelled.
pub(crate) struct RunWatch {
    key: SessionKey,
    token: CancellationToken,
    /// The invocation the run is in: the one it started with, then that of its latest event.
    current: Mutex<Option<InvocationId>>,
    sessions: Arc<dyn SessionService>,
}

impl RunWatch {
    /// The invocation the run is in, when known.
    pub(crate) fn current(&self) -> Option<InvocationId> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Follows the run into the invocation of `event` (a run that first resumed an invocation
    /// cut off by a crash goes on with the new message's).
    pub(crate) fn saw(&self, event: &Event) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.as_ref() != Some(&event.invocation_id) {
            *current = Some(event.invocation_id.clone());
        }
    }

    /// Resolves once the run was cancelled: by a request to this server, or by one to another
    /// replica that the session store holds. A store that cannot be read is logged and asked
    /// again; the run goes on meanwhile.
    pub(crate) async fn cancelled(&self) {
        loop {
            tokio::select! {
                () = self.token.cancelled() => return,
                () = tokio::time::sleep(STORE_POLL) => {}
            }
            let Some(invocation) = self.current() else {
                continue;
            };
            match self.sessions.cancel_requested(&self.key, &invocation).await {
                Ok(true) => return,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, "cannot read whether a run was cancelled; asking again");
                }
            }
        }
    }
}

/// A run's registration; dropping it unregisters the run.
pub(crate) struct WatchGuard {
    runs: Arc<RunningRuns>,
    watch: Arc<RunWatch>,
}

impl WatchGuard {
    /// The run's watch, to await beside its events.
    pub(crate) fn watch(&self) -> Arc<RunWatch> {
        self.watch.clone()
    }
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let mut runs = self.runs.lock();
        // Only this run's own entry: a later run of the session may have taken the place.
        if runs
            .get(&self.watch.key)
            .is_some_and(|watch| Arc::ptr_eq(watch, &self.watch))
        {
            runs.remove(&self.watch.key);
        }
    }
}
