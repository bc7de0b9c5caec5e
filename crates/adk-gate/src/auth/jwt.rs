//! [`JwtAuthenticator`]: bearer tokens that are JSON Web Tokens, signed with RS256, ES256, EdDSA
//! (keys from a JWKS at a URL or in a file) or HS256 (a shared secret), checked for issuer,
//! audience and expiry, and turned into a principal.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::request::Parts;
use jsonwebtoken::errors::ErrorKind;
use serde_json::{Map, Value};

use super::jwks::{Checks, Keys, Source};
use super::{AuthError, bearer_token};
use crate::error::GateError;
use crate::principal::Principal;

/// How long a token may be past its `exp` (or before its `nbf`) and still pass: 30 seconds of
/// clock skew.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// How often a key set from a URL or a file is read again: 10 minutes.
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(600);

/// A token naming a key the set does not hold makes the set be read again at most this often, so
/// that tokens with made-up key ids cannot make the server hammer the identity provider.
const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(10);

/// Authenticates `Authorization: Bearer <JWT>`.
///
/// A token passes when its signature verifies with a key of the configured set (chosen by the
/// token's `kid`) under an algorithm that key's type allows, its `iss` is the configured issuer,
/// its `aud` names the configured audience, and it has not expired (`exp`, with the leeway) nor
/// starts later (`nbf`). `alg: none` never passes, nor does a token signed with HS256 against a
/// public key set (algorithm confusion): the set's symmetric keys are refused, and each
/// asymmetric key verifies only its own kind of signature.
///
/// The principal's user is the `sub` claim, or the claim [`user_claim`](JwtAuthenticatorBuilder::user_claim)
/// names; its scopes are the space-separated `scope` claim and the `scp` claim (a string or a
/// list).
///
/// ```
/// use adk_gate::JwtAuthenticator;
///
/// let jwt = JwtAuthenticator::builder()
///     .jwks_url("https://idp.example.com/.well-known/jwks.json")
///     .issuer("https://idp.example.com/")
///     .audience("adk-api")
///     .user_claim("email")
///     .build()
///     .unwrap();
/// # let _ = jwt;
/// ```
#[derive(Clone)]
pub struct JwtAuthenticator {
    inner: Arc<Inner>,
}

struct Inner {
    keys: Keys,
    user_claim: String,
}

impl JwtAuthenticator {
    /// Starts building an authenticator.
    pub fn builder() -> JwtAuthenticatorBuilder {
        JwtAuthenticatorBuilder {
            source: None,
            issuers: Vec::new(),
            audiences: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            refresh_every: DEFAULT_JWKS_REFRESH,
            user_claim: "sub".to_owned(),
        }
    }

    /// Reads the key set now, failing when it cannot be read or holds no usable key: call it at
    /// start so that a wrong URL or file stops the server instead of refusing every request.
    pub async fn load_keys(&self) -> Result<(), GateError> {
        self.inner
            .keys
            .load()
            .await
            .map_err(|why| GateError::Config(format!("the JWT key set: {why}")))
    }

    /// The principal of `head`'s bearer token; [`AuthError::Missing`] when it carries no token
    /// shaped like a JWT (so that an API key may be tried next).
    pub(crate) async fn verify(&self, head: &Parts) -> Result<Arc<Principal>, AuthError> {
        let token = bearer_token(head).ok_or(AuthError::Missing)?;
        if token.bytes().filter(|&byte| byte == b'.').count() != 2 {
            return Err(AuthError::Missing);
        }
        let header = jsonwebtoken::decode_header(token).map_err(refused)?;
        let key = self.inner.keys.key_for(header.kid.as_deref()).await?;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &key.validation)
            .map_err(refused)?;
        principal_of(&data.claims, &self.inner.user_claim).map(Arc::new)
    }
}

impl fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtAuthenticator")
            .field("user_claim", &self.inner.user_claim)
            .finish_non_exhaustive()
    }
}

/// What a refused token gets told: the kind of problem, never the token.
fn refused(error: jsonwebtoken::errors::Error) -> AuthError {
    let why = match error.kind() {
        ErrorKind::ExpiredSignature => "the token expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidAudience => "the token is for another audience",
        ErrorKind::InvalidIssuer => "the token comes from another issuer",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm is not allowed for its key"
        }
        ErrorKind::MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
        _ => "the token is malformed",
    };
    AuthError::Invalid(why.to_owned())
}

/// The principal the claims name.
fn principal_of(claims: &Map<String, Value>, user_claim: &str) -> Result<Principal, AuthError> {
    let text = |name: &str| {
        claims
            .get(name)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
    };
    let user = text(user_claim).ok_or_else(|| {
        AuthError::Invalid(format!(
            "the token has no `{user_claim}` claim naming its user"
        ))
    })?;
    let mut principal = Principal::new(text("sub").unwrap_or(user)).with_user_id(user);
    if let Some(scope) = text("scope") {
        principal = principal.with_scopes(scope.split_whitespace());
    }
    match claims.get("scp") {
        Some(Value::String(scp)) => principal = principal.with_scopes(scp.split_whitespace()),
        Some(Value::Array(scp)) => {
            principal = principal.with_scopes(scp.iter().filter_map(Value::as_str));
        }
        _ => {}
    }
    Ok(principal)
}

/// Builds a [`JwtAuthenticator`]; made by [`JwtAuthenticator::builder`].
#[must_use]
pub struct JwtAuthenticatorBuilder {
    source: Option<SourceChoice>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Duration,
    refresh_every: Duration,
    user_claim: String,
}

enum SourceChoice {
    Url(String),
    File(PathBuf),
    Secret(Vec<u8>),
}

impl JwtAuthenticatorBuilder {
    /// Verifies with the JSON Web Key Set served at `url` (an identity provider's `jwks_uri`).
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.source = Some(SourceChoice::Url(url.into()));
        self
    }

    /// Verifies with the JSON Web Key Set in the file at `path`.
    pub fn jwks_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.source = Some(SourceChoice::File(path.into()));
        self
    }

    /// Verifies HS256 tokens with the shared `secret` (at least 32 bytes) instead of a key set.
    pub fn hs256_secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.source = Some(SourceChoice::Secret(secret.into()));
        self
    }

    /// Accepts tokens whose `iss` is `issuer` (more than one may be given).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Accepts tokens whose `aud` names `audience` (more than one may be given).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// How far past `exp` (or before `nbf`) a token still passes; [`DEFAULT_LEEWAY`] by default.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How often a key set is read again; [`DEFAULT_JWKS_REFRESH`] by default.
    pub fn refresh_every(mut self, every: Duration) -> Self {
        self.refresh_every = every;
        self
    }

    /// The claim that names the principal's user (`email`, `preferred_username`); `sub` by
    /// default.
    pub fn user_claim(mut self, claim: impl Into<String>) -> Self {
        self.user_claim = claim.into();
        self
    }

    /// Builds the authenticator; fails without a key source, an issuer or an audience (a token
    /// another service's audience or another issuer was given must not pass here), or with a
    /// secret shorter than 32 bytes. The key set is read on first use, or by
    /// [`JwtAuthenticator::load_keys`].
    pub fn build(self) -> Result<JwtAuthenticator, GateError> {
        let source = match self.source {
            None => {
                return Err(GateError::Config(
                    "a JWT authenticator needs its keys: a JWKS URL, a JWKS file or an HS256 secret"
                        .to_owned(),
                ));
            }
            Some(SourceChoice::Url(url)) => Source::url(url).map_err(GateError::Config)?,
            Some(SourceChoice::File(path)) => Source::File(path),
            Some(SourceChoice::Secret(secret)) => {
                if secret.len() < 32 {
                    return Err(GateError::Config(
                        "an HS256 secret must be at least 32 bytes long".to_owned(),
                    ));
                }
                Source::Secret(secret)
            }
        };
        if self.issuers.is_empty() || self.audiences.is_empty() {
            return Err(GateError::Config(
                "a JWT authenticator needs the issuer and the audience its tokens must name \
                 (--jwt-issuer, --jwt-audience)"
                    .to_owned(),
            ));
        }
        let checks = Checks {
            issuers: self.issuers,
            audiences: self.audiences,
            leeway: self.leeway,
        };
        Ok(JwtAuthenticator {
            inner: Arc::new(Inner {
                keys: Keys::new(source, checks, self.refresh_every, REFETCH_AT_MOST_EVERY),
                user_claim: self.user_claim,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_principal_takes_its_user_and_scopes_from_the_claims() {
        let claims =
            json!({"sub": "auth0|1", "email": "ada@example.com", "scope": "a b", "scp": ["c"]});
        let claims = claims.as_object().unwrap();
        let principal = principal_of(claims, "email").unwrap();
        assert_eq!(principal.subject(), "auth0|1");
        assert_eq!(principal.user_id(), "ada@example.com");
        assert_eq!(principal.scopes(), ["a", "b", "c"]);
        assert!(principal_of(claims, "preferred_username").is_err());
    }

    #[test]
    fn a_builder_without_keys_issuer_or_audience_is_refused() {
        assert!(JwtAuthenticator::builder().build().is_err());
        let no_audience = JwtAuthenticator::builder()
            .hs256_secret(vec![7; 32])
            .issuer("i")
            .build();
        assert!(no_audience.is_err());
        let short = JwtAuthenticator::builder()
            .hs256_secret("short")
            .issuer("i")
            .audience("a")
            .build();
        assert!(short.is_err());
    }
}
