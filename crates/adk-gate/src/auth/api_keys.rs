//! [`ApiKeys`]: static API keys, each naming a principal, kept only as SHA-256 hashes in memory and
//! on disk.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use aws_lc_rs::digest::{SHA256, digest};
use http::request::Parts;

use super::{AuthError, bearer_token};
use crate::error::GateError;
use crate::principal::Principal;

/// The header an API key may come in, besides `Authorization: Bearer <key>`.
pub const API_KEY_HEADER: &str = "x-api-key";

/// A SHA-256 hash of a key.
type KeyHash = [u8; 32];

/// Static API keys: each key authenticates one principal.
///
/// The keys themselves are never kept: a key given in clear is hashed at once, and a key file
/// holds hashes only (`printf %s "$KEY" | sha256sum` makes one). A request presents its key as
/// `Authorization: Bearer <key>` or `X-API-Key: <key>`; it is hashed and looked up, so comparing
/// takes no time that depends on how much of a stored key it matches.
///
/// ```
/// use adk_gate::{ApiKeys, Principal};
///
/// let keys = ApiKeys::new()
///     .key("a-long-random-key-for-ci", Principal::new("ci"))
///     .hashed_key(
///         "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
///         Principal::new("ops").with_scopes(["adk:admin"]),
///     )
///     .unwrap();
/// assert_eq!(keys.len(), 2);
/// ```
#[derive(Clone, Default)]
pub struct ApiKeys {
    by_hash: Arc<HashMap<KeyHash, Arc<Principal>>>,
}

impl ApiKeys {
    /// No keys yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key` (given in clear, kept hashed) for `principal`.
    pub fn key(self, key: impl AsRef<[u8]>, principal: Principal) -> Self {
        self.insert(hash(key.as_ref()), principal)
    }

    /// Adds the key whose SHA-256 is `sha256_hex` (64 hexadecimal digits) for `principal`.
    pub fn hashed_key(self, sha256_hex: &str, principal: Principal) -> Result<Self, GateError> {
        let hash = parse_hash(sha256_hex).ok_or_else(|| {
            GateError::Config(
                "an API key hash is 64 hexadecimal digits (the SHA-256 of the key)".to_owned(),
            )
        })?;
        Ok(self.insert(hash, principal))
    }

    /// Reads a key file: one key a line, `<sha256 of the key> <user> [scope ...]`; blank lines and
    /// lines starting with `#` are left out.
    ///
    /// ```text
    /// # sha256 of the key                                              user  scopes
    /// 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 ada
    /// 60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752 ops   adk:admin
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, GateError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| GateError::Io {
            what: format!("cannot read the API key file {}", path.display()),
            source,
        })?;
        Self::parse(&text).map_err(|message| {
            GateError::Config(format!("the API key file {}: {message}", path.display()))
        })
    }

    /// Reads the text of a key file (see [`from_file`](Self::from_file)).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut keys = Self::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(hash), Some(user)) = (words.next(), words.next()) else {
                return Err(format!(
                    "line {}: want `<sha256 of the key> <user> [scope ...]`",
                    index + 1
                ));
            };
            let hash = parse_hash(hash).ok_or_else(|| {
                format!(
                    "line {}: the first word is not the 64 hexadecimal digits of a SHA-256",
                    index + 1
                )
            })?;
            keys = keys.insert(hash, Principal::new(user).with_scopes(words));
        }
        if keys.is_empty() {
            return Err("it holds no key".to_owned());
        }
        Ok(keys)
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    fn insert(mut self, hash: KeyHash, principal: Principal) -> Self {
        Arc::make_mut(&mut self.by_hash).insert(hash, Arc::new(principal));
        self
    }

    /// The principal of the key `head` presents; [`AuthError::Missing`] when it presents none.
    pub(crate) fn verify(&self, head: &Parts) -> Result<Arc<Principal>, AuthError> {
        let presented = match head.headers.get(API_KEY_HEADER) {
            Some(value) => value
                .to_str()
                .map_err(|_| AuthError::Invalid("the API key is not text".to_owned()))?,
            None => bearer_token(head).ok_or(AuthError::Missing)?,
        };
        self.by_hash
            .get(&hash(presented.as_bytes()))
            .cloned()
            .ok_or_else(|| AuthError::Invalid("unknown API key".to_owned()))
    }
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKeys")
            .field("keys", &self.by_hash.len())
            .finish()
    }
}

fn hash(key: &[u8]) -> KeyHash {
    let mut out = [0; 32];
    out.copy_from_slice(digest(&SHA256, key).as_ref());
    out
}

fn parse_hash(hex: &str) -> Option<KeyHash> {
    let hex = hex.strip_prefix("sha256:").unwrap_or(hex);
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0; 32];
    for (byte, pair) in out.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(name: &str, value: &str) -> Parts {
        http::Request::builder()
            .header(name, value)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn a_key_is_found_by_its_hash_in_either_header() {
        // The SHA-256 of "test".
        let keys = ApiKeys::parse(
            "# comment\n\n9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 ada adk:admin\n",
        )
        .unwrap();
        let principal = keys.verify(&head("authorization", "Bearer test")).unwrap();
        assert_eq!(principal.user_id(), "ada");
        assert!(principal.has_scope("adk:admin"));
        assert_eq!(
            keys.verify(&head(API_KEY_HEADER, "test"))
                .unwrap()
                .user_id(),
            "ada"
        );
        assert!(matches!(
            keys.verify(&head("authorization", "Bearer tesT")),
            Err(AuthError::Invalid(_))
        ));
        assert_eq!(
            keys.verify(&head("x-other", "test")).unwrap_err(),
            AuthError::Missing
        );
        assert_eq!(format!("{keys:?}"), "ApiKeys { keys: 1 }");
    }

    #[test]
    fn a_bad_key_file_names_its_line() {
        assert!(ApiKeys::parse("").unwrap_err().contains("no key"));
        assert!(ApiKeys::parse("abc ada").unwrap_err().starts_with("line 1"));
        assert!(ApiKeys::parse("\n9f86").unwrap_err().starts_with("line 2"));
        assert!(
            ApiKeys::new()
                .hashed_key("not hex", Principal::new("x"))
                .is_err()
        );
    }
}
