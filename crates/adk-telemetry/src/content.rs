//! Whether spans carry message content: model requests and responses, tool arguments and results.
//!
//! Content may hold secrets and personal data, so it is off by default. It is turned on for the
//! process by [`set_capture_message_content`], or by the standard environment variable
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` when no setting was made.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use adk_core::{LlmRequest, LlmResponse};
use serde_json::Value;

/// The environment variable that turns content capture on (`true`) when no setting was made.
pub const CAPTURE_MESSAGE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

const UNSET: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

static SETTING: AtomicU8 = AtomicU8::new(UNSET);
static FROM_ENV: OnceLock<bool> = OnceLock::new();

/// Turns the recording of message content on or off for the whole process, overriding
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`.
pub fn set_capture_message_content(enabled: bool) {
    SETTING.store(if enabled { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether spans record message content: the setting if one was made, else the environment
/// variable (read once), else off.
pub fn capture_message_content() -> bool {
    match SETTING.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => *FROM_ENV.get_or_init(|| {
            std::env::var(CAPTURE_MESSAGE_CONTENT_ENV)
                .is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"))
        }),
    }
}

/// The request as JSON for a span, without inline bytes (images, audio), which would bloat the
/// trace and are rarely readable.
pub(crate) fn request_json(request: &LlmRequest) -> String {
    let mut value = serde_json::to_value(request).unwrap_or(Value::Null);
    drop_inline_data(&mut value);
    value.to_string()
}

/// The response as JSON for a span, without inline bytes.
pub(crate) fn response_json(response: &LlmResponse) -> String {
    let mut value = serde_json::to_value(response).unwrap_or(Value::Null);
    drop_inline_data(&mut value);
    value.to_string()
}

fn drop_inline_data(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("inlineData");
            map.values_mut().for_each(drop_inline_data);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_inline_data),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, Part, Role};

    use super::*;

    #[test]
    fn inline_bytes_are_left_out_of_recorded_requests() {
        let image = Part::inline_data("image/png", vec![1, 2, 3]);
        let request = LlmRequest::new(
            "gemini",
            vec![Content::new(Role::User, [Part::text("look"), image])],
        );
        let json = request_json(&request);
        assert!(json.contains("look"), "{json}");
        assert!(!json.contains("inlineData"), "{json}");
    }
}
