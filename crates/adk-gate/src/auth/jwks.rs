//! The keys a [`JwtAuthenticator`](super::JwtAuthenticator) verifies with: a JSON Web Key Set read
//! from a URL or a file (refreshed after a while, and at once, at most so often, when a token
//! names a key it does not hold), or one shared secret. Each key is verified only with the
//! algorithms of its own kind, so a token cannot pick a weaker or confused algorithm.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use parking_lot::RwLock;

use super::AuthError;

/// The largest key set read from a URL or a file.
const MAX_JWKS_BYTES: usize = 1024 * 1024;

/// How long fetching a key set from a URL may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the keys come from.
pub(super) enum Source {
    /// A JWKS document served at this URL (an identity provider's `jwks_uri`).
    Url { url: String, http: reqwest::Client },
    /// A JWKS document in this file.
    File(PathBuf),
    /// One HMAC secret, for HS256 tokens.
    Secret(Vec<u8>),
}

impl Source {
    pub(super) fn url(url: String) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            // A key set is fetched from where it was configured, never from where a redirect
            // points.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("cannot build the HTTP client for the key set: {error}"))?;
        Ok(Self::Url { url, http })
    }

    /// Where the keys come from, for messages.
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Url { url, .. } => url.clone(),
            Self::File(path) => path.display().to_string(),
            Self::Secret(_) => "the shared secret".to_owned(),
        }
    }
}

/// What every key's validation checks besides the signature.
#[derive(Clone)]
pub(super) struct Checks {
    pub(super) issuers: Vec<String>,
    pub(super) audiences: Vec<String>,
    pub(super) leeway: Duration,
}

impl Checks {
    fn validation(&self, algorithms: &[Algorithm]) -> Validation {
        let mut validation = Validation::new(algorithms[0]);
        validation.algorithms = algorithms.to_vec();
        validation.set_issuer(&self.issuers);
        validation.set_audience(&self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation
    }
}

/// One key and how tokens signed with it are validated.
pub(super) struct VerifyKey {
    pub(super) key: DecodingKey,
    pub(super) validation: Validation,
}

/// The keys at hand, by key id.
#[derive(Default)]
pub(super) struct KeySet {
    by_kid: HashMap<String, Arc<VerifyKey>>,
    without_kid: Vec<Arc<VerifyKey>>,
}

impl KeySet {
    /// The key of a token that names `kid`, or names none when the set holds a single key.
    fn find(&self, kid: Option<&str>) -> Option<Arc<VerifyKey>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).cloned(),
            None if self.len() == 1 => self
                .without_kid
                .first()
                .or_else(|| self.by_kid.values().next())
                .cloned(),
            None => None,
        }
    }

    fn len(&self) -> usize {
        self.by_kid.len() + self.without_kid.len()
    }

    /// The keys of a JWKS document; keys for encryption, symmetric keys and keys of kinds that
    /// cannot verify a signature are left out (and logged).
    fn from_jwks(document: &[u8], checks: &Checks) -> Result<Self, String> {
        let set: JwkSet = serde_json::from_slice(document)
            .map_err(|error| format!("not a JSON Web Key Set: {error}"))?;
        let mut keys = Self::default();
        for jwk in &set.keys {
            let kid = jwk.common.key_id.clone();
            match verify_key(jwk, checks) {
                Ok(key) => match kid {
                    Some(kid) => {
                        keys.by_kid.insert(kid, Arc::new(key));
                    }
                    None => keys.without_kid.push(Arc::new(key)),
                },
                Err(why) => tracing::warn!(kid = ?kid, "a key of the key set is not used: {why}"),
            }
        }
        if keys.len() == 0 {
            return Err("it holds no key that can verify a signature".to_owned());
        }
        Ok(keys)
    }

    /// The one key of a shared HMAC secret.
    pub(super) fn secret(secret: &[u8], checks: &Checks) -> Self {
        let key = VerifyKey {
            key: DecodingKey::from_secret(secret),
            validation: checks.validation(&[Algorithm::HS256]),
        };
        Self {
            by_kid: HashMap::new(),
            without_kid: vec![Arc::new(key)],
        }
    }
}

/// The algorithms a key of this kind verifies.
const RSA_ALGORITHMS: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

/// The key of `jwk` with the algorithms its kind allows: the one it declares, else every
/// algorithm of its kind. A symmetric key is refused: a public key set that held one would let
/// anyone who reads the set sign tokens.
fn verify_key(jwk: &Jwk, checks: &Checks) -> Result<VerifyKey, String> {
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return Err("it is for encryption (`use: enc`)".to_owned());
    }
    let kind: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &RSA_ALGORITHMS,
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            ref curve => return Err(format!("curve {curve:?} is not supported")),
        },
        AlgorithmParameters::OctetKeyPair(params) => match params.curve {
            EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
            ref curve => return Err(format!("curve {curve:?} is not supported")),
        },
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric key has no place in a public key set".to_owned());
        }
        _ => return Err("its key type is not supported".to_owned()),
    };
    let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
        Some(declared) => {
            let name = serde_json::to_value(declared)
                .ok()
                .and_then(|name| name.as_str().map(str::to_owned))
                .unwrap_or_default();
            let declared = name
                .parse::<Algorithm>()
                .map_err(|_| format!("algorithm {name:?} cannot verify a signature"))?;
            if !kind.contains(&declared) {
                return Err(format!(
                    "it declares {declared:?}, which does not fit its key type"
                ));
            }
            vec![declared]
        }
        None => kind.to_vec(),
    };
    let key = DecodingKey::from_jwk(jwk).map_err(|error| format!("unreadable key: {error}"))?;
    Ok(VerifyKey {
        key,
        validation: checks.validation(&algorithms),
    })
}

/// The keys, refreshed from their source.
pub(super) struct Keys {
    source: Source,
    checks: Checks,
    /// After this long the set is read again before it is used.
    refresh_every: Duration,
    /// A token naming an unknown key makes the set be read again, at most this often.
    refetch_at_most_every: Duration,
    current: RwLock<Cached>,
    /// One refresh at a time; the others wait for it and use what it read.
    refreshing: tokio::sync::Mutex<()>,
}

struct Cached {
    set: Arc<KeySet>,
    /// When the set was last read (or tried), `None` before the first time.
    read_at: Option<Instant>,
}

impl Keys {
    pub(super) fn new(
        source: Source,
        checks: Checks,
        refresh_every: Duration,
        refetch_at_most_every: Duration,
    ) -> Self {
        let (set, read_at) = match &source {
            Source::Secret(secret) => (Arc::new(KeySet::secret(secret, &checks)), None),
            _ => (Arc::new(KeySet::default()), None),
        };
        Self {
            source,
            checks,
            refresh_every,
            refetch_at_most_every,
            current: RwLock::new(Cached { set, read_at }),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    /// Reads the set now; fails when it cannot be read (for checking the setup at start).
    pub(super) async fn load(&self) -> Result<(), String> {
        if matches!(self.source, Source::Secret(_)) {
            return Ok(());
        }
        let _refreshing = self.refreshing.lock().await;
        let result = self.read().await;
        let mut cached = self.current.write();
        cached.read_at = Some(Instant::now());
        cached.set = Arc::new(result?);
        Ok(())
    }

    /// The key a token naming `kid` is verified with.
    pub(super) async fn key_for(&self, kid: Option<&str>) -> Result<Arc<VerifyKey>, AuthError> {
        let (set, read_at) = {
            let cached = self.current.read();
            (cached.set.clone(), cached.read_at)
        };
        let stale = match read_at {
            _ if matches!(self.source, Source::Secret(_)) => false,
            None => true,
            Some(at) => at.elapsed() >= self.refresh_every,
        };
        let set = if stale {
            self.refresh(read_at).await?
        } else {
            set
        };
        if let Some(key) = set.find(kid) {
            return Ok(key);
        }
        let read_at = self.current.read().read_at;
        let may_refetch = kid.is_some()
            && !matches!(self.source, Source::Secret(_))
            && read_at.is_none_or(|at| at.elapsed() >= self.refetch_at_most_every);
        if may_refetch && let Some(key) = self.refresh(read_at).await?.find(kid) {
            return Ok(key);
        }
        Err(AuthError::Invalid(match kid {
            Some(_) => "the token's key id is not in the key set".to_owned(),
            None => "the token names no key id (kid) and the key set holds several keys".to_owned(),
        }))
    }

    /// Reads the set again unless another caller did since `seen` (the read time this caller
    /// saw). A failed read keeps the keys at hand; with none at hand the token cannot be checked.
    async fn refresh(&self, seen: Option<Instant>) -> Result<Arc<KeySet>, AuthError> {
        let _refreshing = self.refreshing.lock().await;
        {
            let cached = self.current.read();
            if cached.read_at != seen {
                return Ok(cached.set.clone());
            }
        }
        let result = self.read().await;
        let mut cached = self.current.write();
        cached.read_at = Some(Instant::now());
        match result {
            Ok(set) => cached.set = Arc::new(set),
            Err(why) => {
                tracing::warn!(source = %self.source.describe(), "cannot read the JWT key set: {why}");
                if cached.set.len() == 0 {
                    return Err(AuthError::Unavailable(format!(
                        "the key set cannot be read: {why}"
                    )));
                }
            }
        }
        Ok(cached.set.clone())
    }

    async fn read(&self) -> Result<KeySet, String> {
        let document = match &self.source {
            Source::Url { url, http } => fetch(http, url).await?,
            Source::File(path) => tokio::fs::read(path)
                .await
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?,
            Source::Secret(secret) => return Ok(KeySet::secret(secret, &self.checks)),
        };
        if document.len() > MAX_JWKS_BYTES {
            return Err(format!("it is larger than {MAX_JWKS_BYTES} bytes"));
        }
        KeySet::from_jwks(&document, &self.checks)
    }
}

/// GETs a key set, reading at most [`MAX_JWKS_BYTES`].
async fn fetch(http: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let response = http
        .get(url)
        .send()
        .await
        .map_err(|error| format!("cannot fetch it: {}", error.without_url()))?;
    if !response.status().is_success() {
        return Err(format!("fetching it answered HTTP {}", response.status()));
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| format!("reading it failed: {}", error.without_url()))?;
        if body.len() + chunk.len() > MAX_JWKS_BYTES {
            return Err(format!("it is larger than {MAX_JWKS_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks() -> Checks {
        Checks {
            issuers: vec!["https://issuer.example".to_owned()],
            audiences: vec!["adk".to_owned()],
            leeway: Duration::from_secs(30),
        }
    }

    #[test]
    fn symmetric_and_encryption_keys_of_a_key_set_are_left_out() {
        let document = serde_json::json!({"keys": [
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "enc", "use": "enc", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "kid": "sig", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
        ]});
        let set = KeySet::from_jwks(document.to_string().as_bytes(), &checks()).unwrap();
        assert_eq!(set.len(), 1);
        let key = set.find(Some("sig")).unwrap();
        assert_eq!(key.validation.algorithms, [Algorithm::ES256]);
        assert!(set.find(Some("hmac")).is_none());
        // A token without a kid is verified with the only key there is.
        assert!(set.find(None).is_some());

        let only_symmetric = serde_json::json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]});
        let error = KeySet::from_jwks(only_symmetric.to_string().as_bytes(), &checks())
            .err()
            .unwrap();
        assert!(error.contains("no key"), "{error}");
    }

    #[test]
    fn a_declared_algorithm_must_fit_the_key_type() {
        let document = serde_json::json!({"keys": [
            {"kty": "EC", "kid": "liar", "alg": "HS256", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
        ]});
        assert!(KeySet::from_jwks(document.to_string().as_bytes(), &checks()).is_err());
    }
}
