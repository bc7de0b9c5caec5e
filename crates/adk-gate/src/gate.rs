//! [`Gate`]: what every request passes before it reaches a route — the Host allow-list, the origin
//! check of state-changing requests, CORS, and authentication — and the [`Caller`] it leaves on
//! the request for the handlers.

use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
use http::header::{HOST, ORIGIN, RETRY_AFTER, WWW_AUTHENTICATE};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};

use crate::auth::{AuthError, Authentication};
use crate::error::GateError;
use crate::hosts::HostPolicy;
use crate::origins::OriginPolicy;
use crate::principal::Caller;
use crate::reply::error_response;

/// The gate in front of a server's routes.
///
/// Every request, whatever its method, must name an allowed host ([`HostPolicy`]; the loopback
/// names by default) or gets 403 `host_not_allowed`. A state-changing request (any method but
/// GET, HEAD and OPTIONS) from a foreign origin gets 403 `forbidden`. CORS answers the allowed
/// origins. With [`Authentication`], every route but the public ones needs credentials (401
/// `unauthorized` without them) and handlers get the principal as a [`Caller`]; without it every
/// caller is [`Caller::open`].
///
/// ```
/// use adk_gate::{ApiKeys, Authentication, Gate, Principal};
///
/// let gate = Gate::builder()
///     .allowed_host("api.example.com")
///     .allow_origin("https://console.example.com")
///     .authentication(
///         Authentication::new().api_keys(ApiKeys::new().key("k-1234567890", Principal::new("ci"))),
///     )
///     .admin_scope("adk:admin")
///     .public_path("/health")
///     .build()
///     .unwrap();
/// let router: axum::Router = gate.apply(axum::Router::new());
/// # let _ = router;
/// ```
#[derive(Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    hosts: HostPolicy,
    origins: Arc<OriginPolicy>,
    authentication: Authentication,
    admin_scope: Option<String>,
    public: Vec<PathRule>,
}

/// Paths that need no credentials.
#[derive(Debug, Clone)]
enum PathRule {
    Exact(String),
    Prefix(String),
    Suffix(String),
}

impl PathRule {
    fn matches(&self, path: &str) -> bool {
        match self {
            Self::Exact(exact) => path == exact,
            Self::Prefix(prefix) => path.starts_with(prefix.as_str()),
            Self::Suffix(suffix) => path.ends_with(suffix.as_str()),
        }
    }
}

impl Default for Gate {
    /// The loopback host names, no allowed foreign origin, no authentication.
    fn default() -> Self {
        Self {
            inner: Arc::new(Inner {
                hosts: HostPolicy::default(),
                origins: Arc::new(OriginPolicy::default()),
                authentication: Authentication::new(),
                admin_scope: None,
                public: Vec::new(),
            }),
        }
    }
}

impl Gate {
    /// Starts building a gate: the loopback host names, no foreign origin, no authentication.
    pub fn builder() -> GateBuilder {
        GateBuilder {
            hosts: HostPolicy::default(),
            origins: Vec::new(),
            authentication: Authentication::new(),
            admin_scope: None,
            public: Vec::new(),
        }
    }

    /// Whether the gate authenticates its callers.
    pub fn authenticates(&self) -> bool {
        !self.inner.authentication.is_empty()
    }

    /// The hosts it answers to.
    pub fn hosts(&self) -> &HostPolicy {
        &self.inner.hosts
    }

    /// The same gate, also answering to `host` (the address a server was bound to, say).
    pub fn with_host(&self, host: &str) -> Self {
        let mut inner = (*self.inner).clone();
        inner.hosts.add(host);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The same gate, with `path` public too.
    pub fn with_public_path(&self, path: &str) -> Self {
        let mut inner = (*self.inner).clone();
        inner.public.push(PathRule::Exact(path.to_owned()));
        Self {
            inner: Arc::new(inner),
        }
    }

    /// `router` behind the gate: the host check outermost, then CORS (which answers preflight
    /// requests, which carry no credentials), then the origin check and authentication.
    pub fn apply<S: Clone + Send + Sync + 'static>(&self, router: Router<S>) -> Router<S> {
        router
            .layer(from_fn_with_state(self.clone(), authenticate))
            .layer(self.inner.origins.cors())
            .layer(from_fn_with_state(self.clone(), check_host))
    }

    fn is_public(&self, path: &str) -> bool {
        self.inner.public.iter().any(|rule| rule.matches(path))
    }

    /// The caller of a request, or the answer that refuses it.
    async fn caller(&self, head: &Parts) -> Result<Caller, Response> {
        if !self.authenticates() {
            return Ok(Caller::open());
        }
        if self.is_public(head.uri.path()) {
            return Ok(Caller::unauthenticated());
        }
        match self.inner.authentication.authenticate(head).await {
            Ok(principal) => {
                let admin = self
                    .inner
                    .admin_scope
                    .as_deref()
                    .is_some_and(|scope| principal.has_scope(scope));
                Ok(Caller::authenticated(principal, admin))
            }
            Err(AuthError::Unavailable(why)) => {
                tracing::warn!("cannot authenticate a request: {why}");
                let mut response = error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "authentication_unavailable",
                    &AuthError::Unavailable(why).to_string(),
                );
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("5"));
                Err(response)
            }
            Err(error) => {
                let mut response =
                    error_response(StatusCode::UNAUTHORIZED, "unauthorized", &error.to_string());
                response
                    .headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                Err(response)
            }
        }
    }
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("hosts", &self.inner.hosts)
            .field("origins", &self.inner.origins)
            .field("authentication", &self.inner.authentication)
            .field("admin_scope", &self.inner.admin_scope)
            .field("public", &self.inner.public)
            .finish()
    }
}

/// The host a request was sent to: its `Host`, or the `:authority` of an HTTP/2 request.
pub fn request_host(head: &Parts) -> Option<&str> {
    head.headers
        .get(HOST)
        .and_then(|host| host.to_str().ok())
        .or_else(|| head.uri.authority().map(http::uri::Authority::as_str))
}

/// The outer middleware: 403 for a host the server does not answer to.
async fn check_host(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let (head, body) = request.into_parts();
    if !gate.inner.hosts.allows(request_host(&head)) {
        return error_response(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            "this server does not answer to the host this request names; add the name clients \
             reach it by with --allowed-hosts (ServerConfig::allowed_host)",
        );
    }
    next.run(Request::from_parts(head, body)).await
}

/// The inner middleware: 403 for a state-changing request from a foreign origin, then the caller
/// (or 401 / 503), put on the request for the handlers.
async fn authenticate(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let (mut head, body) = request.into_parts();
    if changes_state(&head.method)
        && !gate
            .inner
            .origins
            .allows(head.headers.get(ORIGIN), request_host(&head))
    {
        return error_response(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this request's Origin is not allowed; add it with --allow-origins \
             (ServerConfig::allow_origin)",
        );
    }
    let caller = match gate.caller(&head).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    head.extensions.insert(caller);
    next.run(Request::from_parts(head, body)).await
}

/// Whether a method changes state (and so is subject to the origin check).
fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Builds a [`Gate`]; made by [`Gate::builder`].
#[must_use]
#[derive(Debug)]
pub struct GateBuilder {
    hosts: HostPolicy,
    origins: Vec<String>,
    authentication: Authentication,
    admin_scope: Option<String>,
    public: Vec<PathRule>,
}

impl GateBuilder {
    /// Also answers to `host` (see [`HostPolicy::add`]: a name, `*.domain`, or `*` for any).
    pub fn allowed_host(mut self, host: impl AsRef<str>) -> Self {
        self.hosts.add(host.as_ref());
        self
    }

    /// Also answers to each of `hosts`.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for host in hosts {
            self.hosts.add(host.as_ref());
        }
        self
    }

    /// Allows cross-origin requests from `origin` (`https://host:port`), every origin a
    /// `regex:<pattern>` matches, or any origin with `*` (whose CORS answers never allow
    /// credentials).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into());
        self
    }

    /// Authenticates every request but the public routes with `authentication`.
    pub fn authentication(mut self, authentication: Authentication) -> Self {
        self.authentication = authentication;
        self
    }

    /// A principal granted `scope` may act for every user.
    pub fn admin_scope(mut self, scope: impl Into<String>) -> Self {
        self.admin_scope = Some(scope.into());
        self
    }

    /// `path` needs no credentials (its caller is [`Caller::unauthenticated`]).
    pub fn public_path(mut self, path: impl Into<String>) -> Self {
        self.public.push(PathRule::Exact(path.into()));
        self
    }

    /// Every path starting with `prefix` needs no credentials.
    pub fn public_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.public.push(PathRule::Prefix(prefix.into()));
        self
    }

    /// Every path ending with `suffix` (an agent card's path, say) needs no credentials.
    pub fn public_suffix(mut self, suffix: impl Into<String>) -> Self {
        self.public.push(PathRule::Suffix(suffix.into()));
        self
    }

    /// Builds the gate; fails on an origin pattern that is not a valid regex.
    pub fn build(self) -> Result<Gate, GateError> {
        Ok(Gate {
            inner: Arc::new(Inner {
                hosts: self.hosts,
                origins: Arc::new(OriginPolicy::new(&self.origins)?),
                authentication: self.authentication,
                admin_scope: self.admin_scope,
                public: self.public,
            }),
        })
    }
}
