//! Authentication: the [`Authenticator`] trait that turns a request's head into a [`Principal`],
//! the built-in authenticators ([`JwtAuthenticator`], [`ApiKeys`]), and [`Authentication`], the
//! list a gate tries in order.

mod api_keys;
mod jwks;
mod jwt;

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use http::header::AUTHORIZATION;
use http::request::Parts;

pub use api_keys::{API_KEY_HEADER, ApiKeys};
pub use jwt::{DEFAULT_JWKS_REFRESH, DEFAULT_LEEWAY, JwtAuthenticator, JwtAuthenticatorBuilder};

use crate::principal::Principal;

/// Why a request could not be authenticated. The messages never quote the credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The request carries no credentials this authenticator reads: 401, and the next
    /// authenticator of an [`Authentication`] is asked.
    #[error("no credentials this server accepts: send Authorization: Bearer <token>")]
    Missing,
    /// The credentials were refused (a bad signature, an expired token, an unknown key): 401.
    #[error("the credentials were refused: {0}")]
    Invalid(String),
    /// The credentials cannot be checked now (the key set cannot be fetched and none is cached):
    /// 503, so that the client retries.
    #[error("the credentials cannot be checked now: {0}")]
    Unavailable(String),
}

/// Turns a request's head into the principal it authenticates.
///
/// Implement it for a scheme the built-ins do not cover (a session cookie, mutual TLS behind a
/// proxy that forwards the client's certificate); a gate calls it for every request but its
/// public routes. A closure `Fn(&Parts) -> Result<Principal, AuthError>` is one:
///
/// ```
/// use adk_gate::{AuthError, Authentication, Principal};
/// use http::request::Parts;
///
/// let from_proxy = |head: &Parts| match head.headers.get("x-verified-user") {
///     Some(user) => Ok(Principal::new(user.to_str().map_err(|_| AuthError::Missing)?)),
///     None => Err(AuthError::Missing),
/// };
/// let authentication = Authentication::new().custom(from_proxy);
/// # let _ = authentication;
/// ```
pub trait Authenticator: Send + Sync + 'static {
    /// The principal `head` authenticates, or why it does not.
    fn authenticate<'a>(
        &'a self,
        head: &'a Parts,
    ) -> BoxFuture<'a, Result<Arc<Principal>, AuthError>>;
}

impl<F> Authenticator for F
where
    F: Fn(&Parts) -> Result<Principal, AuthError> + Send + Sync + 'static,
{
    fn authenticate<'a>(
        &'a self,
        head: &'a Parts,
    ) -> BoxFuture<'a, Result<Arc<Principal>, AuthError>> {
        let result = self(head).map(Arc::new);
        Box::pin(std::future::ready(result))
    }
}

/// One way to authenticate. The built-ins are called directly, so a request pays for no boxed
/// future unless a custom authenticator runs.
#[derive(Clone)]
enum Method {
    Jwt(JwtAuthenticator),
    ApiKeys(ApiKeys),
    Custom(Arc<dyn Authenticator>),
}

/// The authenticators a gate tries, in the order given: the first that finds its kind of
/// credential decides (a refused credential is not passed on to the next one).
///
/// ```
/// use adk_gate::{ApiKeys, Authentication, Principal};
///
/// let keys = ApiKeys::new().key("s3cret-key-for-ci", Principal::new("ci"));
/// let authentication = Authentication::new().api_keys(keys);
/// assert!(!authentication.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct Authentication {
    methods: Vec<Method>,
}

impl Authentication {
    /// No authenticator yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts JWT bearer tokens checked by `jwt`.
    pub fn jwt(mut self, jwt: JwtAuthenticator) -> Self {
        self.methods.push(Method::Jwt(jwt));
        self
    }

    /// Accepts the static API keys of `keys`.
    pub fn api_keys(mut self, keys: ApiKeys) -> Self {
        self.methods.push(Method::ApiKeys(keys));
        self
    }

    /// Accepts what `authenticator` accepts.
    pub fn custom(mut self, authenticator: impl Authenticator) -> Self {
        self.methods.push(Method::Custom(Arc::new(authenticator)));
        self
    }

    /// Accepts what the shared `authenticator` accepts.
    pub fn custom_shared(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.methods.push(Method::Custom(authenticator));
        self
    }

    /// Whether no authenticator was added: such a gate authenticates no one.
    pub fn is_empty(&self) -> bool {
        self.methods.is_empty()
    }

    /// The principal of `head`: the first authenticator that finds its kind of credential
    /// decides; when none does, [`AuthError::Missing`].
    pub async fn authenticate(&self, head: &Parts) -> Result<Arc<Principal>, AuthError> {
        for method in &self.methods {
            let result = match method {
                Method::Jwt(jwt) => jwt.verify(head).await,
                Method::ApiKeys(keys) => keys.verify(head),
                Method::Custom(custom) => custom.authenticate(head).await,
            };
            match result {
                Err(AuthError::Missing) => continue,
                decided => return decided,
            }
        }
        Err(AuthError::Missing)
    }
}

impl fmt::Debug for Authentication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .methods
            .iter()
            .map(|method| match method {
                Method::Jwt(_) => "jwt",
                Method::ApiKeys(_) => "api_keys",
                Method::Custom(_) => "custom",
            })
            .collect();
        f.debug_tuple("Authentication").field(&names).finish()
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case), if there is one.
pub(crate) fn bearer_token(head: &Parts) -> Option<&str> {
    let value = head.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(authorization: Option<&str>) -> Parts {
        let mut builder = http::Request::builder();
        if let Some(value) = authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_bearer_token_is_read_in_any_case_of_the_scheme() {
        assert_eq!(bearer_token(&head(Some("Bearer abc"))), Some("abc"));
        assert_eq!(bearer_token(&head(Some("bearer  abc "))), Some("abc"));
        assert_eq!(bearer_token(&head(Some("Basic abc"))), None);
        assert_eq!(bearer_token(&head(Some("Bearer "))), None);
        assert_eq!(bearer_token(&head(None)), None);
    }

    #[tokio::test]
    async fn the_first_authenticator_that_finds_its_credential_decides() {
        let refuses = |_: &Parts| Err(AuthError::Invalid("no".to_owned()));
        let accepts = |_: &Parts| Ok(Principal::new("ada"));
        let missing = |_: &Parts| Err(AuthError::Missing);
        let head = head(None);
        let chain = Authentication::new().custom(missing).custom(accepts);
        assert_eq!(chain.authenticate(&head).await.unwrap().user_id(), "ada");
        let chain = Authentication::new().custom(refuses).custom(accepts);
        assert!(matches!(
            chain.authenticate(&head).await,
            Err(AuthError::Invalid(_))
        ));
        assert_eq!(
            Authentication::new().authenticate(&head).await,
            Err(AuthError::Missing)
        );
    }
}
