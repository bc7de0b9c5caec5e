//! [`Session`]: one conversation of a user with an app, its state and its events.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Event, SessionId};

/// One conversation: who it belongs to, its state, and its events in order.
///
/// `state` shows every scope at once, with prefixed keys: the app's `app:` keys, the user's `user:`
/// keys, this session's plain keys, and during an invocation its `temp:` keys.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The session's id, unique within its app and user.
    pub id: SessionId,
    /// The app the session belongs to.
    #[serde(alias = "app_name")]
    pub app_name: String,
    /// The user the session belongs to.
    #[serde(alias = "user_id")]
    pub user_id: String,
    /// The state, all scopes merged.
    #[serde(default)]
    pub state: Map<String, Value>,
    /// The events, oldest first (possibly only the most recent ones, when loaded so).
    #[serde(default)]
    pub events: Vec<Event>,
    /// When the session last changed, in seconds since the Unix epoch.
    #[serde(default, alias = "last_update_time")]
    pub last_update_time: f64,
    /// How many times the session was written in storage when this copy was loaded or last
    /// appended to. Session services use it to refuse appends to a stale copy; it is not part of
    /// the JSON.
    #[serde(skip)]
    pub revision: u64,
}

impl Session {
    /// An empty session with this identity.
    pub fn new(key: SessionKey) -> Self {
        Self {
            id: key.session_id,
            app_name: key.app_name,
            user_id: key.user_id,
            ..Self::default()
        }
    }

    /// The identity of the session.
    pub fn key(&self) -> SessionKey {
        SessionKey {
            app_name: self.app_name.clone(),
            user_id: self.user_id.clone(),
            session_id: self.id.clone(),
        }
    }

    /// Applies an event that storage accepted at `revision`: sets every key of its state delta
    /// (`temp:` keys included, for the rest of the invocation), stores the event without its `temp:`
    /// keys, and moves `last_update_time` and `revision` forward. Returns the event as stored.
    ///
    /// Callers never pass partial events: they are not part of a session.
    pub fn apply_event(&mut self, mut event: Event, revision: u64) -> &Event {
        for (key, value) in &event.actions.state_delta {
            self.state.insert(key.clone(), value.clone());
        }
        event.trim_temp_state();
        self.last_update_time = self.last_update_time.max(event.timestamp);
        self.revision = revision;
        self.events.push(event);
        self.events.last().expect("an event was just pushed")
    }
}

/// What names a session: app, user and session id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionKey {
    /// The app.
    pub app_name: String,
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: SessionId,
}

impl SessionKey {
    /// The key of session `session_id` of `user_id` in `app_name`.
    pub fn new(
        app_name: impl Into<String>,
        user_id: impl Into<String>,
        session_id: impl Into<SessionId>,
    ) -> Self {
        Self {
            app_name: app_name.into(),
            user_id: user_id.into(),
            session_id: session_id.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Content, InvocationId};
    use serde_json::json;

    #[test]
    fn apply_event_keeps_temp_in_memory_but_not_in_history() {
        let mut session = Session::new(SessionKey::new("app", "u", "s"));
        let mut event =
            Event::new(InvocationId::from("e-1"), "agent").with_content(Content::model("hi"));
        event.actions.state_delta.insert("temp:x".into(), json!(1));
        event.actions.state_delta.insert("y".into(), json!(2));
        let timestamp = event.timestamp;
        let stored = session.apply_event(event, 7);
        assert_eq!(
            Value::Object(stored.actions.state_delta.clone()),
            json!({"y": 2})
        );
        assert_eq!(
            Value::Object(session.state.clone()),
            json!({"temp:x": 1, "y": 2})
        );
        assert_eq!(session.revision, 7);
        assert_eq!(session.last_update_time, timestamp);
    }

    #[test]
    fn revision_is_not_serialized() {
        let mut session = Session::new(SessionKey::new("app", "u", "s"));
        session.revision = 3;
        assert_eq!(
            serde_json::to_value(&session).unwrap(),
            json!({"id": "s", "appName": "app", "userId": "u", "state": {}, "events": [], "lastUpdateTime": 0.0})
        );
    }
}
