//! JSON bodies with the server's own errors: a problem names the field (400), and the body is read
//! under the server's body limits (see [`ServerState::read_body`]).

use std::sync::Arc;

use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::state::ServerState;

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

#[cfg(test)]
mod tests {
    use super::*;

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
