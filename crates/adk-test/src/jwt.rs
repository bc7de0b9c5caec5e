//! [`TestIssuer`]: an identity provider for tests — RSA, EC P-256 and Ed25519 keys generated when it
//! starts, their JSON Web Key Set served on loopback, and tokens signed with them (or forged in the
//! ways an attacker would: expired, for another audience, by another issuer, with an unknown key,
//! tampered, unsigned, or HS256 keyed with a public key).

use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::replay::{MockResponse, MockServer};

/// How many times the key set can be fetched.
const JWKS_ANSWERS: usize = 1_000;

/// One signing key: its id, algorithm and private key.
struct SigningKey {
    kid: String,
    algorithm: Algorithm,
    key: EncodingKey,
}

impl SigningKey {
    fn generate(kid: &str, algorithm: Algorithm) -> Self {
        let key = match algorithm {
            Algorithm::RS256 => {
                let pair = aws_lc_rs::rsa::KeyPair::generate(KeySize::Rsa2048)
                    .expect("an RSA key is generated");
                let pkcs8 = pair.as_der().expect("the RSA key has a PKCS#8 form");
                EncodingKey::from_rsa_der(&pkcs1_of_pkcs8(pkcs8.as_ref()))
            }
            Algorithm::ES256 => {
                let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
                    .expect("an EC key is generated");
                let pkcs8 = pair.to_pkcs8v1().expect("the EC key has a PKCS#8 form");
                EncodingKey::from_ec_der(pkcs8.as_ref())
            }
            Algorithm::EdDSA => {
                let pair = Ed25519KeyPair::generate().expect("an Ed25519 key is generated");
                let pkcs8 = pair
                    .to_pkcs8v1()
                    .expect("the Ed25519 key has a PKCS#8 form");
                EncodingKey::from_ed_der(pkcs8.as_ref())
            }
            other => panic!("TestIssuer makes no {other:?} keys"),
        };
        Self {
            kid: kid.to_owned(),
            algorithm,
            key,
        }
    }

    fn public_jwk(&self) -> Jwk {
        let mut jwk =
            Jwk::from_encoding_key(&self.key, self.algorithm).expect("the public key is derived");
        jwk.common.key_id = Some(self.kid.clone());
        jwk
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.algorithm);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key).expect("a token is signed")
    }
}

/// The RSAPrivateKey (PKCS #1) inside a PKCS #8 PrivateKeyInfo: its last field, an OCTET STRING.
fn pkcs1_of_pkcs8(der: &[u8]) -> Vec<u8> {
    /// The header length and content length of the DER element at the start of `bytes`.
    fn element(bytes: &[u8]) -> (usize, usize) {
        let first = bytes[1];
        if first < 0x80 {
            return (2, usize::from(first));
        }
        let count = usize::from(first & 0x7f);
        let length = bytes[2..2 + count]
            .iter()
            .fold(0_usize, |length, byte| (length << 8) | usize::from(*byte));
        (2 + count, length)
    }
    let (header, _) = element(der);
    let mut rest = &der[header..];
    // version INTEGER, then algorithm AlgorithmIdentifier.
    for _ in 0..2 {
        let (header, length) = element(rest);
        rest = &rest[header + length..];
    }
    let (header, length) = element(rest);
    assert_eq!(rest[0], 0x04, "the private key is an OCTET STRING");
    rest[header..header + length].to_vec()
}

/// An identity provider for tests: keys `rsa` (RS256), `ec` (ES256) and `ed` (EdDSA), their key set
/// served at [`jwks_url`](Self::jwks_url), and tokens.
///
/// ```no_run
/// # async fn run() {
/// let issuer = adk_test::TestIssuer::start().await;
/// let token = issuer.token(jsonwebtoken::Algorithm::ES256, &issuer.claims("ada"));
/// assert_eq!(token.split('.').count(), 3);
/// # }
/// ```
pub struct TestIssuer {
    keys: Vec<SigningKey>,
    stranger: SigningKey,
    jwks: MockServer,
}

impl TestIssuer {
    /// The `iss` of its tokens.
    pub const ISSUER: &'static str = "https://issuer.test/";
    /// The `aud` of its tokens.
    pub const AUDIENCE: &'static str = "adk-test-api";

    /// Generates the keys and serves their key set on a loopback port.
    pub async fn start() -> Self {
        let keys = vec![
            SigningKey::generate("rsa", Algorithm::RS256),
            SigningKey::generate("ec", Algorithm::ES256),
            SigningKey::generate("ed", Algorithm::EdDSA),
        ];
        let set = JwkSet {
            keys: keys.iter().map(SigningKey::public_jwk).collect(),
        };
        let body = serde_json::to_value(&set).expect("a key set serializes");
        // Enough answers for any test; how many were used tells how often the set was fetched.
        let jwks =
            MockServer::start((0..JWKS_ANSWERS).map(|_| MockResponse::json(200, &body))).await;
        Self {
            keys,
            stranger: SigningKey::generate("unknown", Algorithm::ES256),
            jwks,
        }
    }

    /// Where the key set is served.
    pub fn jwks_url(&self) -> String {
        format!("{}/.well-known/jwks.json", self.jwks.base_url())
    }

    /// The key set, as served.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(SigningKey::public_jwk).collect::<Vec<_>>()})
    }

    /// How many times the key set was fetched.
    pub fn jwks_fetches(&self) -> usize {
        JWKS_ANSWERS - self.jwks.remaining()
    }

    /// Claims of a token for `subject` from this issuer to its audience, valid for ten minutes.
    pub fn claims(&self, subject: &str) -> Value {
        Self::claims_for(subject)
    }

    /// The claims [`claims`](Self::claims) makes, without an issuer at hand.
    pub fn claims_for(subject: &str) -> Value {
        let now = now();
        json!({
            "iss": Self::ISSUER,
            "aud": Self::AUDIENCE,
            "sub": subject,
            "iat": now,
            "exp": now + 600,
        })
    }

    /// `claims` signed with the issuer's key of `algorithm` (RS256, ES256 or EdDSA).
    pub fn token(&self, algorithm: Algorithm, claims: &Value) -> String {
        self.keys
            .iter()
            .find(|key| key.algorithm == algorithm)
            .unwrap_or_else(|| panic!("no {algorithm:?} key"))
            .sign(claims)
    }

    /// `claims` signed with a key the key set does not hold (kid `unknown`).
    pub fn token_of_an_unknown_key(&self, claims: &Value) -> String {
        self.stranger.sign(claims)
    }

    /// A valid token with one character of its claims changed.
    pub fn tampered_token(&self, claims: &Value) -> String {
        let token = self.token(Algorithm::ES256, claims);
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut claims = claims.clone();
        claims["sub"] = json!(format!("{}x", claims["sub"].as_str().unwrap_or("")));
        parts[1] = URL_SAFE_NO_PAD.encode(claims.to_string());
        parts.join(".")
    }

    /// `claims` signed HS256 with the shared `secret`.
    pub fn hs256_token(secret: &[u8], claims: &Value) -> String {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            claims,
            &EncodingKey::from_secret(secret),
        )
        .expect("a token is signed")
    }

    /// `claims` with `alg: none` and no signature.
    pub fn unsigned_token(claims: &Value) -> String {
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        format!("{header}.{payload}.")
    }

    /// `claims` signed HS256 with the RSA key's public modulus as the secret, naming the RSA key:
    /// the algorithm confusion a verifier that trusts the token's `alg` falls for.
    pub fn confused_token(&self, claims: &Value) -> String {
        let rsa = self.keys[0].public_jwk();
        let modulus = serde_json::to_value(&rsa).expect("a key serializes")["n"]
            .as_str()
            .expect("an RSA key has a modulus")
            .to_owned();
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa".to_owned());
        jsonwebtoken::encode(
            &header,
            claims,
            &EncodingKey::from_secret(modulus.as_bytes()),
        )
        .expect("a token is signed")
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
