//! The origin allow-list of state-changing requests (against cross-site requests from a web page
//! the user opens) and the CORS answers built from the same list.

use std::sync::Arc;

use http::HeaderValue;
use regex_lite::Regex;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

use crate::error::GateError;

/// The origins allowed to make cross-origin requests: literal origins
/// (`https://console.example.com`), `regex:` patterns (anchored at both ends), or any (`*`).
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    any: bool,
    literals: Vec<String>,
    patterns: Vec<Regex>,
}

impl OriginPolicy {
    /// The policy of `origins`; fails on a pattern that is not a valid regex.
    pub fn new<I, S>(origins: I) -> Result<Self, GateError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut policy = Self::default();
        for origin in origins {
            let origin = origin.as_ref();
            if origin == "*" {
                policy.any = true;
            } else if let Some(pattern) = origin.strip_prefix("regex:") {
                let regex = Regex::new(&format!("^(?:{pattern})$")).map_err(|error| {
                    GateError::Config(format!(
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
    pub fn lists(&self, origin: &str) -> bool {
        self.any
            || self.literals.iter().any(|literal| literal == origin)
            || self.patterns.iter().any(|pattern| pattern.is_match(origin))
    }

    /// Whether a state-changing request with this `Origin` (if any) sent to `host` may go on: no
    /// `Origin` (curl, another server), the server's own origin (the origin names the host the
    /// request went to; the host itself is checked against the host allow-list first), or a listed
    /// origin.
    ///
    /// ```
    /// use adk_gate::OriginPolicy;
    /// use http::HeaderValue;
    ///
    /// let policy = OriginPolicy::new(["https://ui.example.com"]).unwrap();
    /// let origin = |text| HeaderValue::from_static(text);
    /// assert!(policy.allows(None, Some("127.0.0.1:8000")));
    /// assert!(policy.allows(Some(&origin("http://127.0.0.1:8000")), Some("127.0.0.1:8000")));
    /// assert!(policy.allows(Some(&origin("https://ui.example.com")), Some("127.0.0.1:8000")));
    /// assert!(!policy.allows(Some(&origin("http://evil.example")), Some("127.0.0.1:8000")));
    /// ```
    pub fn allows(&self, origin: Option<&HeaderValue>, host: Option<&str>) -> bool {
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
        match (authority, host) {
            (Some(authority), Some(host)) => authority.eq_ignore_ascii_case(host),
            _ => false,
        }
    }

    /// CORS answering the listed origins, any method and any header. Listed origins are answered
    /// with credentials allowed; `*` is answered as `*`, never with credentials, so that no page
    /// of any origin can make a credentialed request read its answer.
    pub fn cors(self: &Arc<Self>) -> CorsLayer {
        let layer = CorsLayer::new()
            .allow_methods(AllowMethods::mirror_request())
            .allow_headers(AllowHeaders::mirror_request());
        if self.any {
            return layer.allow_origin(AllowOrigin::any());
        }
        let policy = self.clone();
        layer
            .allow_origin(AllowOrigin::predicate(move |origin, _| {
                origin.to_str().is_ok_and(|origin| policy.lists(origin))
            }))
            .allow_credentials(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> HeaderValue {
        HeaderValue::from_str(value).unwrap()
    }

    #[test]
    fn origins_are_allowed_by_list_pattern_or_sameness() {
        let policy = OriginPolicy::new([
            "https://ui.example.com/",
            "regex:https://[a-z]+\\.corp\\.example",
        ])
        .unwrap();
        let host = Some("127.0.0.1:8000");
        assert!(policy.allows(None, host));
        assert!(policy.allows(Some(&header("http://127.0.0.1:8000")), host));
        assert!(policy.allows(Some(&header("https://ui.example.com")), host));
        assert!(policy.allows(Some(&header("https://dev.corp.example")), host));
        assert!(!policy.allows(Some(&header("https://dev.corp.example.evil")), host));
        assert!(!policy.allows(Some(&header("http://evil.example")), host));
        assert!(!policy.allows(Some(&header("http://127.0.0.1:9999")), host));
        assert!(OriginPolicy::new(["regex:("]).is_err());
    }
}
