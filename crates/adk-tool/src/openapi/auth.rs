//! Authentication of OpenAPI calls: the document's security schemes, the [`Credential`]s the
//! application gives for them, and [`AuthHeaders`], the hook for any other way of signing a call.

use std::collections::HashMap;
use std::fmt;

use adk_core::Result;
use async_trait::async_trait;
use base64::Engine as _;
use serde_json::Value;

use super::spec::{OpenApiSpec, Place};
use super::{OpenApiError, OperationInfo};
use crate::ToolContext;
use crate::oauth2::OAuth2Auth;

/// A secret for one of the document's security schemes, given with
/// [`OpenApiToolsetBuilder::credential`](super::OpenApiToolsetBuilder::credential).
///
/// Its `Debug` output never shows the secret.
///
/// ```
/// use adk_tool::openapi::Credential;
///
/// let key = Credential::api_key("s3cret");
/// assert_eq!(format!("{key:?}"), "Credential::ApiKey([REDACTED])");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum Credential {
    /// The value of an `apiKey` scheme, sent where the scheme says (header, query or cookie).
    ApiKey(String),
    /// A token sent as `Authorization: Bearer <token>`, for `http` `bearer`, `oauth2` and
    /// `openIdConnect` schemes.
    Bearer(String),
    /// A user name and password sent as `Authorization: Basic ...`, for `http` `basic` schemes.
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: String,
    },
    /// An OAuth2 access token got for each call (the user signed in through ADK's credential
    /// round trip, or the client credentials grant), sent as `Authorization: Bearer <token>`,
    /// for `http` `bearer`, `oauth2` and `openIdConnect` schemes.
    OAuth2(OAuth2Auth),
}

impl Credential {
    /// An API key.
    pub fn api_key(key: impl Into<String>) -> Self {
        Self::ApiKey(key.into())
    }

    /// A bearer token (an OAuth2 access token, say).
    pub fn bearer(token: impl Into<String>) -> Self {
        Self::Bearer(token.into())
    }

    /// HTTP basic credentials.
    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::Basic {
            username: username.into(),
            password: password.into(),
        }
    }

    /// Tokens from OAuth2 (see [`crate::oauth2`]).
    pub fn oauth2(auth: OAuth2Auth) -> Self {
        Self::OAuth2(auth)
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::ApiKey(_) => "ApiKey",
            Self::Bearer(_) => "Bearer",
            Self::Basic { .. } => "Basic",
            Self::OAuth2(_) => "OAuth2",
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential::{}([REDACTED])", self.kind())
    }
}

/// Adds headers to every call of an OpenAPI toolset's tools: for a signature, a per-user token
/// read from the session, or anything the document's security schemes do not describe.
///
/// ```
/// use adk_tool::openapi::{AuthHeaders, OperationInfo};
/// use adk_tool::ToolContext;
///
/// struct TenantHeader;
///
/// #[async_trait::async_trait]
/// impl AuthHeaders for TenantHeader {
///     async fn headers(
///         &self,
///         ctx: &ToolContext,
///         _operation: &OperationInfo,
///     ) -> adk_core::Result<Vec<(String, String)>> {
///         let tenant = ctx.state("user:tenant").and_then(|v| v.as_str().map(str::to_owned));
///         Ok(tenant.map(|t| ("X-Tenant".to_owned(), t)).into_iter().collect())
///     }
/// }
/// ```
#[async_trait]
pub trait AuthHeaders: Send + Sync {
    /// The headers to add to a call of `operation`, as (name, value) pairs. An error stops the
    /// call and is what the model reads.
    async fn headers(
        &self,
        ctx: &ToolContext,
        operation: &OperationInfo,
    ) -> Result<Vec<(String, String)>>;
}

/// Where an `apiKey` scheme puts its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyPlace {
    Header,
    Query,
    Cookie,
}

/// A security scheme of the document, as far as a call needs it.
#[derive(Debug, Clone)]
enum Scheme {
    ApiKey { name: String, place: KeyPlace },
    Bearer,
    Basic,
}

/// What a credential adds to one request.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) cookies: Vec<(String, String)>,
    /// The OAuth2 tokens to get for the call, each sent as a bearer token.
    pub(crate) oauth2: Vec<OAuth2Auth>,
}

/// The document's schemes matched with the application's credentials, checked once at build.
#[derive(Debug, Default)]
pub(crate) struct Credentials {
    by_scheme: HashMap<String, (Scheme, Credential)>,
}

impl Credentials {
    /// Matches `given` with the schemes of `spec`: a credential for a scheme the document does
    /// not define, or of the wrong kind, is refused by name.
    pub(crate) fn new(
        spec: &OpenApiSpec,
        given: Vec<(String, Credential)>,
    ) -> std::result::Result<Self, OpenApiError> {
        let schemes_place = Place::root().key("components").key("securitySchemes");
        let mut by_scheme = HashMap::with_capacity(given.len());
        for (name, credential) in given {
            let place = schemes_place.key(&name);
            let Some(scheme) = spec.root.pointer(&format!(
                "/components/securitySchemes/{}",
                name.replace('~', "~0").replace('/', "~1")
            )) else {
                return Err(spec.error(
                    &place,
                    format!("is not defined, yet a credential was given for the scheme `{name}`"),
                ));
            };
            let scheme = read_scheme(spec, &spec.resolve(scheme, &place)?, &place)?;
            let fits = matches!(
                (&scheme, &credential),
                (Scheme::ApiKey { .. }, Credential::ApiKey(_))
                    | (
                        Scheme::Bearer,
                        Credential::Bearer(_) | Credential::OAuth2(_)
                    )
                    | (Scheme::Basic, Credential::Basic { .. })
            );
            if !fits {
                return Err(spec.error(
                    &place,
                    format!(
                        "is a {} scheme, and the credential given for it is {}",
                        scheme.kind(),
                        credential.kind()
                    ),
                ));
            }
            by_scheme.insert(name, (scheme, credential));
        }
        Ok(Self { by_scheme })
    }

    /// What to add for the first of `security`'s alternatives whose schemes all have
    /// credentials; `None` when none has (an empty `security` needs nothing).
    pub(crate) fn apply(&self, security: &[Vec<String>]) -> Option<Applied> {
        if security.is_empty() {
            return Some(Applied::default());
        }
        let alternative = security.iter().find(|alternative| {
            alternative
                .iter()
                .all(|scheme| self.by_scheme.contains_key(scheme))
        })?;
        let mut applied = Applied::default();
        for name in alternative {
            let (scheme, credential) = &self.by_scheme[name];
            match (scheme, credential) {
                (Scheme::ApiKey { name, place }, Credential::ApiKey(key)) => {
                    let pair = (name.clone(), key.clone());
                    match place {
                        KeyPlace::Header => applied.headers.push(pair),
                        KeyPlace::Query => applied.query.push(pair),
                        KeyPlace::Cookie => applied.cookies.push(pair),
                    }
                }
                (Scheme::Bearer, Credential::OAuth2(auth)) => applied.oauth2.push(auth.clone()),
                (Scheme::Bearer, Credential::Bearer(token)) => applied
                    .headers
                    .push(("Authorization".to_owned(), format!("Bearer {token}"))),
                (Scheme::Basic, Credential::Basic { username, password }) => {
                    let encoded = base64::engine::general_purpose::STANDARD
                        .encode(format!("{username}:{password}"));
                    applied
                        .headers
                        .push(("Authorization".to_owned(), format!("Basic {encoded}")));
                }
                // `new` admits only credentials that fit their scheme.
                _ => return None,
            }
        }
        Some(applied)
    }
}

impl Scheme {
    fn kind(&self) -> &'static str {
        match self {
            Self::ApiKey { .. } => "apiKey",
            Self::Bearer => "bearer-token",
            Self::Basic => "HTTP basic",
        }
    }
}

fn read_scheme(
    spec: &OpenApiSpec,
    scheme: &Value,
    place: &Place,
) -> std::result::Result<Scheme, OpenApiError> {
    let text = |key: &str| scheme.get(key).and_then(Value::as_str);
    match text("type") {
        Some("apiKey") => {
            let name = text("name").ok_or_else(|| {
                spec.error(&place.key("name"), "is missing or not a string".to_owned())
            })?;
            let key_place = match text("in") {
                Some("header") => KeyPlace::Header,
                Some("query") => KeyPlace::Query,
                Some("cookie") => KeyPlace::Cookie,
                _ => {
                    return Err(spec.error(
                        &place.key("in"),
                        "is not one of header, query or cookie".to_owned(),
                    ));
                }
            };
            Ok(Scheme::ApiKey {
                name: name.to_owned(),
                place: key_place,
            })
        }
        Some("http") => match text("scheme").map(str::to_ascii_lowercase).as_deref() {
            Some("bearer") => Ok(Scheme::Bearer),
            Some("basic") => Ok(Scheme::Basic),
            other => Err(spec.error(
                &place.key("scheme"),
                format!(
                    "HTTP scheme {other:?} is not supported (bearer and basic are); sign its \
                     calls with `AuthHeaders`"
                ),
            )),
        },
        Some("oauth2" | "openIdConnect") => Ok(Scheme::Bearer),
        other => Err(spec.error(
            &place.key("type"),
            format!(
                "{other:?} is not a security scheme type credentials can be given for; sign its \
                 calls with `AuthHeaders`"
            ),
        )),
    }
}
