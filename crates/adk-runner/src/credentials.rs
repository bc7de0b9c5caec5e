//! Credentials a client sends in answer to the flow's `adk_request_credential` requests are kept
//! out of storage: the stored user event holds a redacted copy, while the invocation's own copy
//! of the session keeps the secret for the call it resumes (which puts it in `temp:` state, never
//! stored either).

use adk_core::{Event, PartData};
use serde_json::Value;

/// The function the flow calls to ask the user for a tool's credentials.
const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// The fields of an answer that carry the credential itself.
const CREDENTIAL_FIELDS: [&str; 2] = ["exchangedAuthCredential", "rawAuthCredential"];

/// What replaces every secret value in a stored credential.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// Keys of a credential that name its kind rather than hold a secret, kept as they are so that the
/// stored event still says what kind of credential the user gave.
const DESCRIPTIVE_KEYS: [&str; 3] = ["authType", "auth_type", "scheme"];

/// Whether `event` holds an answer to a credential request, so that storing it needs redaction.
pub(crate) fn holds_credentials(event: &Event) -> bool {
    event
        .function_responses()
        .any(|response| response.name == REQUEST_CREDENTIAL_FUNCTION)
}

/// Replaces the secrets of every credential answer in `event` with [`REDACTED`].
pub(crate) fn redact(event: &mut Event) {
    let Some(content) = event.response.content.as_mut() else {
        return;
    };
    for part in &mut content.parts {
        let PartData::FunctionResponse(response) = &mut part.data else {
            continue;
        };
        if response.name != REQUEST_CREDENTIAL_FUNCTION {
            continue;
        }
        for field in CREDENTIAL_FIELDS {
            if let Some(credential) = response.response.get_mut(field) {
                redact_value(credential);
            }
        }
    }
}

fn redact_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if !DESCRIPTIVE_KEYS.contains(&key.as_str()) {
                    redact_value(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Null | Value::Bool(_) => {}
        Value::String(_) | Value::Number(_) => *value = Value::String(REDACTED.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, FunctionResponse, InvocationId, Part, Role};
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_redacted_and_the_kind_is_kept() {
        let answer = FunctionResponse::new(
            REQUEST_CREDENTIAL_FUNCTION,
            json!({
                "credentialKey": "mail",
                "exchangedAuthCredential": {"authType": "oauth2", "oauth2": {"accessToken": "t0k", "expiresAt": 17}},
                "rawAuthCredential": "plain-secret",
            }),
        )
        .with_id("adk-1");
        let mut event = Event::new(InvocationId::from("e-1"), "user")
            .with_content(Content::new(Role::User, [Part::function_response(answer)]));
        assert!(holds_credentials(&event));
        redact(&mut event);
        let stored = serde_json::to_string(&event).unwrap();
        assert!(
            !stored.contains("t0k") && !stored.contains("plain-secret"),
            "{stored}"
        );
        let response = &event.function_responses().next().unwrap().response;
        assert_eq!(
            Value::Object(response.clone()),
            json!({
                "credentialKey": "mail",
                "exchangedAuthCredential": {"authType": "oauth2", "oauth2": {"accessToken": REDACTED, "expiresAt": REDACTED}},
                "rawAuthCredential": REDACTED,
            })
        );
    }
}
