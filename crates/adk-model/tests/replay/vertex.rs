//! Gemini on Vertex AI with real credentials flows against loopback servers: a service-account
//! key generated here signs a JWT that a token endpoint checks, a token that expires mid-session
//! is fetched again once, a 401 is retried once with a new token and a second one is a typed auth
//! error, and the metadata server hands out tokens.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use adk_core::{Clock, Content, LlmRequest};
use adk_model::{ErrorKind, GeminiModel, GoogleCredentials, RetryPolicy};
use adk_test::{MockResponse, MockServer};
use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine as _;
use serde_json::{Value, json};

use crate::common;

/// A clock the test moves by hand.
#[derive(Debug, Default)]
struct ManualClock(AtomicU64);

impl ManualClock {
    fn advance(&self, seconds: u64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> f64 {
        1_800_000_000.0 + self.0.load(Ordering::SeqCst) as f64
    }
}

fn token(value: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({"access_token": value, "expires_in": 3600, "token_type": "Bearer"}),
    )
}

fn answer() -> MockResponse {
    MockResponse::json(
        200,
        &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}),
    )
}

fn unauthenticated() -> MockResponse {
    MockResponse::json(
        401,
        &json!({"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}),
    )
}

fn model(server: &MockServer, credentials: GoogleCredentials) -> GeminiModel {
    GeminiModel::builder("gemini-2.5-flash")
        .vertex("my-project", "us-central1")
        .credentials(credentials)
        .base_url(format!("{}/v1", server.base_url()))
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

fn request() -> LlmRequest {
    LlmRequest::new("", vec![Content::user("hi")])
}

/// The bearer tokens the model server received, in order.
fn bearers(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|request| {
            request
                .header("authorization")
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// A fresh RSA key: the service-account JSON holding it (PKCS#8 PEM, as Google writes it) and the
/// public key that checks its signatures.
fn service_account(token_uri: &str) -> (String, Vec<u8>) {
    let key = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let der = key.as_der().unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    let json = json!({
        "type": "service_account", "project_id": "key-project", "private_key_id": "kid-1",
        "private_key": pem, "client_email": "agent@key-project.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri,
    });
    (json.to_string(), key.public_key().as_ref().to_vec())
}

fn form_value(body: &[u8], name: &str) -> String {
    String::from_utf8_lossy(body)
        .split('&')
        .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in the form"))
        .replace("%3A", ":")
}

fn decode_segment(segment: &str) -> Value {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(segment)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn a_service_account_signs_a_jwt_that_the_token_endpoint_checks() {
    let tokens = MockServer::start([token("ya29.from-jwt")]).await;
    let (key, public_key) = service_account(&format!("{}/token", tokens.base_url()));
    let clock = Arc::new(ManualClock::default());
    let credentials = GoogleCredentials::from_json(&key)
        .unwrap()
        .with_clock(clock.clone());
    let api = MockServer::start([answer()]).await;
    let outcome = common::run(&model(&api, credentials), request(), false).await;
    assert_eq!(
        common::content(std::slice::from_ref(&outcome), 0)
            .text()
            .as_deref(),
        Some("Hi")
    );
    assert_eq!(bearers(&api), ["Bearer ya29.from-jwt"]);
    assert_eq!(
        api.requests()[0].path,
        "/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
    );

    let exchange = &tokens.requests()[0];
    assert_eq!(exchange.path, "/token");
    assert_eq!(
        form_value(&exchange.body, "grant_type"),
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let assertion = form_value(&exchange.body, "assertion");
    let segments: Vec<&str> = assertion.split('.').collect();
    assert_eq!(segments.len(), 3, "{assertion}");
    let header = decode_segment(segments[0]);
    assert_eq!(
        (header["alg"].as_str(), header["kid"].as_str()),
        (Some("RS256"), Some("kid-1"))
    );
    let claims = decode_segment(segments[1]);
    assert_eq!(claims["iss"], "agent@key-project.iam.gserviceaccount.com");
    assert_eq!(claims["aud"], format!("{}/token", tokens.base_url()));
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    let iat = claims["iat"].as_u64().unwrap();
    assert_eq!(iat as f64, clock.now());
    assert_eq!(claims["exp"].as_u64().unwrap(), iat + 3600);
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(segments[2])
        .unwrap();
    let signed = format!("{}.{}", segments[0], segments[1]);
    aws_lc_rs::signature::UnparsedPublicKey::new(
        &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
        public_key,
    )
    .verify(signed.as_bytes(), &signature)
    .expect("the assertion is signed by the service account's key");
}

#[tokio::test]
async fn a_token_expiring_mid_session_is_fetched_again_once() {
    let tokens = MockServer::start([token("first"), token("second")]).await;
    let key = json!({"type": "authorized_user", "client_id": "id", "client_secret": "secret",
                     "refresh_token": "refresh", "token_uri": format!("{}/token", tokens.base_url())});
    let clock = Arc::new(ManualClock::default());
    let credentials = GoogleCredentials::from_json(&key.to_string())
        .unwrap()
        .with_clock(clock.clone());
    let api = MockServer::repeating(answer()).await;
    let model = model(&api, credentials);
    let mut seen = Vec::new();
    for advance in [0, 100, 3_300, 60] {
        clock.advance(advance);
        let outcome = common::run(&model, request(), false).await;
        outcome.last();
        seen.extend(bearers(&api));
    }
    // The first token serves until it has less than five minutes left (3,400 s after it was
    // fetched); then one new token serves the rest.
    assert_eq!(
        seen,
        [
            "Bearer first",
            "Bearer first",
            "Bearer second",
            "Bearer second"
        ]
    );
    let fetched = tokens.requests();
    assert_eq!(fetched.len(), 2, "one fetch, then one refresh");
    assert_eq!(form_value(&fetched[1].body, "grant_type"), "refresh_token");
    assert_eq!(form_value(&fetched[1].body, "refresh_token"), "refresh");
}

#[tokio::test]
async fn a_refused_token_is_replaced_once_and_a_second_refusal_is_an_auth_error() {
    let tokens = MockServer::start([token("stale"), token("fresh"), token("unused")]).await;
    let credentials = GoogleCredentials::metadata_server(tokens.base_url())
        .with_clock(Arc::new(ManualClock::default()));
    let api = MockServer::start([
        unauthenticated(),
        answer(),
        unauthenticated(),
        unauthenticated(),
    ])
    .await;
    let model = model(&api, credentials);

    let recovered = common::run(&model, request(), false).await;
    recovered.last();
    let failed = common::run(&model, request(), false).await;
    let error = failed.model_error();
    assert_eq!(error.kind(), ErrorKind::Auth, "{error}");
    assert_eq!(error.provider_status(), Some("UNAUTHENTICATED"));
    assert!(error.to_string().contains("freshly fetched"), "{error}");
    assert!(
        !error.to_string().contains("unused"),
        "no token in the message: {error}"
    );
    assert_eq!(
        bearers(&api),
        [
            "Bearer stale",
            "Bearer fresh",
            "Bearer fresh",
            "Bearer unused"
        ]
    );
    let metadata = &tokens.requests()[0];
    assert_eq!(
        metadata.path,
        "/computeMetadata/v1/instance/service-accounts/default/token"
    );
    assert_eq!(metadata.header("metadata-flavor"), Some("Google"));
}

#[tokio::test]
async fn a_token_endpoint_that_refuses_is_an_auth_error_without_the_secret() {
    let tokens = MockServer::start([MockResponse::json(
        400,
        &json!({"error": "invalid_grant", "error_description": "Bad Request"}),
    )])
    .await;
    let key = json!({"type": "authorized_user", "client_id": "id", "client_secret": "very-secret-value",
                     "refresh_token": "refresh", "token_uri": format!("{}/token", tokens.base_url())});
    let credentials = GoogleCredentials::from_json(&key.to_string()).unwrap();
    let api = MockServer::start([answer()]).await;
    let model = model(&api, credentials);
    let outcome = common::run(&model, request(), false).await;
    let error = outcome.model_error();
    assert_eq!(error.kind(), ErrorKind::Auth);
    assert!(error.to_string().contains("invalid_grant"), "{error}");
    assert!(!format!("{error} {error:?} {model:?}").contains("very-secret-value"));
    assert!(api.requests().is_empty(), "no model call without a token");
}
