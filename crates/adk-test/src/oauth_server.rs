//! A real OAuth2 authorization server for the OAuth2 tests: npm's `oauth2-mock-server` (pinned,
//! installed on first use into `$ADK_OAUTH_SERVER_DIR`, by default
//! `$HOME/.cache/adk-rs/oauth-server`, under a file lock), run by `src/oauth_server.mjs` beside
//! the API its tokens open.

use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// Overrides where the server is installed.
pub const SERVER_DIR_ENV: &str = "ADK_OAUTH_SERVER_DIR";

/// The npm package, pinned.
const PACKAGE: &str = "oauth2-mock-server@9.3.0";

/// The folder the package is installed in, installing it if needed (once per test binary).
fn installed() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::cache_dir(SERVER_DIR_ENV, "oauth-server");
        crate::install_once(&dir, PACKAGE, |dir| {
            crate::mcp_servers::npm_install(dir, &[PACKAGE.to_owned()]);
        });
        dir.to_str().expect("a UTF-8 path").to_owned()
    })
}

/// An OAuth2 server and its API on free loopback ports; killed on drop.
///
/// The server issues real signed tokens for the authorization code grant (checking PKCE), the
/// refresh token grant and the client credentials grant. The API answers `GET /inbox` and
/// `GET /reports` only with an unexpired access token the server issued; `POST
/// /control/revoke` revokes every refresh token, `GET /control/stats` counts the grants, and
/// `GET /control/issued` lists what the server handed out.
pub struct OAuthServer {
    child: Child,
    oauth_port: u16,
    api_port: u16,
}

impl OAuthServer {
    /// Starts the server (installing it first if needed) and returns once both ports listen. It
    /// blocks, so async tests call it through `spawn_blocking`.
    ///
    /// # Panics
    ///
    /// When npm or node is missing, or the server does not start within 60 s.
    pub fn start() -> Self {
        let dir = installed();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/src/oauth_server.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node starts the OAuth2 server");
        let [oauth_port, api_port] =
            crate::ready::ready_line(&mut child, "the OAuth2 server", |line| {
                let ports: Vec<u16> = line
                    .strip_prefix("ready ")?
                    .split(' ')
                    .filter_map(|port| port.parse().ok())
                    .collect();
                ports.try_into().ok()
            });
        Self {
            child,
            oauth_port,
            api_port,
        }
    }

    /// The authorization server's root, `http://127.0.0.1:<port>`.
    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.oauth_port)
    }

    /// The authorization endpoint.
    pub fn authorization_url(&self) -> String {
        format!("{}/authorize", self.issuer())
    }

    /// The token endpoint.
    pub fn token_url(&self) -> String {
        format!("{}/token", self.issuer())
    }

    /// The API's root, `http://127.0.0.1:<port>`.
    pub fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.api_port)
    }

    /// Revokes every refresh token the server issued.
    pub async fn revoke_refresh_tokens(&self) {
        let response = reqwest::Client::new()
            .post(format!("{}/control/revoke", self.api_url()))
            .send()
            .await
            .expect("the API answers");
        assert!(response.status().is_success());
    }

    /// How many tokens each grant issued, and how many refreshes were refused:
    /// `{"authorizationCode", "refreshToken", "clientCredentials", "refused"}`.
    pub async fn stats(&self) -> Value {
        self.control("stats").await
    }

    /// Everything the server handed out so far: `{"codes", "accessTokens", "refreshTokens"}`
    /// (arrays of strings, the secrets a test looks for where they must not be) and
    /// `"redirectUris"` (where each sign-in sent the user back to, without the query).
    pub async fn issued(&self) -> Value {
        self.control("issued").await
    }

    /// The JSON the API answers at `GET /control/<what>`.
    async fn control(&self, what: &str) -> Value {
        reqwest::Client::new()
            .get(format!("{}/control/{what}", self.api_url()))
            .send()
            .await
            .expect("the API answers")
            .json()
            .await
            .expect("the API answers JSON")
    }

    /// Signs the user in as a browser would: opens `auth_uri` (the authorization request the
    /// tool asked for) and returns the URL the server redirects to, which carries the code and
    /// the state (what adk-web's popup hands back as `authResponseUri`).
    pub async fn sign_in(auth_uri: &str) -> String {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client");
        let response = client
            .get(auth_uri)
            .send()
            .await
            .expect("the server answers");
        assert!(
            response.status().is_redirection(),
            "the authorization endpoint answered {}",
            response.status()
        );
        response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|location| location.to_str().ok())
            .expect("a redirect location")
            .to_owned()
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
