//! The answers the gate gives in place of a route's: ADK's JSON error shape,
//! `{"error": code, "detail": message}`, which the dev UI and ADK clients show.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::json;

/// A JSON error answer.
pub(crate) fn error_response(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"error": code, "detail": message})),
    )
        .into_response()
}
