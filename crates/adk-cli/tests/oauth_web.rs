//! The OAuth2 sign-in of a tool through the real adk-web in real Chromium: `adk web` serves the
//! bundled `oauth_mail` example (an OpenAPI toolset behind the authorization code flow) against a
//! real OAuth2 server (npm's `oauth2-mock-server`) and the API its tokens open, all on loopback.
//! The user asks in the chat; the tool asks for the credential (`adk_request_credential`); adk-web
//! opens its sign-in popup at the authorization endpoint, the server redirects the popup back to
//! adk-web's own page, which hands the URL to the chat window; the chat window answers the
//! request; the runner exchanges the code with its PKCE verifier, the tool reaches the API with
//! the token and the model's answer appears. No code or token is left in a stored event, a trace,
//! the session or credential database, or the server's log.

mod support;

use std::time::Duration;

use adk_test::MockServer;
use adk_test::browser::Browser;
use adk_test::oauth_server::OAuthServer;
use serde_json::{Value, json};
use support::{chat_answer, completion, json_answer, serve_stored};
use tokio::process::Command;

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(180);

/// The model's answer once the tool has read the inbox.
const ANSWER: &str = "You have two messages: lunch at noon, and your order shipped.";

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_web_signs_the_user_in_through_its_popup_and_the_tool_reads_the_inbox() {
    let oauth = tokio::task::spawn_blocking(OAuthServer::start)
        .await
        .unwrap();
    let model = MockServer::start([
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "list_inbox", "arguments": "{}"}}]}),
            "tool_calls",
        ),
        chat_answer(ANSWER),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions.db");
    let credentials = dir.path().join("credentials.db");
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .arg("web")
        .arg("--session-service-uri")
        .arg(format!("sqlite://{}", sessions.display()))
        .arg("--credential-service-uri")
        .arg(format!("sqlite://{}", credentials.display()))
        .current_dir(dir.path())
        .env(
            "ADK_CREDENTIAL_KEY",
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        )
        .env("OAUTH_MAIL_ISSUER", oauth.issuer())
        .env("OAUTH_MAIL_API", oauth.api_url())
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_MODEL", "mock-model")
        .env("ADK_NO_LOCAL_MODEL", "true")
        // Everything the runner, the tool and the server log, to look for secrets in.
        .env(
            "RUST_LOG",
            "info,adk_tool=debug,adk_runner=debug,adk_flow=debug,adk_server=debug",
        );
    let served = serve_stored(command, PATIENCE).await;

    let browser = Browser::start(1280, 900).await;
    browser
        .goto(&format!("{}/dev-ui/?app=oauth_mail", served.base))
        .await;
    browser.send_chat_message("Any mail?", PATIENCE).await;
    // The popup signs in and closes by itself; the chat window sends the answer and the resumed
    // call's result reaches the model, whose answer is shown.
    browser.wait_for_text(ANSWER, PATIENCE).await;
    browser
        .screenshot(
            &std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .join("adk-cli-oauth-web")
                .join("signed-in.png"),
        )
        .await;

    // The server saw one sign-in, redirected to adk-web's own page, and one code exchange.
    let stats = oauth.stats().await;
    assert_eq!(stats["authorizationCode"], 1, "{stats}");
    let issued = oauth.issued().await;
    assert_eq!(
        issued["redirectUris"],
        json!([format!("{}/dev-ui/", served.base)]),
        "{issued}"
    );
    // The model's second request holds the API's answer, which only a valid token opens.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the model was asked twice");
    assert!(
        contains(&requests[1].body, "Lunch at noon?"),
        "the tool's result reached the model: {}",
        String::from_utf8_lossy(&requests[1].body)
    );

    // The stored session: the credential request, its answer, and the tool's result.
    let client = reqwest::Client::new();
    let listed: Vec<Value> = json_answer(client.get(format!(
        "{}/apps/oauth_mail/users/user/sessions",
        served.base
    )))
    .await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let session_id = listed[0]["id"].as_str().unwrap().to_owned();
    let session: Value = json_answer(client.get(format!(
        "{}/apps/oauth_mail/users/user/sessions/{session_id}",
        served.base
    )))
    .await;
    let events = session["events"].as_array().unwrap();
    let parts: Vec<&Value> = events
        .iter()
        .flat_map(|event| event["content"]["parts"].as_array().into_iter().flatten())
        .collect();
    let asked = parts
        .iter()
        .filter(|part| part["functionCall"]["name"] == "adk_request_credential")
        .count();
    let answered = parts
        .iter()
        .filter(|part| part["functionResponse"]["name"] == "adk_request_credential")
        .count();
    assert_eq!((asked, answered), (1, 1), "{session}");
    assert!(
        parts.iter().any(|part| {
            part["functionResponse"]["name"] == "list_inbox"
                && part["functionResponse"]["response"]["messages"][0] == "Lunch at noon?"
        }),
        "{session}"
    );
    let trace: Value = json_answer(client.get(format!(
        "{}/dev/apps/oauth_mail/debug/trace/session/{session_id}",
        served.base
    )))
    .await;
    assert!(
        trace.to_string().contains("list_inbox"),
        "the trace holds the tool's span: {trace}"
    );

    let (success, log) = served.terminate().await;
    assert!(success, "{log}");
    assert!(
        log.contains("the user signed in; tokens stored"),
        "the debug log was captured: {log}"
    );

    // No code or token is in a stored event, a span, the log, or a database file in clear.
    let secrets: Vec<String> = ["codes", "accessTokens", "refreshTokens"]
        .into_iter()
        .flat_map(|kind| issued[kind].as_array().unwrap().clone())
        .map(|secret| secret.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        secrets.len(),
        3,
        "a code, an access and a refresh token: {issued}"
    );
    let session = session.to_string();
    let trace = trace.to_string();
    let databases: Vec<Vec<u8>> = [&sessions, &credentials]
        .into_iter()
        .flat_map(|db| {
            ["", "-wal"].map(|suffix| {
                std::fs::read(format!("{}{suffix}", db.display())).unwrap_or_default()
            })
        })
        .collect();
    assert!(
        databases[2..]
            .iter()
            .any(|bytes| contains(bytes, "adk_credentials")),
        "the credentials went to their own database"
    );
    for secret in &secrets {
        assert!(!session.contains(secret), "a stored event holds a secret");
        assert!(!trace.contains(secret), "a span holds a secret");
        assert!(!log.contains(secret), "the log holds a secret");
        for bytes in &databases {
            assert!(
                !contains(bytes, secret),
                "a database holds a secret in clear"
            );
        }
    }
}
