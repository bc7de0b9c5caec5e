//! Who is calling: the [`Principal`] an authenticator vouches for, and the [`Caller`] every
//! request carries past the gate, which says which users it may act for.

use std::fmt;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use http::request::Parts;

use crate::reply::error_response;

/// An authenticated caller: who the credential names (`subject`), the user id it acts as
/// (sessions, artifacts and runs belong to users), and the scopes it was granted.
///
/// ```
/// use adk_gate::Principal;
///
/// let principal = Principal::new("auth0|42")
///     .with_user_id("ada@example.com")
///     .with_scopes(["adk:run", "adk:admin"]);
/// assert_eq!(principal.subject(), "auth0|42");
/// assert_eq!(principal.user_id(), "ada@example.com");
/// assert!(principal.has_scope("adk:admin"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Principal {
    subject: String,
    user_id: String,
    scopes: Vec<String>,
}

impl Principal {
    /// A principal named `subject`, acting as the user of the same name, with no scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        let subject = subject.into();
        Self {
            user_id: subject.clone(),
            subject,
            scopes: Vec::new(),
        }
    }

    /// Acts as user `user_id` instead of the subject (a configured claim, such as `email`).
    pub fn with_user_id(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = user_id.into();
        self
    }

    /// Grants `scopes`, besides any granted before.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Who the credential names.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The user this principal acts as.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject)
            .field("user_id", &self.user_id)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// What the gate knows of a request's caller; every request that passed a gate carries one in its
/// extensions, and handlers take it as an extractor.
///
/// Without authentication configured every caller is *open* and may act for any user (a local
/// development server). With it, a caller is either a [`Principal`] (who acts for its own user,
/// and for every user when it holds the gate's admin scope) or, on the few public routes
/// (health, readiness, the dev UI's files, an agent card), *unauthenticated*, acting for no one.
///
/// A handler behind no gate gets a 500 instead of a caller: a missing gate fails closed.
#[derive(Clone, Debug)]
pub struct Caller {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Open,
    Unauthenticated,
    Principal {
        principal: Arc<Principal>,
        admin: bool,
    },
}

impl Caller {
    /// A caller of a server that authenticates no one: it may act for every user.
    pub fn open() -> Self {
        Self { kind: Kind::Open }
    }

    /// A caller that reached a public route of a server that authenticates: it acts for no one.
    pub fn unauthenticated() -> Self {
        Self {
            kind: Kind::Unauthenticated,
        }
    }

    /// An authenticated caller; `admin` lets it act for every user.
    pub fn authenticated(principal: Arc<Principal>, admin: bool) -> Self {
        Self {
            kind: Kind::Principal { principal, admin },
        }
    }

    /// The principal, when the caller was authenticated.
    pub fn principal(&self) -> Option<&Principal> {
        match &self.kind {
            Kind::Principal { principal, .. } => Some(principal),
            _ => None,
        }
    }

    /// The user an authenticated caller acts as.
    pub fn user_id(&self) -> Option<&str> {
        self.principal().map(Principal::user_id)
    }

    /// Whether the caller may act for every user: an open server's caller, or a principal with
    /// the admin scope.
    pub fn is_admin(&self) -> bool {
        match &self.kind {
            Kind::Open => true,
            Kind::Unauthenticated => false,
            Kind::Principal { admin, .. } => *admin,
        }
    }

    /// Whether the caller may read or change what belongs to user `user`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use adk_gate::{Caller, Principal};
    ///
    /// let ada = Caller::authenticated(Arc::new(Principal::new("ada")), false);
    /// assert!(ada.may_act_for("ada"));
    /// assert!(!ada.may_act_for("bob"));
    /// assert!(Caller::open().may_act_for("bob"));
    /// assert!(!Caller::unauthenticated().may_act_for("ada"));
    /// ```
    pub fn may_act_for(&self, user: &str) -> bool {
        match &self.kind {
            Kind::Open => true,
            Kind::Unauthenticated => false,
            Kind::Principal { principal, admin } => *admin || principal.user_id == user,
        }
    }

    /// `Ok` when the caller may act for `user`, else the 403 to answer.
    pub fn check_user(&self, user: &str) -> Result<(), Forbidden> {
        if self.may_act_for(user) {
            Ok(())
        } else {
            Err(Forbidden)
        }
    }
}

/// The answer to a caller acting for a user that is not its own: 403 `forbidden_user`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forbidden;

impl fmt::Display for Forbidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FORBIDDEN_USER)
    }
}

impl std::error::Error for Forbidden {}

/// The message of a [`Forbidden`] answer.
pub(crate) const FORBIDDEN_USER: &str = "the credentials do not allow acting for this user: a caller reaches only its own user's \
     sessions, artifacts and runs, unless it holds the admin scope";

impl IntoResponse for Forbidden {
    fn into_response(self) -> Response {
        error_response(StatusCode::FORBIDDEN, "forbidden_user", FORBIDDEN_USER)
    }
}

/// The rejection when a handler asks for a [`Caller`] that no gate put on the request.
#[derive(Debug, Clone, Copy)]
pub struct NoGate;

impl IntoResponse for NoGate {
    fn into_response(self) -> Response {
        tracing::error!("a handler that needs a caller was reached without passing a gate");
        error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_gate",
            "this route is not behind the server's gate; nothing was done",
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = NoGate;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Caller>().cloned().ok_or(NoGate)
    }
}
