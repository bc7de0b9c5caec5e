//! What the adapters of non-Gemini wires share when they translate parts: a function response's
//! result as text, the answer given to a call left without one, the image types the providers
//! take, and the arguments text of a call read back as an object.

use adk_core::FunctionResponse;
use serde_json::{Map, Value};

/// What a call that never got its response answers in the request: the non-Gemini APIs refuse a
/// request whose tool calls are not each answered.
pub(crate) const INTERRUPTED_CALL_RESULT: &str = "{\"error\":\"This tool call was interrupted \
     before it gave a result (the run was cancelled or failed); it may or may not have taken \
     effect.\"}";

/// The MIME types the providers take as images.
pub(crate) const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Whether `mime_type` is one of [`IMAGE_TYPES`], ignoring case.
pub(crate) fn is_image(mime_type: &str) -> bool {
    IMAGE_TYPES
        .iter()
        .any(|image| image.eq_ignore_ascii_case(mime_type))
}

/// The result of a function response as the text a provider carries: ADK wraps a result that is
/// not an object as `{"result": ...}`, and such a result is sent as itself (a string as the
/// string, anything else as JSON text); any other object is sent as JSON text.
pub(crate) fn result_text(response: &FunctionResponse) -> String {
    match (response.response.len(), response.response.get("result")) {
        (1, Some(Value::String(text))) => text.clone(),
        (1, Some(value)) => value.to_string(),
        _ => Value::Object(response.response.clone()).to_string(),
    }
}

/// Whether a function response reports a failure: ADK's tools answer `{"error": ...}` alone.
#[cfg(feature = "anthropic")]
pub(crate) fn is_error_result(response: &FunctionResponse) -> bool {
    response.response.len() == 1 && response.response.contains_key("error")
}

/// Whether `uri` is an `http`, `https` or `data` URL, which providers can fetch or read.
pub(crate) fn is_web_or_data_url(uri: &str) -> bool {
    ["http://", "https://", "data:"].iter().any(|scheme| {
        uri.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    })
}

/// The arguments of a streamed call, once all of its pieces arrived: an empty text is no
/// arguments, anything else must be a JSON object. `None` when it is not, which a stream cut off
/// mid-arguments gives: such a call must not reach a tool.
pub(crate) fn streamed_arguments(text: &str) -> Option<Map<String, Value>> {
    if text.trim().is_empty() {
        return Some(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(args)) => Some(args),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_are_unwrapped_and_errors_recognised() {
        let text = FunctionResponse::new("f", json!("Paris"));
        assert_eq!(result_text(&text), "Paris");
        let number = FunctionResponse::new("f", json!(7));
        assert_eq!(result_text(&number), "7");
        let object = FunctionResponse::new("f", json!({"city": "Paris", "sky": "sunny"}));
        assert_eq!(result_text(&object), r#"{"city":"Paris","sky":"sunny"}"#);
        #[cfg(feature = "anthropic")]
        {
            let error = FunctionResponse::new("f", json!({"error": "no"}));
            assert!(is_error_result(&error));
            assert!(!is_error_result(&object));
        }
    }

    #[test]
    fn streamed_arguments_must_be_a_whole_object() {
        assert_eq!(streamed_arguments(""), Some(Map::new()));
        assert_eq!(streamed_arguments("{\"a\":1}").unwrap()["a"], 1);
        assert_eq!(streamed_arguments("{\"a\":"), None);
        assert_eq!(streamed_arguments("[1]"), None);
        assert!(is_image("IMAGE/PNG") && !is_image("application/pdf"));
        assert!(is_web_or_data_url("HTTPS://x") && !is_web_or_data_url("gs://b/x"));
    }
}
