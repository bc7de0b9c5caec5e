//! [`ToolEffect`]: what running a tool does to the world outside the session, and the hashes the
//! effect journal keys calls by ([`idempotency_key`], [`arguments_hash`]).

use std::fmt;
use std::str::FromStr;

use adk_core::{FunctionCallId, InvocationId, SessionKey};
use sha2::{Digest as _, Sha256};

/// What running a tool does outside the session, which decides what happens to a call that was
/// interrupted (the process stopped after the tool started and before its result was stored).
///
/// | effect | journaled | an interrupted call on resume |
/// |---|---|---|
/// | [`ReadOnly`](Self::ReadOnly) | no | runs again |
/// | [`Idempotent`](Self::Idempotent) | yes | runs again with the same [`idempotency_key`] |
/// | [`Effectful`](Self::Effectful) | yes | waits for the user's decision |
///
/// A call whose result is stored is never run again, whatever its tool's effect. `Effectful` is
/// the default: a tool that says nothing is assumed to act, so it is never silently repeated.
///
/// ```
/// use adk_tool::ToolEffect;
///
/// assert_eq!(ToolEffect::default(), ToolEffect::Effectful);
/// assert_eq!("read_only".parse::<ToolEffect>().unwrap(), ToolEffect::ReadOnly);
/// assert!(ToolEffect::Idempotent.may_run_again());
/// assert!(!ToolEffect::Effectful.may_run_again());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolEffect {
    /// Changes nothing outside the session (a lookup, a search): running it again is harmless.
    ReadOnly,
    /// Acts, but acting twice with the same arguments and the same
    /// [`idempotency_key`](crate::ToolContext::idempotency_key) does no more than once (a payment
    /// API that takes an idempotency key, an upsert).
    Idempotent,
    /// Acts, and acting twice may do it twice (sends a message, charges a card).
    #[default]
    Effectful,
}

impl ToolEffect {
    /// Whether a call of such a tool is recorded in the effect journal before it runs.
    pub fn is_journaled(self) -> bool {
        self != Self::ReadOnly
    }

    /// Whether an interrupted call of such a tool may run again without asking anyone.
    pub fn may_run_again(self) -> bool {
        self != Self::Effectful
    }

    /// The effect's name, as `#[adk::tool(effect = "...")]` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Idempotent => "idempotent",
            Self::Effectful => "effectful",
        }
    }
}

impl fmt::Display for ToolEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of a name that is not a [`ToolEffect`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a tool effect; use `read_only`, `idempotent` or `effectful`")]
pub struct UnknownEffect(String);

impl FromStr for ToolEffect {
    type Err = UnknownEffect;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "read_only" => Ok(Self::ReadOnly),
            "idempotent" => Ok(Self::Idempotent),
            "effectful" => Ok(Self::Effectful),
            other => Err(UnknownEffect(other.to_owned())),
        }
    }
}

/// The prefix of every idempotency key; a later format gets another.
const KEY_PREFIX: &str = "adk1-";

/// The idempotency key of call `call_id` of invocation `invocation_id` in `session`: the same for
/// every run of that call (a retry, a resume, another replica), different for every other call.
///
/// The format is `adk1-` followed by 32 lowercase hex digits: the first 16 bytes of the SHA-256
/// of the app name, user id, session id, invocation id and function call id, each written as its
/// length in bytes (8 bytes, big-endian) and then its UTF-8 bytes. Nothing of the ids can be read
/// back from it, so it can be handed to an external API as it is.
///
/// ```
/// use adk_core::SessionKey;
/// use adk_tool::idempotency_key;
///
/// let session = SessionKey::new("shop", "ada", "s-1");
/// let key = idempotency_key(&session, &"e-1".into(), &"call-1".into());
/// assert!(key.starts_with("adk1-") && key.len() == 37);
/// assert_eq!(key, idempotency_key(&session, &"e-1".into(), &"call-1".into()));
/// assert_ne!(key, idempotency_key(&session, &"e-1".into(), &"call-2".into()));
/// ```
pub fn idempotency_key(
    session: &SessionKey,
    invocation_id: &InvocationId,
    call_id: &FunctionCallId,
) -> String {
    let mut hasher = Sha256::new();
    for field in [
        session.app_name.as_str(),
        session.user_id.as_str(),
        session.session_id.as_str(),
        invocation_id.as_str(),
        call_id.as_str(),
    ] {
        hasher.update((field.len() as u64).to_be_bytes());
        hasher.update(field.as_bytes());
    }
    let digest = hasher.finalize();
    let mut key = String::with_capacity(KEY_PREFIX.len() + 32);
    key.push_str(KEY_PREFIX);
    push_hex(&mut key, &digest[..16]);
    key
}

/// The hash of a call's arguments that the effect journal records: 64 lowercase hex digits of the
/// SHA-256 of the arguments' compact JSON.
///
/// ```
/// use adk_tool::arguments_hash;
/// use serde_json::json;
///
/// let hash = arguments_hash(&json!({"amount": 10}));
/// assert_eq!(hash.len(), 64);
/// assert_ne!(hash, arguments_hash(&json!({"amount": 11})));
/// ```
pub fn arguments_hash(args: &(impl serde::Serialize + ?Sized)) -> String {
    let mut hasher = Sha256::new();
    // Writing into the hasher directly: no copy of the arguments' text is made.
    serde_json::to_writer(HashWriter(&mut hasher), args)
        .expect("a JSON value always serializes, and hashing cannot fail");
    let mut hash = String::with_capacity(64);
    push_hex(&mut hash, &hasher.finalize());
    hash
}

/// Feeds what is written to a SHA-256 hasher.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_pinned_and_fields_do_not_run_together() {
        let key = |app: &str, user: &str| {
            idempotency_key(
                &SessionKey::new(app, user, "s"),
                &"e-1".into(),
                &"call-1".into(),
            )
        };
        // The format is a promise to external APIs: a change here changes every key. (The value
        // was checked against Python's hashlib with the same length-prefixed fields.)
        assert_eq!(key("shop", "ada"), "adk1-3001e0c2d2ba93d38ef9090a4e8d1c1b");
        assert_ne!(
            key("ab", "c"),
            key("a", "bc"),
            "lengths separate the fields"
        );
    }

    #[test]
    fn effects_parse_from_their_names() {
        for effect in [
            ToolEffect::ReadOnly,
            ToolEffect::Idempotent,
            ToolEffect::Effectful,
        ] {
            assert_eq!(effect.as_str().parse::<ToolEffect>().unwrap(), effect);
        }
        let error = "write".parse::<ToolEffect>().unwrap_err();
        assert!(error.to_string().contains("read_only"), "{error}");
    }
}
