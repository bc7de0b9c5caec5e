//! Request extraction with the server's own errors: JSON bodies whose problems name the field
//! (400), read under the server's body limits (413 past the size limit, 503 when the bytes of all
//! bodies being read would pass the budget, 408 when a body trickles in too slowly), and names
//! from the path checked before they reach a service.

use std::sync::Arc;

use adk_gate::BodyError;
use axum::extract::{FromRequest, Request};
use bytes::Bytes;
use http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::server::ServerState;

impl ServerState {
    /// Reads a request's body with the server's [`BodyReader`](adk_gate::BodyReader): its size
    /// limit, the bytes of all bodies at once, the time one may take. The bytes stay counted
    /// until the reservation is dropped.
    pub(crate) async fn read_body(
        &self,
        request: Request,
    ) -> Result<(Bytes, adk_gate::BodyReservation), ApiError> {
        self.bodies
            .read(request)
            .await
            .map_err(|error| self.body_error(error))
    }

    fn body_error(&self, error: BodyError) -> ApiError {
        match error {
            BodyError::TooLarge { .. } => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the server accepts (ServerConfig::body_limit)",
            ),
            BodyError::Busy { .. } => ApiError::unavailable(
                "too_many_bytes",
                format!("{error} (ServerConfig::body_budget)"),
                self.retry_after,
            ),
            BodyError::Timeout { .. } => ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!("{error} (ServerConfig::body_read_timeout)"),
            ),
            error => ApiError::bad_request(error.to_string()),
        }
    }
}

/// A JSON body of type `T`. A syntax error, a wrong type or a missing field is a 400 whose message
/// names the field and where it is; a body over the server's limit is a 413.
#[derive(Debug, Clone)]
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<T> FromRequest<Arc<ServerState>> for JsonBody<T>
where
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(
        request: Request,
        state: &Arc<ServerState>,
    ) -> Result<Self, Self::Rejection> {
        let (bytes, _reservation) = state.read_body(request).await?;
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
