//! The token endpoint (RFC 6749 section 3.2) over reqwest: the authorization code grant with its
//! PKCE verifier, the refresh token grant and the client credentials grant, and the tokens they
//! answer.

use std::fmt;
use std::time::Duration;

use adk_core::{Error, ErrorKind};
use serde::{Deserialize, Serialize};

use super::OAuth2Config;

/// How much of a refused answer's `error_description` a message quotes.
const DESCRIPTION_CHARS: usize = 200;

/// The largest token answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The tokens of one sign-in, as the credential service stores them (camelCase, as ADK's
/// `OAuth2Auth` names them). `Debug` shows no token.
#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tokens {
    pub(crate) access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refresh_token: Option<String>,
    /// Seconds since the Unix epoch; `None` when the server gave no lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expires_at: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<String>,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Whether the access token is still good `margin` seconds from `now`.
    pub(crate) fn fresh_at(&self, now: f64, margin: Duration) -> bool {
        self.expires_at
            .is_none_or(|expires| now + margin.as_secs_f64() < expires)
    }
}

/// The token endpoint's answer (RFC 6749 section 5.1).
#[derive(Deserialize)]
struct Answer {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<f64>,
    #[serde(default)]
    scope: Option<String>,
}

/// The token endpoint's refusal (RFC 6749 section 5.2).
#[derive(Deserialize)]
struct Refusal {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// Why a grant gave no tokens.
#[derive(Debug)]
pub(crate) enum GrantError {
    /// The server refused the grant as invalid (`invalid_grant`): a refresh token revoked or
    /// expired, a code used twice. Signing in again is the way out.
    InvalidGrant(Error),
    /// Anything else: the server unreachable, another refusal, an unreadable answer.
    Failed(Error),
}

impl GrantError {
    pub(crate) fn into_error(self) -> Error {
        match self {
            Self::InvalidGrant(error) | Self::Failed(error) => error,
        }
    }
}

/// Asks the token endpoint for tokens with `grant` (form fields, `grant_type` first), at `now`.
pub(crate) async fn request(
    config: &OAuth2Config,
    grant: &[(&str, &str)],
    now: f64,
) -> std::result::Result<Tokens, GrantError> {
    let grant_type = grant.first().map_or("", |(_, value)| *value);
    let failed = |message: String| {
        GrantError::Failed(Error::new(
            ErrorKind::Credential,
            format!(
                "the {grant_type} grant at the token endpoint {} {message}",
                config.shown_token_url()
            ),
        ))
    };
    // The serializer is not `Send`, so the body is finished before anything is awaited.
    let body = {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.extend_pairs(grant.iter().copied());
        if config.client_secret.is_none() {
            form.append_pair("client_id", &config.client_id);
        }
        form.finish()
    };
    let mut request = config
        .client
        .post(config.token_url.clone())
        .timeout(config.timeout)
        .header(reqwest::header::ACCEPT, "application/json")
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        );
    // RFC 6749 section 2.3.1: a confidential client authenticates with HTTP basic, each part
    // form-encoded first; a public one sent its id in the form.
    if let Some(secret) = &config.client_secret {
        request = request.basic_auth(form_encode(&config.client_id), Some(form_encode(secret)));
    }
    let mut response = request
        .body(body)
        .send()
        .await
        .map_err(|error| failed(format!("could not be reached: {}", error.without_url())))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| failed(format!("answer was cut: {}", error.without_url())))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(failed(format!(
                "answered more than {MAX_ANSWER_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let refusal: Option<Refusal> = serde_json::from_slice(&body).ok();
        let Some(refusal) = refusal else {
            return Err(failed(format!("answered {status}")));
        };
        let description: String = refusal
            .error_description
            .unwrap_or_default()
            .chars()
            .take(DESCRIPTION_CHARS)
            .collect();
        let error = failed(format!(
            "was refused with {status} `{}` {description}",
            refusal.error
        ))
        .into_error();
        return Err(if refusal.error == "invalid_grant" {
            GrantError::InvalidGrant(error)
        } else {
            GrantError::Failed(error)
        });
    }
    let answer: Answer = serde_json::from_slice(&body)
        .map_err(|error| failed(format!("answered {status} with no token: {error}")))?;
    Ok(Tokens {
        access_token: answer.access_token,
        refresh_token: answer.refresh_token,
        expires_at: answer.expires_in.map(|seconds| now + seconds),
        scope: answer.scope,
    })
}

fn form_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
