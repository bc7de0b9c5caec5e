//! Who may call the server: the origin allow-list on state-changing requests (against DNS
//! rebinding and cross-site requests to a local dev server), CORS from the same list, and the
//! optional [`Authorizer`] hook with its bearer-token form.

use std::fmt;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{AUTHORIZATION, HOST, ORIGIN};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use regex_lite::Regex;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

use crate::error::{ApiError, ServerError};

/// Decides whether a request may reach the server's routes.
pub trait Authorizer: Send + Sync {
    /// `true` when the request described by `parts` may go on; otherwise it gets 401.
    fn authorize(&self, parts: &Parts) -> bool;
}

impl<F> Authorizer for F
where
    F: Fn(&Parts) -> bool + Send + Sync,
{
    fn authorize(&self, parts: &Parts) -> bool {
        self(parts)
    }
}

/// An [`Authorizer`] that wants `Authorization: Bearer <token>`, compared in constant time.
pub struct BearerToken {
    expected: String,
}

impl BearerToken {
    /// Wants `token`.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            expected: format!("Bearer {}", token.into()),
        }
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl Authorizer for BearerToken {
    fn authorize(&self, parts: &Parts) -> bool {
        let Some(given) = parts.headers.get(AUTHORIZATION) else {
            return false;
        };
        let (given, expected) = (given.as_bytes(), self.expected.as_bytes());
        // Length is not secret; the bytes are compared without an early exit.
        given.len() == expected.len()
            && given
                .iter()
                .zip(expected)
                .fold(0_u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }
}

/// The origins allowed to make cross-origin requests: literal origins, `regex:` patterns, or all.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    any: bool,
    literals: Vec<String>,
    patterns: Vec<Regex>,
}

impl OriginPolicy {
    pub(crate) fn new(origins: &[String]) -> Result<Self, ServerError> {
        let mut policy = Self {
            any: false,
            literals: Vec::new(),
            patterns: Vec::new(),
        };
        for origin in origins {
            if origin == "*" {
                policy.any = true;
            } else if let Some(pattern) = origin.strip_prefix("regex:") {
                let regex = Regex::new(&format!("^(?:{pattern})$")).map_err(|error| {
                    ServerError::Config(format!(
                        "allowed origin {origin:?} is not a valid regex: {error}"
                    ))
                })?;
                policy.patterns.push(regex);
            } else {
                policy
                    .literals
                    .push(origin.trim_end_matches('/').to_owned());
            }
        }
        Ok(policy)
    }

    /// Whether `origin` is on the list.
    fn lists(&self, origin: &str) -> bool {
        self.any
            || self.literals.iter().any(|literal| literal == origin)
            || self.patterns.iter().any(|pattern| pattern.is_match(origin))
    }

    /// Whether a request with these headers may change state: no `Origin`, the server's own
    /// origin (the `Origin` names the `Host` it was sent to), or a listed origin.
    fn allows(&self, origin: Option<&HeaderValue>, host: Option<&HeaderValue>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        if self.lists(origin) {
            return true;
        }
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        match (authority, host.and_then(|host| host.to_str().ok())) {
            (Some(authority), Some(host)) => authority.eq_ignore_ascii_case(host),
            _ => false,
        }
    }

    /// CORS answering the listed origins, with credentials, any method and any header.
    pub(crate) fn cors(self: &Arc<Self>) -> CorsLayer {
        let policy = self.clone();
        CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin.to_str().is_ok_and(|origin| policy.lists(origin))
            }))
            .allow_methods(AllowMethods::mirror_request())
            .allow_headers(AllowHeaders::mirror_request())
            .allow_credentials(true)
    }
}

/// Whether a method changes state (and so is subject to the origin check).
fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The middleware: 403 for a state-changing request from an origin that is not allowed, 401 for a
/// request the authorizer refuses (except `/health` and the dev UI's files).
pub(crate) async fn guard(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    if changes_state(&parts.method)
        && !guard
            .origins
            .allows(parts.headers.get(ORIGIN), parts.headers.get(HOST))
    {
        return ApiError::forbidden(
            "this request's Origin is not allowed; add it with --allow-origins (ServerConfig::allow_origin)",
        )
        .into_response();
    }
    let path = parts.uri.path();
    let public = path == "/health" || path == "/ready" || path.starts_with("/dev-ui");
    if let Some(authorizer) = &guard.authorizer
        && !public
        && !authorizer.authorize(&parts)
    {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this server wants credentials (Authorization: Bearer <token>)",
        )
        .into_response();
    }
    next.run(Request::from_parts(parts, body)).await
}

/// What [`guard`] checks against.
pub(crate) struct Guard {
    pub(crate) origins: Arc<OriginPolicy>,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> HeaderValue {
        HeaderValue::from_str(value).unwrap()
    }

    #[test]
    fn origins_are_allowed_by_list_pattern_or_sameness() {
        let policy = OriginPolicy::new(&[
            "https://ui.example.com/".to_owned(),
            "regex:https://[a-z]+\\.corp\\.example".to_owned(),
        ])
        .unwrap();
        let host = header("127.0.0.1:8000");
        assert!(policy.allows(None, Some(&host)));
        assert!(policy.allows(Some(&header("http://127.0.0.1:8000")), Some(&host)));
        assert!(policy.allows(Some(&header("https://ui.example.com")), Some(&host)));
        assert!(policy.allows(Some(&header("https://dev.corp.example")), Some(&host)));
        assert!(!policy.allows(Some(&header("https://dev.corp.example.evil")), Some(&host)));
        assert!(!policy.allows(Some(&header("http://evil.example")), Some(&host)));
        assert!(!policy.allows(Some(&header("http://127.0.0.1:9999")), Some(&host)));
        assert!(OriginPolicy::new(&["regex:(".to_owned()]).is_err());
    }

    #[test]
    fn a_bearer_token_must_match_exactly() {
        let token = BearerToken::new("s3cret");
        let parts = |value: Option<&str>| {
            let mut builder = http::Request::builder();
            if let Some(value) = value {
                builder = builder.header(AUTHORIZATION, value);
            }
            builder.body(()).unwrap().into_parts().0
        };
        assert!(token.authorize(&parts(Some("Bearer s3cret"))));
        assert!(!token.authorize(&parts(Some("Bearer s3cre"))));
        assert!(!token.authorize(&parts(Some("Bearer s3cretx"))));
        assert!(!token.authorize(&parts(None)));
        assert_eq!(format!("{token:?}"), "BearerToken(<redacted>)");
    }
}
