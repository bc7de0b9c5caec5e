//! OAuth2 for tools: a mail agent whose OpenAPI toolset calls an API that needs the user's
//! OAuth2 sign-in. The first call asks the user to sign in (`adk web` opens the authorization
//! server's page in a popup), the code is exchanged with its PKCE verifier, and the call goes on
//! with the token; later calls use the stored token and refresh it.
//!
//! Everything runs on loopback: a real OAuth2 server (npm's `oauth2-mock-server`) and the API
//! its tokens open, started by the script the tests use:
//!
//! ```sh
//! npm install --prefix "$HOME/.cache/adk-rs/oauth-server" oauth2-mock-server@9.3.0
//! node crates/adk-test/src/oauth_server.mjs "$HOME/.cache/adk-rs/oauth-server" 8089 8090 &
//! cargo run -p adk-cli -- web      # then pick `oauth_mail` and ask "Any mail?"
//! ```
//!
//! `OAUTH_MAIL_ISSUER` and `OAUTH_MAIL_API` name other servers (defaults
//! `http://127.0.0.1:8089` and `http://127.0.0.1:8090`). The agent is built without reaching
//! either: they are called only when the tool runs.

use adk::core::IntoLlm;
use adk::prelude::*;
use adk::tool::oauth2::{OAuth2Auth, OAuth2Config};
use adk::tool::openapi::{Credential, OpenApiSpec, OpenApiToolset};
use serde_json::json;

/// The app name sessions of this example are stored under.
pub const APP_NAME: &str = "oauth_mail";

/// The API's document: one operation, protected by the authorization code flow.
fn document(issuer: &str, api: &str) -> String {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "mail", "version": "1"},
        "servers": [{"url": api}],
        "paths": {"/inbox": {"get": {
            "operationId": "listInbox",
            "summary": "Lists the messages in the user's inbox.",
            "security": [{"mailAuth": ["mail.read"]}],
            "responses": {"200": {"description": "the messages"}},
        }}},
        "components": {"securitySchemes": {"mailAuth": {
            "type": "oauth2",
            "flows": {"authorizationCode": {
                "authorizationUrl": format!("{issuer}/authorize"),
                "tokenUrl": format!("{issuer}/token"),
                "scopes": {"mail.read": "read the inbox"},
            }},
        }}},
    })
    .to_string()
}

/// The mail agent on `model`.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<LlmAgent> {
    let issuer =
        std::env::var("OAUTH_MAIL_ISSUER").unwrap_or_else(|_| "http://127.0.0.1:8089".to_owned());
    let api =
        std::env::var("OAUTH_MAIL_API").unwrap_or_else(|_| "http://127.0.0.1:8090".to_owned());
    let config = OAuth2Config::builder("oauth-mail-example", format!("{issuer}/token"))
        .client_secret("example-secret")
        .authorization_url(format!("{issuer}/authorize"))
        .scopes(["mail.read"])
        .build()?;
    let spec = OpenApiSpec::parse(&document(&issuer, &api))?;
    let mail = OpenApiToolset::builder(spec)
        .name("mail")
        .credential(
            "mailAuth",
            Credential::oauth2(OAuth2Auth::authorization_code("mail", config)),
        )
        .build()?;
    LlmAgent::builder("mailer")
        .description("Reads the user's mail.")
        .model(model)
        .instruction(
            "You read the user's inbox with list_inbox. When it says it is waiting for the user \
             to sign in, tell the user to finish signing in.",
        )
        .toolset(std::sync::Arc::new(mail))
        .build()
}
