//! Typed identifiers and the `IdGen` and `Clock` seams that make runs deterministic in tests.

use std::borrow::Borrow;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The prefix of invocation ids: `e-<uuid4>`, as ADK emits them.
pub const INVOCATION_ID_PREFIX: &str = "e-";

/// The prefix of function-call ids that adk-rs generates when the model gave none: `adk-<uuid4>`.
/// Such ids are stripped again before history is sent to a model.
pub const CLIENT_FUNCTION_CALL_ID_PREFIX: &str = "adk-";

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps an id string as it is.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as an owned string.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

string_id! {
    /// The id of an [`Event`](crate::Event): a uuid4 string.
    EventId
}

string_id! {
    /// The id of one invocation (one user turn through the agent tree): `e-<uuid4>`.
    InvocationId
}

string_id! {
    /// The id of a [`Session`](crate::Session), unique within an app and user.
    SessionId
}

string_id! {
    /// The id that ties a function call to its function response: the model's own, or
    /// `adk-<uuid4>` when the model gave none.
    FunctionCallId
}

impl FunctionCallId {
    /// Whether adk-rs generated this id (it starts with `adk-`), so that it must not be shown to
    /// the model.
    pub fn is_client_generated(&self) -> bool {
        self.0.starts_with(CLIENT_FUNCTION_CALL_ID_PREFIX)
    }
}

/// Where new ids come from. The default, [`UuidIdGen`], uses random uuid4s; tests use a counter.
///
/// Only [`new_uuid`](IdGen::new_uuid) is required; the typed ids derive from it with ADK's prefixes.
pub trait IdGen: Send + Sync + fmt::Debug {
    /// A fresh uuid-shaped string.
    fn new_uuid(&self) -> String;

    /// A fresh invocation id, `e-<uuid>`.
    fn invocation_id(&self) -> InvocationId {
        InvocationId(prefixed(INVOCATION_ID_PREFIX, &self.new_uuid()))
    }

    /// A fresh event id.
    fn event_id(&self) -> EventId {
        EventId(self.new_uuid())
    }

    /// A fresh client-side function-call id, `adk-<uuid>`.
    fn function_call_id(&self) -> FunctionCallId {
        FunctionCallId(prefixed(CLIENT_FUNCTION_CALL_ID_PREFIX, &self.new_uuid()))
    }

    /// A fresh session id.
    fn session_id(&self) -> SessionId {
        SessionId(self.new_uuid())
    }
}

/// `prefix` then `id`, in one allocation.
fn prefixed(prefix: &str, id: &str) -> String {
    let mut prefixed = String::with_capacity(prefix.len() + id.len());
    prefixed.push_str(prefix);
    prefixed.push_str(id);
    prefixed
}

/// Random uuid4 ids, as ADK Python makes them.
#[derive(Debug, Default, Clone, Copy)]
pub struct UuidIdGen;

impl IdGen for UuidIdGen {
    fn new_uuid(&self) -> String {
        // Written straight into a buffer: `to_string` goes through the formatting machinery.
        let mut buffer = uuid::Uuid::encode_buffer();
        uuid::Uuid::new_v4()
            .hyphenated()
            .encode_lower(&mut buffer)
            .to_owned()
    }
}

/// Where the time comes from: float seconds since the Unix epoch, the unit of event timestamps.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time in seconds since the Unix epoch.
    fn now(&self) -> f64;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        // A clock set before 1970 is a broken machine; report the epoch rather than panic.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs_f64())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_carry_adk_prefixes() {
        let ids = UuidIdGen;
        assert!(ids.invocation_id().as_str().starts_with("e-"));
        let call_id = ids.function_call_id();
        assert!(call_id.is_client_generated());
        assert_eq!(call_id.as_str().len(), "adk-".len() + 36);
        assert!(!FunctionCallId::from("call_1").is_client_generated());
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = EventId::from("abc");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"abc\"");
        assert_eq!(id, "abc");
    }
}
