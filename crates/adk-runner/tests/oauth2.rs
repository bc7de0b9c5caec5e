//! OAuth2 for tools against a real authorization server (npm's `oauth2-mock-server` on loopback,
//! see `adk_test::oauth_server`): an OpenAPI tool asks the user to sign in through
//! `adk_request_credential`, the client answers with the server's redirect, the code is
//! exchanged with its PKCE verifier, and the tool's call reaches an API that accepts only the
//! server's tokens; tokens are refreshed once expired, a revoked refresh token becomes a new
//! sign-in request, and the client credentials grant needs no user. No token reaches a stored
//! event, a log line or a span.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use adk_core::{Clock, CredentialKey, CredentialService, Event, FunctionResponse, RunConfig};
use adk_runner::{RunRequest, Runner};
use adk_session::{CredentialCipher, SqliteCredentialService, SqliteSessionService};
use adk_test::oauth_server::OAuthServer;
use adk_test::{LogCapture, ScriptedModel, SequentialIds};
use adk_tool::oauth2::{OAuth2Auth, OAuth2Config};
use adk_tool::openapi::{Credential, OpenApiSpec, OpenApiToolset};
use serde_json::{Value, json};
use support::{APP, SESSION, USER, agent, run_request, run_with, stored};

/// Where the server sends the user back to (nothing listens: the test reads the redirect).
const REDIRECT_URI: &str = "http://127.0.0.1:9/oauth2callback";

/// The wall clock, moved forward by the test to make tokens expire.
#[derive(Debug, Default)]
struct LaterClock {
    ahead: AtomicU64,
}

impl LaterClock {
    fn advance(&self, by: Duration) {
        self.ahead.fetch_add(by.as_secs(), Ordering::SeqCst);
    }
}

impl Clock for LaterClock {
    fn now(&self) -> f64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        now + self.ahead.load(Ordering::SeqCst) as f64
    }
}

/// The API's document: `listInbox` for a signed-in user, `countReports` for the app itself.
fn document(server: &OAuthServer) -> String {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "mail", "version": "1"},
        "servers": [{"url": server.api_url()}],
        "paths": {
            "/inbox": {"get": {
                "operationId": "listInbox",
                "summary": "Lists the user's messages.",
                "security": [{"mailAuth": ["mail.read"]}],
                "responses": {"200": {"description": "the messages"}},
            }},
            "/reports": {"get": {
                "operationId": "countReports",
                "summary": "Counts the reports.",
                "security": [{"serviceAuth": []}],
                "responses": {"200": {"description": "the count"}},
            }},
        },
        "components": {"securitySchemes": {
            "mailAuth": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": server.authorization_url(),
                "tokenUrl": server.token_url(),
                "scopes": {"mail.read": "read mail"},
            }}},
            "serviceAuth": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": server.token_url(),
                "scopes": {},
            }}},
        }},
    })
    .to_string()
}

fn config(server: &OAuthServer) -> OAuth2Config {
    OAuth2Config::builder("adk-test-client", server.token_url())
        .client_secret("client-secret-123")
        .authorization_url(server.authorization_url())
        .scopes(["mail.read"])
        .redirect_uri(REDIRECT_URI)
        .build()
        .unwrap()
}

/// A mail app on SQLite (sessions and encrypted credentials in one file), whose agent calls
/// `list_inbox` for each user message, then answers.
struct MailApp {
    server: OAuthServer,
    runner: Runner,
    credentials: Arc<SqliteCredentialService>,
    clock: Arc<LaterClock>,
    dir: tempfile::TempDir,
}

impl MailApp {
    async fn start(turns: usize) -> Self {
        let server = tokio::task::spawn_blocking(OAuthServer::start)
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("app.db");
        let sessions = SqliteSessionService::open(&db).await.unwrap();
        let credentials = Arc::new(
            SqliteCredentialService::open(&db, CredentialCipher::new([7; 32]))
                .await
                .unwrap(),
        );
        let spec = OpenApiSpec::parse(&document(&server)).unwrap();
        let mail = OAuth2Auth::authorization_code("mail", config(&server));
        let tools = OpenApiToolset::builder(spec)
            .credential("mailAuth", Credential::oauth2(mail))
            .operations(["listInbox"])
            .build()
            .unwrap();
        let mut model = ScriptedModel::new("m");
        for _ in 0..turns {
            model = model
                .then_call("list_inbox", json!({}))
                .then_text("Checked your inbox.");
        }
        let reader = agent("mailer", &model)
            .toolset(Arc::new(tools))
            .build()
            .unwrap();
        let clock = Arc::new(LaterClock::default());
        let runner = Runner::builder(APP, reader, sessions)
            .auto_create_session(true)
            .ids(Arc::new(SequentialIds::default()))
            .clock(clock.clone())
            .credential_service(credentials.clone())
            .resumable(true)
            .build()
            .unwrap();
        Self {
            server,
            runner,
            credentials,
            clock,
            dir,
        }
    }

    async fn ask(&self) -> support::Outcome {
        let outcome = run_with(
            &self.runner,
            adk_core::Content::user("Any mail?"),
            RunConfig::default(),
        )
        .await;
        assert!(outcome.error.is_none(), "{}", outcome.render());
        outcome
    }

    /// Signs in as adk-web's popup does: opens the auth URI, and answers the request with the
    /// `AuthConfig` whose `authResponseUri` is where the server redirected to.
    async fn sign_in(&self, asked: &support::Outcome) -> (support::Outcome, String) {
        let request = credential_request(&asked.events).expect("the tool asked to sign in");
        let mut auth_config = request.args["authConfig"].clone();
        let auth_uri = auth_config["exchangedAuthCredential"]["oauth2"]["authUri"]
            .as_str()
            .unwrap()
            .to_owned();
        let redirected = OAuthServer::sign_in(&auth_uri).await;
        let oauth2 = &mut auth_config["exchangedAuthCredential"]["oauth2"];
        oauth2["authResponseUri"] = json!(&redirected);
        oauth2["redirectUri"] = json!(REDIRECT_URI);
        let answer = FunctionResponse::new("adk_request_credential", auth_config)
            .with_id(request.id.clone().unwrap());
        let outcome = run_request(
            &self.runner,
            RunRequest::new(USER, SESSION).function_responses([answer]),
        )
        .await;
        assert!(outcome.error.is_none(), "{}", outcome.render());
        (outcome, redirected)
    }

    async fn tokens(&self) -> Value {
        self.credentials
            .load(&CredentialKey::new(APP, USER, "mail"))
            .await
            .unwrap()
            .expect("tokens are stored")
            .into_value()["tokens"]
            .clone()
    }
}

/// The last `adk_request_credential` call among `events`.
fn credential_request(events: &[Event]) -> Option<adk_core::FunctionCall> {
    events
        .iter()
        .flat_map(Event::function_calls)
        .filter(|call| call.name == "adk_request_credential")
        .last()
        .cloned()
}

/// The answers of `list_inbox` among `events`.
fn inbox_answers(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .flat_map(Event::function_responses)
        .filter(|response| response.name == "list_inbox")
        .map(|response| Value::Object(response.response.clone()))
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[tokio::test]
async fn a_user_signs_in_with_pkce_and_the_tool_reaches_the_api_with_the_token() {
    let logs = LogCapture::start();
    let app = MailApp::start(2).await;

    // The first call has no token: the user is asked to sign in, with PKCE and a state.
    let asked = app.ask().await;
    assert_eq!(
        inbox_answers(&asked.events),
        [json!({"status": "waiting for the user to sign in"})]
    );
    let request = credential_request(&asked.events).unwrap();
    let auth_config = &request.args["authConfig"];
    assert_eq!(auth_config["credentialKey"], "mail");
    assert_eq!(auth_config["authScheme"]["type"], "oauth2");
    let auth_uri = reqwest::Url::parse(
        auth_config["exchangedAuthCredential"]["oauth2"]["authUri"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let query: std::collections::HashMap<_, _> = auth_uri.query_pairs().into_owned().collect();
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["client_id"], "adk-test-client");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["code_challenge"].len(), 43);
    assert_eq!(
        query["state"],
        auth_config["exchangedAuthCredential"]["oauth2"]["state"]
    );
    assert!(
        !Value::Object(request.args.clone())
            .to_string()
            .contains("client-secret-123")
    );

    // The user signs in; the code is exchanged (the server checks the verifier) and the resumed
    // call reaches the API, which accepts only the server's tokens.
    let (signed_in, redirected) = app.sign_in(&asked).await;
    let code = reqwest::Url::parse(&redirected)
        .unwrap()
        .query_pairs()
        .find(|(key, _)| key == "code")
        .map(|(_, code)| code.into_owned())
        .expect("the redirect carries a code");
    assert_eq!(
        inbox_answers(&signed_in.events),
        [json!({"messages": ["Lunch at noon?", "Your order shipped"]})]
    );
    assert_eq!(app.server.stats().await["authorizationCode"], 1);

    // The next turn uses the stored token: no new sign-in, no new grant.
    let again = app.ask().await;
    assert!(credential_request(&again.events).is_none());
    assert_eq!(
        inbox_answers(&again.events)[0]["messages"][0],
        "Lunch at noon?"
    );
    assert_eq!(app.server.stats().await["authorizationCode"], 1);

    // No token, code or verifier is in a stored event, the database file, a log line or a span.
    let tokens = app.tokens().await;
    let access = tokens["accessToken"].as_str().unwrap().to_owned();
    let refresh = tokens["refreshToken"].as_str().unwrap().to_owned();
    let session = serde_json::to_string(&stored(&app.runner).await).unwrap();
    let logged = logs.text();
    assert!(logged.contains("mailer"), "the capture saw the run's spans");
    for secret in [&access, &refresh, &code, &"client-secret-123".to_owned()] {
        assert!(
            !session.contains(secret.as_str()),
            "a stored event holds a secret"
        );
        assert!(
            !logged.contains(secret.as_str()),
            "a log line or span holds a secret"
        );
    }
    let db = app.dir.path().join("app.db");
    drop(app.runner);
    for suffix in ["", "-wal"] {
        let bytes = std::fs::read(format!("{}{suffix}", db.display())).unwrap_or_default();
        assert!(
            !contains(&bytes, &access),
            "the database holds the access token in clear"
        );
        assert!(
            !contains(&bytes, &refresh),
            "the database holds the refresh token in clear"
        );
    }
}

#[tokio::test]
async fn an_expired_token_is_refreshed_and_a_revoked_refresh_token_asks_again() {
    let app = MailApp::start(3).await;
    let asked = app.ask().await;
    app.sign_in(&asked).await;
    let first = app.tokens().await;

    // An hour and more later the token has expired: it is refreshed before the call.
    app.clock.advance(Duration::from_secs(2 * 3600));
    let refreshed = app.ask().await;
    assert!(credential_request(&refreshed.events).is_none());
    assert_eq!(
        inbox_answers(&refreshed.events)[0]["messages"][1],
        "Your order shipped"
    );
    let second = app.tokens().await;
    // (The access token may be the same JWT when issued within the same second; the refresh
    // token is new each time.)
    assert_ne!(first["refreshToken"], second["refreshToken"]);
    let stats = app.server.stats().await;
    assert_eq!(
        (
            stats["authorizationCode"].clone(),
            stats["refreshToken"].clone()
        ),
        (json!(1), json!(1))
    );

    // The server revokes the refresh token; once the access token expires, the user is asked to
    // sign in again instead of the call failing.
    app.server.revoke_refresh_tokens().await;
    app.clock.advance(Duration::from_secs(2 * 3600));
    let asked_again = app.ask().await;
    assert_eq!(
        inbox_answers(&asked_again.events),
        [json!({"status": "waiting for the user to sign in"})]
    );
    assert!(credential_request(&asked_again.events).is_some());
    assert_eq!(app.server.stats().await["refused"], 1);
}

#[tokio::test]
async fn the_client_credentials_grant_needs_no_user_and_is_cached() {
    let server = tokio::task::spawn_blocking(OAuthServer::start)
        .await
        .unwrap();
    let spec = OpenApiSpec::parse(&document(&server)).unwrap();
    let service = OAuth2Auth::client_credentials(
        OAuth2Config::builder("reporting-service", server.token_url())
            .client_secret("service-secret")
            .build()
            .unwrap(),
    );
    let tools = OpenApiToolset::builder(spec)
        .credential("serviceAuth", Credential::oauth2(service))
        .operations(["countReports"])
        .build()
        .unwrap();
    let model = ScriptedModel::new("m")
        .then_call("count_reports", json!({}))
        .then_text("Two reports.")
        .then_call("count_reports", json!({}))
        .then_text("Still two.");
    let reporter = agent("reporter", &model)
        .toolset(Arc::new(tools))
        .build()
        .unwrap();
    let runner = support::runner(reporter).build().unwrap();
    // Two turns, two calls: the second uses the token the first got.
    for _ in 0..2 {
        let outcome = support::run(&runner, "How many reports?").await;
        assert!(outcome.error.is_none(), "{}", outcome.render());
        let answers: Vec<Value> = outcome
            .events
            .iter()
            .flat_map(Event::function_responses)
            .map(|response| Value::Object(response.response.clone()))
            .collect();
        assert_eq!(answers, [json!({"reports": 2})]);
        assert!(credential_request(&outcome.events).is_none());
    }
    assert_eq!(server.stats().await["clientCredentials"], 1);
}
