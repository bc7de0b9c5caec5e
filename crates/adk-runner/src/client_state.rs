//! Which state a client may set: the scope check of a request's state delta.
//!
//! A client's state delta (`RunRequest::state_delta`, ADK's `stateDelta` over HTTP, the state of a
//! new session) comes from outside the app. `app:` keys are shared by every user of the app, so a
//! client that could write them could plant text in every user's instructions through an
//! `{app:...}` template; `temp:` keys are never stored but steer the invocation that reads them
//! (a credential a tool looks up, say). Both are refused unless the app opts in.

use adk_core::{Error, ErrorKind, Result, StateScope};
use serde_json::{Map, Value};

/// The scopes a client may write besides session and `user:` keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClientStateScopes {
    /// Whether `app:` keys are accepted.
    pub(crate) app: bool,
    /// Whether `temp:` keys are accepted.
    pub(crate) temp: bool,
}

impl ClientStateScopes {
    /// Fails with [`ErrorKind::InvalidInput`] naming the first key of `delta` whose scope the app
    /// does not accept from clients; nothing is stored then.
    pub(crate) fn check(&self, delta: &Map<String, Value>) -> Result<()> {
        for key in delta.keys() {
            let refused = match StateScope::of(key) {
                StateScope::App => (!self.app).then_some((
                    "is shared by every user of the app",
                    "RunnerBuilder::allow_app_state_from_clients",
                )),
                StateScope::Temp => (!self.temp).then_some((
                    "is the invocation's own scratch state",
                    "RunnerBuilder::allow_temp_state_from_clients",
                )),
                StateScope::User | StateScope::Session => None,
            };
            if let Some((why, setting)) = refused {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "the state delta sets `{key}`, which {why}; clients may not set such keys \
                         unless the app allows it ({setting}); nothing was stored"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn delta(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn app_and_temp_keys_are_refused_unless_allowed() {
        let strict = ClientStateScopes::default();
        strict
            .check(&delta(json!({"theme": "dark", "user:name": "Ada"})))
            .unwrap();
        let error = strict.check(&delta(json!({"app:motd": "x"}))).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.message().contains("`app:motd`"), "{error}");
        assert!(strict.check(&delta(json!({"temp:token": "x"}))).is_err());
        let open = ClientStateScopes {
            app: true,
            temp: true,
        };
        open.check(&delta(json!({"app:motd": "x", "temp:token": "y"})))
            .unwrap();
    }
}
