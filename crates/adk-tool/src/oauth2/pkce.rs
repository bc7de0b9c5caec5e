//! PKCE (RFC 7636) and the `state` of an authorization request: random values made fresh for
//! each sign-in.

use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest, Sha256};

/// The method of every challenge this module makes.
pub(crate) const CHALLENGE_METHOD: &str = "S256";

/// `bytes` random bytes as unpadded URL-safe base64.
fn random_text(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buffer)
}

/// A code verifier: 32 random bytes, 43 characters of the unreserved set.
pub(crate) fn verifier() -> String {
    random_text(32)
}

/// The S256 challenge of `verifier`.
pub(crate) fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A `state` value that ties the answer to the request (and so to the stored verifier).
pub(crate) fn state() -> String {
    random_text(24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s() {
        // The example of RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let verifier = verifier();
        assert_eq!(verifier.len(), 43);
        assert_ne!(verifier, super::verifier());
    }
}
