//! Ending an invocation that was cancelled, so its session stays consistent: every call it left
//! without an answer is answered as cancelled, and a last event says the invocation was
//! cancelled, which ends it (a later request does not continue it).

use std::collections::BTreeMap;

use adk_core::{
    Content, Event, EventActions, FunctionResponse, InvocationId, Part, Result, Role, SessionId,
    SessionKey, USER_AUTHOR,
};
use serde_json::json;

use super::Runner;
use crate::cut_off::{CANCELLED_ERROR_CODE, has_ended, unanswered_calls};

impl Runner {
    /// Ends invocation `invocation_id` of session `session_id` of `user_id` as cancelled, and
    /// returns the events it stored: for each agent that made calls nothing answered, an event
    /// answering them with `{"error": "cancelled: ..."}` (which completes their entries in the
    /// effect journal), then a last event of the agent that spoke last, with
    /// [`errorCode`](adk_core::LlmResponse::error_code) `CANCELLED` and `endOfAgent` set. An
    /// invocation that already ended (answered, paused on nothing, or cancelled before) is left
    /// as it is, and the list is empty.
    ///
    /// The invocation must not be running: drop its stream first, and hold the session's lock
    /// (`adk_session::SessionLocks`) when other processes may run it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotFound`](adk_core::ErrorKind::NotFound) when the session or the invocation
    /// does not exist; the session service's errors.
    pub async fn cancel_invocation(
        &self,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
        invocation_id: &InvocationId,
    ) -> Result<Vec<Event>> {
        let key = SessionKey::new(self.inner.app_name.clone(), user_id, session_id);
        // A write of the cancelled run that was being committed when its stream was dropped (a
        // SQLite store commits waiting appends in groups) can land after the session was loaded
        // here; the ending then fails as stale, and is worked out again from a fresh load.
        let mut stale_attempts = 0;
        loop {
            match self.end_cancelled(&key, invocation_id).await {
                Err(error)
                    if error.kind() == adk_core::ErrorKind::StaleSession && stale_attempts < 2 =>
                {
                    stale_attempts += 1;
                }
                outcome => return outcome,
            }
        }
    }

    /// One attempt of [`cancel_invocation`](Self::cancel_invocation) from a fresh load.
    async fn end_cancelled(
        &self,
        key: &SessionKey,
        invocation_id: &InvocationId,
    ) -> Result<Vec<Event>> {
        let inner = &self.inner;
        let mut session = inner.load_session(key, false).await?;
        if !session
            .events
            .iter()
            .any(|event| &event.invocation_id == invocation_id)
        {
            return Err(adk_core::Error::new(
                adk_core::ErrorKind::NotFound,
                format!(
                    "session '{}' has no invocation '{invocation_id}' to cancel",
                    session.id
                ),
            ));
        }
        if has_ended(&session.events, invocation_id) {
            return Ok(Vec::new());
        }
        let ids = inner.services.ids.as_ref();
        let clock = inner.services.clock.as_ref();
        // One answering event per agent and branch, as the flow answers each agent's calls.
        let mut answers: BTreeMap<(String, Option<String>), Vec<Part>> = BTreeMap::new();
        for (event, call) in unanswered_calls(&session.events, invocation_id) {
            let mut response = FunctionResponse::new(
                call.name.clone(),
                json!({"error": "cancelled: the invocation was cancelled before this call was answered"}),
            );
            response.id = call.id.clone();
            answers
                .entry((event.author.clone(), event.branch.clone()))
                .or_default()
                .push(Part::function_response(response));
        }
        let last = session
            .events
            .iter()
            .rev()
            .find(|event| &event.invocation_id == invocation_id && event.author != USER_AUTHOR);
        let author = last.map_or_else(
            || inner.tree.root().name().to_owned(),
            |event| event.author.clone(),
        );
        let branch = last.and_then(|event| event.branch.clone());
        let node_info = last
            .map(|event| event.node_info.clone())
            .unwrap_or_default();

        let mut stored = Vec::new();
        for ((agent, branch), parts) in answers {
            let event = Event::with_ids_and_clock(invocation_id.clone(), agent, ids, clock)
                .with_content(Content::new(Role::User, parts))
                .with_branch(branch);
            stored.push(inner.sessions.append_event(&mut session, event).await?);
        }
        let mut actions = EventActions::default();
        actions.end_of_agent = Some(true);
        let mut end = Event::with_ids_and_clock(invocation_id.clone(), author, ids, clock)
            .with_actions(actions)
            .with_branch(branch);
        end.node_info = node_info;
        end.response.error_code = Some(CANCELLED_ERROR_CODE.to_owned());
        end.response.error_message = Some("the invocation was cancelled".to_owned());
        stored.push(inner.sessions.append_event(&mut session, end).await?);
        Ok(stored)
    }
}
