//! Request extraction with the server's own errors: JSON bodies whose problems name the field
//! (400), bodies over the limit (413), and names from the path checked before they reach a service.

use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use bytes::Bytes;
use http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body of type `T`. A syntax error, a wrong type or a missing field is a 400 whose message
/// names the field and where it is; a body over the server's limit is a 413.
#[derive(Debug, Clone)]
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(body_rejection)?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// Parses a JSON body; an empty body reads as `null`, so an all-optional body may be left out.
pub(crate) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"null"
    } else {
        bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|error| ApiError::bad_request(format!("invalid JSON body: {error}")))
}

fn body_rejection(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "the request body is larger than the server accepts (ServerConfig::body_limit)",
        )
    } else {
        ApiError::bad_request(format!("cannot read the request body: {rejection}"))
    }
}

/// Checks a name that came from the request (an app, user, session or artifact name): not empty,
/// no `/` or `\`, not `.` or `..`, no NUL or other control character, at most 255 bytes.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), ApiError> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > 255 {
        Some("is longer than 255 bytes")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name == "." || name == ".." || name.contains("..") {
        Some("contains '..'")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ApiError::bad_request(format!(
            "{what} {name:?} {problem}; use a plain name"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_reach_outside_are_refused() {
        for bad in [
            "",
            "a/b",
            "a\\b",
            "..",
            ".",
            "a..b",
            "nul\0",
            "tab\t",
            "esc\u{1b}[2J",
        ] {
            let error = check_name("app", bad).unwrap_err();
            assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        }
        assert!(check_name("app", &"x".repeat(256)).is_err());
        for good in [
            "quickstart",
            "report.pdf",
            "user:notes.txt",
            "ünïcode",
            "a b",
        ] {
            check_name("artifact", good).unwrap();
        }
    }

    #[test]
    fn a_missing_field_is_named() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            user_id: String,
        }
        assert_eq!(
            parse_json::<Body>(br#"{"userId": "ada"}"#).unwrap().user_id,
            "ada"
        );
        let error = parse_json::<Body>(b"{}").unwrap_err();
        assert!(
            error.message().contains("missing field `userId`"),
            "{error:?}"
        );
        let error = parse_json::<Body>(b"{\"userId\": 1}").unwrap_err();
        assert!(error.message().contains("invalid type"), "{error:?}");
    }
}
