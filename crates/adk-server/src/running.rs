//! The runs this server is running, by session, and how a run learns that someone cancelled it:
//! at once when the cancel request reaches this server, or, when it reached another replica,
//! when the session store signals it (`SessionService::cancel_signals`: PostgreSQL's
//! `LISTEN`/`NOTIFY`), each signal checked against the store (`cancel_requested`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use adk_core::{Event, InvocationId, SessionKey, SessionService};
use futures::StreamExt as _;
use tokio_util::sync::CancellationToken;

/// When a run reads the store once whether its invocation was asked to be cancelled before the
/// run subscribed to the store's signals (it resumed an invocation someone cancelled while
/// nobody ran it). A run that ends sooner reads nothing; later requests come as signals.
const FIRST_CHECK: Duration = Duration::from_secs(1);

/// How often a run asks the store, when the store cannot signal cancel requests (a session
/// service of the application's own that keeps the default `cancel_signals`) or its signals
/// failed.
const STORE_POLL: Duration = Duration::from_secs(1);

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
    /// replica that the session store signals (or, for a store that cannot signal, that it
    /// holds when asked every [`STORE_POLL`]). A store that cannot be read is logged and asked
    /// again; the run goes on meanwhile.
    pub(crate) async fn cancelled(&self) {
        let mut signals = match self.sessions.cancel_signals(&self.key).await {
            Ok(signals) => signals,
            Err(error) => {
                tracing::warn!(%error, "cannot hear cancel requests from the store; asking it instead");
                None
            }
        };
        let mut checked_once = false;
        loop {
            let (poll, timed) = match signals {
                Some(_) => (FIRST_CHECK, !checked_once),
                None => (STORE_POLL, true),
            };
            let signalled = async {
                match signals.as_mut() {
                    Some(signals) => signals.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = self.token.cancelled() => return,
                signal = signalled => {
                    if signal.is_none() {
                        // The store stopped signalling (its pool closed): ask it from now on.
                        signals = None;
                    }
                }
                () = tokio::time::sleep(poll), if timed => {}
            }
            // Whatever woke the run, the store is read now: a request made before the run
            // subscribed is found by this read, so no timer is needed after it.
            checked_once = true;
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

#[cfg(test)]
mod tests {
    use adk_core::{CreateSessionRequest, GetSessionRequest, JournalEntry, Session, ToolIntent};
    use adk_session::InMemorySessionService;

    use super::*;

    /// How long a test waits for what should happen at once, before failing.
    const GUARD: Duration = Duration::from_secs(30);

    /// A store of the application's own that keeps a journal but cannot signal: the default
    /// `cancel_signals`.
    struct Unsignalled(InMemorySessionService);

    #[async_trait::async_trait]
    impl SessionService for Unsignalled {
        async fn create_session(&self, request: CreateSessionRequest) -> adk_core::Result<Session> {
            self.0.create_session(request).await
        }

        async fn get_session(
            &self,
            request: GetSessionRequest,
        ) -> adk_core::Result<Option<Session>> {
            self.0.get_session(request).await
        }

        async fn list_sessions(&self, app: &str, user: &str) -> adk_core::Result<Vec<Session>> {
            self.0.list_sessions(app, user).await
        }

        async fn delete_session(&self, key: &SessionKey) -> adk_core::Result<()> {
            self.0.delete_session(key).await
        }

        async fn persist_event(
            &self,
            key: &SessionKey,
            revision: u64,
            event: &Event,
        ) -> adk_core::Result<u64> {
            self.0.persist_event(key, revision, event).await
        }

        async fn record_tool_intent(
            &self,
            key: &SessionKey,
            intent: &ToolIntent,
        ) -> adk_core::Result<()> {
            self.0.record_tool_intent(key, intent).await
        }

        async fn tool_journal(
            &self,
            key: &SessionKey,
            invocation_id: &InvocationId,
        ) -> adk_core::Result<Option<Vec<JournalEntry>>> {
            self.0.tool_journal(key, invocation_id).await
        }
    }

    /// A new session of `sessions`.
    async fn new_session(sessions: &dyn SessionService) -> SessionKey {
        sessions
            .create_session(CreateSessionRequest::new("app", "ada"))
            .await
            .unwrap()
            .key()
    }

    /// A run of invocation `e-1` registered in a session of `sessions`, cancelled through the
    /// store as another replica would, not through this server.
    async fn cancelled_through_the_store(sessions: Arc<dyn SessionService>) {
        let key = new_session(sessions.as_ref()).await;
        let invocation = InvocationId::from("e-1");
        let runs = Arc::new(RunningRuns::default());
        let guard = runs.register(key.clone(), Some(invocation.clone()), sessions.clone());
        let watch = guard.watch();
        let cancelled = tokio::spawn(async move { watch.cancelled().await });
        sessions.request_cancel(&key, &invocation).await.unwrap();
        tokio::time::timeout(GUARD, cancelled)
            .await
            .expect("the run hears that it was cancelled")
            .unwrap();
    }

    #[tokio::test]
    async fn a_run_hears_a_cancel_request_the_store_signals() {
        cancelled_through_the_store(Arc::new(InMemorySessionService::new())).await;
    }

    #[tokio::test]
    async fn a_run_asks_a_store_that_cannot_signal() {
        cancelled_through_the_store(Arc::new(Unsignalled(InMemorySessionService::new()))).await;
    }

    #[tokio::test]
    async fn a_request_kept_before_the_run_began_is_read() {
        let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
        let key = new_session(sessions.as_ref()).await;
        let invocation = InvocationId::from("e-1");
        sessions.request_cancel(&key, &invocation).await.unwrap();
        let runs = Arc::new(RunningRuns::default());
        let guard = runs.register(key, Some(invocation), sessions);
        tokio::time::timeout(GUARD, guard.watch().cancelled())
            .await
            .expect("the run resuming a cancelled invocation stops");
    }

    #[tokio::test]
    async fn a_run_cancelled_here_stops_at_once() {
        let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
        let key = SessionKey::new("app", "ada", "s");
        let invocation = InvocationId::from("e-1");
        let runs = Arc::new(RunningRuns::default());
        let guard = runs.register(key.clone(), Some(invocation.clone()), sessions);
        assert!(!runs.cancel_here(&key, &InvocationId::from("e-0")));
        assert!(runs.cancel_here(&key, &invocation));
        tokio::time::timeout(GUARD, guard.watch().cancelled())
            .await
            .expect("cancelled");
        drop(guard);
        assert!(!runs.cancel_here(&key, &invocation), "unregistered");
    }
}
