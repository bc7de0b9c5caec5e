//! [`InMemorySessionService`]: sessions in a map behind a mutex.

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{
    CancelSignals, CreateSessionRequest, Event, FunctionCallId, GetSessionRequest, IdGen,
    InvocationId, JournalEntry, ScopedState, Session, SessionKey, ToolIntent, UuidIdGen,
};
use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::cancel_signals::CancelBoard;
use crate::error::{Error, Result};
use crate::scoped::{apply_delta, completed_calls, merged_state, now, split_delta, stored_event};

/// Sessions kept in memory, lost when the process ends. Follows the same rules as the database
/// backends (scopes, revisions, stale writes, the effect journal), so it is a faithful stand-in
/// in tests.
///
/// Its effect journal is best effort: it is kept and completed under the same lock as the
/// events, but it ends with the process, so a call interrupted by a crash cannot be found
/// afterwards; only an invocation resumed in the same process benefits from it.
#[derive(Debug, Default)]
pub struct InMemorySessionService {
    store: Mutex<Store>,
    /// The runs waiting to hear of cancel requests.
    cancels: Arc<CancelBoard>,
}

#[derive(Debug, Default)]
struct Store {
    app_states: HashMap<String, Map<String, Value>>,
    user_states: HashMap<(String, String), Map<String, Value>>,
    sessions: HashMap<SessionKey, StoredSession>,
    /// The last revision of each deleted session: one re-created with the same id starts after
    /// it, so that a writer still holding a revision of the deleted one can never match.
    deleted: HashMap<SessionKey, u64>,
}

#[derive(Debug)]
struct StoredSession {
    state: Map<String, Value>,
    events: Vec<Event>,
    revision: u64,
    last_update_time: f64,
    /// The effect journal of the session's calls, in the order their intents were recorded.
    journal: Vec<JournalEntry>,
}

impl Store {
    fn merged_state(&self, key: &SessionKey, session: &StoredSession) -> Map<String, Value> {
        let app = self
            .app_states
            .get(&key.app_name)
            .cloned()
            .unwrap_or_default();
        let user = self
            .user_states
            .get(&(key.app_name.clone(), key.user_id.clone()))
            .cloned()
            .unwrap_or_default();
        merged_state(app, user, session.state.clone())
    }

    fn apply_shared(&mut self, key: &SessionKey, scoped: &mut ScopedState) {
        if !scoped.app.is_empty() {
            apply_delta(
                self.app_states.entry(key.app_name.clone()).or_default(),
                std::mem::take(&mut scoped.app),
            );
        }
        if !scoped.user.is_empty() {
            apply_delta(
                self.user_states
                    .entry((key.app_name.clone(), key.user_id.clone()))
                    .or_default(),
                std::mem::take(&mut scoped.user),
            );
        }
    }

    fn to_session(&self, key: &SessionKey, stored: &StoredSession, events: Vec<Event>) -> Session {
        let mut session = Session::new(key.clone());
        session.state = self.merged_state(key, stored);
        session.events = events;
        session.last_update_time = stored.last_update_time;
        session.revision = stored.revision;
        session
    }
}

impl InMemorySessionService {
    /// An empty service.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The events of `events` that `request` asks for, in order.
fn select_events(events: &[Event], request: &GetSessionRequest) -> Vec<Event> {
    let after = request.after_timestamp.unwrap_or(f64::NEG_INFINITY);
    let selected: Vec<&Event> = events
        .iter()
        .filter(|event| event.timestamp >= after)
        .collect();
    let skip = request
        .recent_limit()
        .map_or(0, |count| selected.len().saturating_sub(count));
    selected.into_iter().skip(skip).cloned().collect()
}

// The methods are `async` to fit the trait boundary (`boundary::session_service!`); none awaits.
impl InMemorySessionService {
    /// Creates a session, applying its initial state to every scope.
    async fn create(&self, request: CreateSessionRequest) -> Result<Session> {
        let session_id = request.session_id.unwrap_or_else(|| UuidIdGen.session_id());
        let key = SessionKey::new(request.app_name, request.user_id, session_id);
        let mut store = self.store.lock();
        if store.sessions.contains_key(&key) {
            return Err(Error::already_exists(&key));
        }
        let mut scoped = ScopedState::split(&request.state);
        store.apply_shared(&key, &mut scoped);
        let stored = StoredSession {
            state: scoped.session,
            events: Vec::new(),
            revision: store.deleted.get(&key).map_or(0, |last| last + 1),
            last_update_time: now(),
            journal: Vec::new(),
        };
        let session = store.to_session(&key, &stored, Vec::new());
        store.sessions.insert(key, stored);
        Ok(session)
    }

    /// A copy of a session with the events `request` selects.
    async fn get(&self, request: GetSessionRequest) -> Result<Option<Session>> {
        let store = self.store.lock();
        Ok(store.sessions.get(&request.key).map(|stored| {
            let events = select_events(&stored.events, &request);
            store.to_session(&request.key, stored, events)
        }))
    }

    /// The sessions of a user in an app, without their events.
    async fn list(&self, app_name: &str, user_id: &str) -> Result<Vec<Session>> {
        let store = self.store.lock();
        let mut sessions: Vec<Session> = store
            .sessions
            .iter()
            .filter(|(key, _)| key.app_name == app_name && key.user_id == user_id)
            .map(|(key, stored)| store.to_session(key, stored, Vec::new()))
            .collect();
        sessions.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(sessions)
    }

    /// Deletes a session, remembering its last revision.
    async fn delete(&self, key: &SessionKey) -> Result<()> {
        let mut store = self.store.lock();
        if let Some(gone) = store.sessions.remove(key) {
            let last = store.deleted.entry(key.clone()).or_default();
            *last = (*last).max(gone.revision);
        }
        Ok(())
    }

    /// Appends `event` if the session is still at `revision`; returns the new revision.
    async fn persist(&self, key: &SessionKey, revision: u64, event: &Event) -> Result<u64> {
        let stored_event = stored_event(event).into_owned();
        let mut scoped = split_delta(&stored_event);
        let mut store = self.store.lock();
        let Some(stored) = store.sessions.get(key) else {
            return Err(Error::not_found(key));
        };
        if stored.revision != revision {
            return Err(Error::stale(key, revision, stored.revision));
        }
        store.apply_shared(key, &mut scoped);
        let stored = store
            .sessions
            .get_mut(key)
            .expect("the session was found under the same lock");
        apply_delta(&mut stored.state, scoped.session);
        stored.last_update_time = stored.last_update_time.max(stored_event.timestamp);
        stored.revision += 1;
        complete_calls(&mut stored.journal, &stored_event);
        stored.events.push(stored_event);
        Ok(stored.revision)
    }

    /// Records the intent to run a call, or one more attempt of a call recorded before.
    async fn record_intent(&self, key: &SessionKey, intent: &ToolIntent) -> Result<()> {
        let mut store = self.store.lock();
        let Some(stored) = store.sessions.get_mut(key) else {
            return Err(Error::not_found(key));
        };
        match stored
            .journal
            .iter_mut()
            .find(|entry| entry.intent.function_call_id == intent.function_call_id)
        {
            Some(entry) => entry.attempts += 1,
            None => stored
                .journal
                .push(JournalEntry::new(intent.clone(), 1, None)),
        }
        Ok(())
    }

    /// Keeps a request to cancel an invocation in its journal and tells the runs listening.
    async fn request_cancel(&self, key: &SessionKey, invocation_id: &InvocationId) -> Result<()> {
        self.record_intent(key, &adk_core::cancel_request_intent(invocation_id))
            .await?;
        self.cancels.announce(key);
        Ok(())
    }

    /// The cancel requests of a session from now on.
    async fn cancel_signals(&self, key: &SessionKey) -> Result<CancelSignals> {
        Ok(self.cancels.subscribe(key))
    }

    /// The journal of one invocation of a session (empty for a session that does not exist).
    async fn journal(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<Vec<JournalEntry>> {
        let store = self.store.lock();
        Ok(store.sessions.get(key).map_or_else(Vec::new, |stored| {
            stored
                .journal
                .iter()
                .filter(|entry| &entry.intent.invocation_id == invocation_id)
                .cloned()
                .collect()
        }))
    }
}

/// Marks complete the journal's calls whose results `event` holds.
fn complete_calls(journal: &mut [JournalEntry], event: &Event) {
    if journal.is_empty() {
        return;
    }
    let answered: Vec<&FunctionCallId> = completed_calls(event).collect();
    for entry in journal.iter_mut().filter(|entry| !entry.is_complete()) {
        if answered.contains(&&entry.intent.function_call_id) {
            entry.result_event_id = Some(event.id.clone());
        }
    }
}

crate::boundary::session_service!(InMemorySessionService);
