//! HTTP answers in ADK's JSON error shape (`{"error": code, "detail": message}`), which both the
//! JSON-RPC endpoint and task admission send when a request is refused before any JSON-RPC reply.

use std::time::Duration;

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::json;

/// An HTTP error in ADK's JSON shape.
pub(super) fn http_error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({"error": code, "detail": message}))).into_response()
}

/// 503 with `Retry-After` (whole seconds, at least one), for a server that is full for now.
pub(super) fn unavailable(after: Duration, code: &str, message: &str) -> Response {
    let mut response = http_error(StatusCode::SERVICE_UNAVAILABLE, code, message);
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from(after.as_secs().max(1)),
    );
    response
}
