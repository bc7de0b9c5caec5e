//! Session state: keys scoped by prefix (`app:`, `user:`, `temp:`, or none) and a [`State`] that
//! records what was changed as a delta.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The prefix of keys shared by every session of an app.
pub const APP_PREFIX: &str = "app:";
/// The prefix of keys shared by every session of a user of an app.
pub const USER_PREFIX: &str = "user:";
/// The prefix of keys that live for one invocation and are never stored.
pub const TEMP_PREFIX: &str = "temp:";

/// Where a state key lives, by its prefix.
///
/// ```
/// use adk_core::StateScope;
///
/// assert_eq!(StateScope::of("app:theme"), StateScope::App);
/// assert_eq!(StateScope::of("user:name"), StateScope::User);
/// assert_eq!(StateScope::of("temp:draft"), StateScope::Temp);
/// assert_eq!(StateScope::of("answer"), StateScope::Session);
/// assert_eq!(StateScope::App.strip("app:theme"), "theme");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateScope {
    /// `app:` keys, shared by every session of the app.
    App,
    /// `user:` keys, shared by every session of the user.
    User,
    /// Keys without a prefix, private to one session.
    Session,
    /// `temp:` keys, for the current invocation only; never stored.
    Temp,
}

impl StateScope {
    /// The scope of `key`.
    pub fn of(key: &str) -> Self {
        if key.starts_with(APP_PREFIX) {
            Self::App
        } else if key.starts_with(USER_PREFIX) {
            Self::User
        } else if key.starts_with(TEMP_PREFIX) {
            Self::Temp
        } else {
            Self::Session
        }
    }

    /// The prefix of this scope (empty for session keys).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::App => APP_PREFIX,
            Self::User => USER_PREFIX,
            Self::Session => "",
            Self::Temp => TEMP_PREFIX,
        }
    }

    /// `key` without this scope's prefix.
    pub fn strip(self, key: &str) -> &str {
        key.strip_prefix(self.prefix()).unwrap_or(key)
    }
}

/// A state map split by scope, keys without their prefixes: how session services store a delta.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScopedState {
    /// `app:` keys, unprefixed.
    pub app: Map<String, Value>,
    /// `user:` keys, unprefixed.
    pub user: Map<String, Value>,
    /// Session keys.
    pub session: Map<String, Value>,
}

impl ScopedState {
    /// Splits `state` by scope, dropping `temp:` keys.
    pub fn split(state: &Map<String, Value>) -> Self {
        let mut scoped = Self::default();
        for (key, value) in state {
            let scope = StateScope::of(key);
            let target = match scope {
                StateScope::App => &mut scoped.app,
                StateScope::User => &mut scoped.user,
                StateScope::Session => &mut scoped.session,
                StateScope::Temp => continue,
            };
            target.insert(scope.strip(key).to_owned(), value.clone());
        }
        scoped
    }

    /// Joins the scopes back into one map with prefixed keys, as a session's state shows them.
    pub fn merge(self) -> Map<String, Value> {
        let mut state = self.session;
        state.extend(prefixed(APP_PREFIX, self.app));
        state.extend(prefixed(USER_PREFIX, self.user));
        state
    }
}

fn prefixed(
    prefix: &'static str,
    map: Map<String, Value>,
) -> impl Iterator<Item = (String, Value)> {
    map.into_iter()
        .map(move |(key, value)| (format!("{prefix}{key}"), value))
}

/// A state map with the changes made to it recorded as a delta: reads see the changes, and
/// [`delta`](State::delta) says what to put in an event's `stateDelta`.
///
/// ```
/// use adk_core::State;
/// use serde_json::{json, Map};
///
/// let mut state = State::new(Map::from_iter([("count".to_owned(), json!(1))]));
/// state.set("count", json!(2));
/// state.set("temp:draft", json!("..."));
/// assert_eq!(state.get("count"), Some(&json!(2)));
/// assert_eq!(state.delta().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    value: Map<String, Value>,
    delta: Map<String, Value>,
}

impl State {
    /// State starting from `value`, with no changes yet.
    pub fn new(value: Map<String, Value>) -> Self {
        Self {
            value,
            delta: Map::new(),
        }
    }

    /// The current value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.delta.get(key).or_else(|| self.value.get(key))
    }

    /// The current value of `key`, deserialized; `None` when absent or of another shape.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.get(key)?).ok()
    }

    /// Whether `key` has a value.
    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` and records the change.
    pub fn set(&mut self, key: impl Into<String>, value: Value) {
        self.delta.insert(key.into(), value);
    }

    /// Whether anything was changed.
    pub fn has_delta(&self) -> bool {
        !self.delta.is_empty()
    }

    /// The changes made so far.
    pub fn delta(&self) -> &Map<String, Value> {
        &self.delta
    }

    /// Takes the changes, leaving them applied to the value.
    pub fn take_delta(&mut self) -> Map<String, Value> {
        let delta = std::mem::take(&mut self.delta);
        for (key, value) in &delta {
            self.value.insert(key.clone(), value.clone());
        }
        delta
    }

    /// The state with the changes applied.
    pub fn into_value(mut self) -> Map<String, Value> {
        self.value.append(&mut self.delta);
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_and_merge_are_inverse_without_temp() {
        let state = Map::from_iter([
            ("app:theme".to_owned(), json!("dark")),
            ("user:name".to_owned(), json!("Ada")),
            ("answer".to_owned(), json!(42)),
            ("temp:scratch".to_owned(), json!(true)),
        ]);
        let scoped = ScopedState::split(&state);
        assert_eq!(Value::Object(scoped.app.clone()), json!({"theme": "dark"}));
        assert_eq!(Value::Object(scoped.user.clone()), json!({"name": "Ada"}));
        let mut expected = state;
        expected.remove("temp:scratch");
        assert_eq!(scoped.merge(), expected);
    }

    #[test]
    fn take_delta_applies_and_clears() {
        let mut state = State::default();
        state.set("a", json!(1));
        assert!(state.has_delta());
        let delta = state.take_delta();
        assert_eq!(Value::Object(delta), json!({"a": 1}));
        assert!(!state.has_delta());
        assert_eq!(state.get_as::<i32>("a"), Some(1));
    }
}
