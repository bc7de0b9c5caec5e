//! [`CredentialCipher`]: how the SQL credential services seal a credential before it is written
//! (ChaCha20-Poly1305 with a fresh random nonce, bound to its app, user and key).

// Only the SQL services seal and open; without them the cipher can still be built and passed
// around (the launcher reads it from the environment either way), so its sealing goes unused.
#![cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]

use std::fmt;

use adk_core::CredentialKey;
use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore as _;

use crate::error::{Error, ErrorKind, Result};

/// The environment variable [`CredentialCipher::from_env`] reads the key from.
pub const CREDENTIAL_KEY_ENV: &str = "ADK_CREDENTIAL_KEY";

/// The length of a nonce, stored before each ciphertext.
const NONCE_LEN: usize = 12;

/// The key that encrypts credentials at rest: 32 bytes for ChaCha20-Poly1305.
///
/// Each credential is sealed with a fresh random nonce, and its app, user and credential name
/// are authenticated with it, so a sealed value copied to another user's row does not open.
/// `Debug` shows no key.
///
/// ```
/// use adk_session::CredentialCipher;
///
/// // 32 bytes as base64 (standard or URL-safe) or 64 hex digits, from a secret store.
/// let cipher = CredentialCipher::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// assert_eq!(format!("{cipher:?}"), "CredentialCipher([REDACTED])");
/// assert!(CredentialCipher::from_base64("c2hvcnQ=").is_err());
/// # Ok::<(), adk_session::Error>(())
/// ```
#[derive(Clone)]
pub struct CredentialCipher {
    aead: ChaCha20Poly1305,
}

impl CredentialCipher {
    /// A cipher with the 32-byte `key`.
    pub fn new(key: [u8; 32]) -> Self {
        Self {
            aead: ChaCha20Poly1305::new(&Key::from(key)),
        }
    }

    /// A cipher with a key written as base64 (either alphabet, padded or not) or as 64 hex
    /// digits.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidKey`] when the text is neither, or not 32 bytes long; the message
    /// never quotes the text.
    pub fn from_base64(text: &str) -> Result<Self> {
        let text = text.trim();
        let bytes = decode_hex(text).or_else(|| {
            let trimmed = text.trim_end_matches('=');
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(trimmed)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(trimmed))
                .ok()
        });
        let key: [u8; 32] = bytes
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidKey,
                    "the credential key is not 32 bytes written as base64 or 64 hex digits \
                     (make one with `openssl rand -base64 32`)",
                )
            })?;
        Ok(Self::new(key))
    }

    /// A cipher with the key in the environment variable `ADK_CREDENTIAL_KEY`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidKey`] when the variable is missing or not a key (see
    /// [`from_base64`](Self::from_base64)).
    pub fn from_env() -> Result<Self> {
        let text = std::env::var(CREDENTIAL_KEY_ENV).map_err(|_| {
            Error::new(
                ErrorKind::InvalidKey,
                format!(
                    "{CREDENTIAL_KEY_ENV} is not set: credentials are stored encrypted and need a \
                     32-byte key (make one with `openssl rand -base64 32` and keep it in your \
                     secret store)"
                ),
            )
        })?;
        Self::from_base64(&text).map_err(|error| {
            Error::new(
                ErrorKind::InvalidKey,
                format!("{CREDENTIAL_KEY_ENV}: {error}"),
            )
        })
    }

    /// `plaintext` sealed for `key`: the nonce, then the ciphertext with its tag.
    pub(crate) fn seal(&self, key: &CredentialKey, plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let aad = associated_data(key);
        let sealed = self
            .aead
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| {
                Error::new(
                    ErrorKind::Corrupt,
                    format!("sealing credential {key} failed"),
                )
            })?;
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The plaintext of `sealed`, which must have been sealed for `key` with this cipher's key.
    pub(crate) fn open(&self, key: &CredentialKey, sealed: &[u8]) -> Result<Vec<u8>> {
        let refused = || {
            Error::new(
                ErrorKind::Corrupt,
                format!(
                    "credential {key} does not decrypt: it was sealed with another key (was \
                     {CREDENTIAL_KEY_ENV} changed?) or altered"
                ),
            )
        };
        if sealed.len() < NONCE_LEN {
            return Err(refused());
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| refused())?;
        let aad = associated_data(key);
        self.aead
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| refused())
    }
}

impl fmt::Debug for CredentialCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CredentialCipher([REDACTED])")
    }
}

/// What each ciphertext is bound to: its app, user and credential name, length-prefixed so that
/// no two keys share a binding.
fn associated_data(key: &CredentialKey) -> Vec<u8> {
    let mut aad = Vec::new();
    for part in [&key.app_name, &key.user_id, &key.name] {
        aad.extend_from_slice(&u64::try_from(part.len()).unwrap_or(u64::MAX).to_be_bytes());
        aad.extend_from_slice(part.as_bytes());
    }
    aad
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_credential_opens_only_for_its_own_key() {
        let cipher = CredentialCipher::new([7; 32]);
        let ada = CredentialKey::new("app", "ada", "mail");
        let sealed = cipher.seal(&ada, b"token").unwrap();
        assert!(!sealed.windows(5).any(|w| w == b"token"));
        assert_eq!(cipher.open(&ada, &sealed).unwrap(), b"token");
        let bob = CredentialKey::new("app", "bob", "mail");
        assert_eq!(
            cipher.open(&bob, &sealed).unwrap_err().kind(),
            ErrorKind::Corrupt
        );
        let other = CredentialCipher::new([8; 32]);
        assert!(other.open(&ada, &sealed).is_err());
        // Two seals of one value differ (fresh nonces).
        assert_ne!(sealed, cipher.seal(&ada, b"token").unwrap());
    }

    #[test]
    fn keys_are_read_as_base64_or_hex() {
        let hex = "00".repeat(32);
        assert!(CredentialCipher::from_base64(&hex).is_ok());
        let short = CredentialCipher::from_base64("abc").unwrap_err();
        assert_eq!(short.kind(), ErrorKind::InvalidKey);
        assert!(!short.to_string().contains("abc"));
    }
}
