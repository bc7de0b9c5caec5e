//! OAuth2 for tools (feature `oauth2`): a tool that acts for a user signs them in through ADK's
//! `adk_request_credential` round trip (the authorization code grant with PKCE), and a tool that
//! acts for the app uses the client credentials grant.
//!
//! [`OAuth2Auth::access_token`] is all a tool calls: it answers a valid access token, or asks the
//! user to sign in and answers [`Access::Requested`]. Behind it:
//!
//! - **Asking.** With no usable token, it makes a PKCE verifier and a `state`, keeps them (never
//!   the client) in the invocation's credential service, and puts an ADK `AuthConfig` on the
//!   call's event (`requested_auth_configs`), whose `exchangedAuthCredential.oauth2.authUri` the
//!   client opens (adk-web in a popup). The flow turns it into an `adk_request_credential` call
//!   and the invocation pauses.
//! - **Exchanging.** The client answers with the `AuthConfig` whose `oauth2.authResponseUri` is
//!   the URL the server redirected to (or with `oauth2.authCode` and `oauth2.state`). The flow
//!   resumes the tool's call with that answer in `temp:` state; here the `state` is checked
//!   against the stored one and the code is exchanged at the token endpoint with the verifier.
//! - **Keeping.** The tokens go to the credential service under the app, the user and the
//!   credential key (encrypted at rest by the SQL services of `adk-session`), never into an
//!   event or the session's state.
//! - **Refreshing.** A token within the refresh margin of its expiry is refreshed with the
//!   refresh token first; a refresh the server refuses as `invalid_grant` (revoked, expired)
//!   forgets the tokens and asks the user to sign in again.
//!
//! No token, code or verifier reaches a message, a log line, a span or `Debug` output.

mod auth;
mod pkce;
mod token;

use std::fmt;
use std::time::Duration;

use adk_core::{Error, ErrorKind, Result};
use reqwest::Url;

pub use auth::{Access, AccessToken, OAuth2Auth};

/// How long before its expiry a token is refreshed, by default.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// How long a call of the token endpoint may take, by default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// An OAuth2 client: its id and secret and the authorization server's endpoints, made by
/// [`OAuth2Config::builder`]. `Debug` shows no secret.
///
/// ```
/// use adk_tool::oauth2::OAuth2Config;
///
/// let config = OAuth2Config::builder("my-client", "https://auth.example.com/token")
///     .client_secret("s3cret")
///     .authorization_url("https://auth.example.com/authorize")
///     .scopes(["mail.read"])
///     .redirect_uri("https://app.example.com/oauth2callback")
///     .build()?;
/// assert!(!format!("{config:?}").contains("s3cret"));
/// # Ok::<(), adk_core::Error>(())
/// ```
#[derive(Clone)]
pub struct OAuth2Config {
    client: reqwest::Client,
    client_id: String,
    client_secret: Option<String>,
    authorization_url: Option<Url>,
    token_url: Url,
    scopes: Vec<String>,
    redirect_uri: Option<String>,
    timeout: Duration,
    refresh_margin: Duration,
}

impl OAuth2Config {
    /// A client `client_id` of the authorization server whose token endpoint is `token_url`.
    pub fn builder(
        client_id: impl Into<String>,
        token_url: impl Into<String>,
    ) -> OAuth2ConfigBuilder {
        OAuth2ConfigBuilder {
            client: None,
            client_id: client_id.into(),
            client_secret: None,
            authorization_url: None,
            token_url: token_url.into(),
            scopes: Vec::new(),
            redirect_uri: None,
            timeout: DEFAULT_TIMEOUT,
            refresh_margin: DEFAULT_REFRESH_MARGIN,
        }
    }

    /// The token endpoint without user information or query, for messages.
    fn shown_token_url(&self) -> String {
        let mut shown = self.token_url.clone();
        shown.set_query(None);
        // Setting these cannot fail on an http(s) URL, the only kind `build` admits.
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.to_string()
    }
}

impl fmt::Debug for OAuth2Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth2Config")
            .field("client_id", &self.client_id)
            .field("token_url", &self.shown_token_url())
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuth2Config`].
#[derive(Debug)]
#[must_use]
pub struct OAuth2ConfigBuilder {
    client: Option<reqwest::Client>,
    client_id: String,
    client_secret: Option<String>,
    authorization_url: Option<String>,
    token_url: String,
    scopes: Vec<String>,
    redirect_uri: Option<String>,
    timeout: Duration,
    refresh_margin: Duration,
}

impl OAuth2ConfigBuilder {
    /// The client's secret, sent to the token endpoint with HTTP basic authentication (a public
    /// client has none and sends its id in the form).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The authorization endpoint users sign in at; needed for the authorization code grant.
    pub fn authorization_url(mut self, url: impl Into<String>) -> Self {
        self.authorization_url = Some(url.into());
        self
    }

    /// The scopes asked for.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Where the server sends the user back to. A client may set its own in the authorization
    /// URL (adk-web does) and says which in its answer; that one is used for the exchange.
    pub fn redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uri = Some(uri.into());
        self
    }

    /// How long before its expiry a token is refreshed ([`DEFAULT_REFRESH_MARGIN`]).
    pub fn refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// How long a call of the token endpoint may take (30 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The HTTP client to call the token endpoint with (a new one by default).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] when an endpoint is not an `http` or `https` URL.
    pub fn build(self) -> Result<OAuth2Config> {
        let token_url = endpoint("token URL", &self.token_url)?;
        let authorization_url = self
            .authorization_url
            .as_deref()
            .map(|url| endpoint("authorization URL", url))
            .transpose()?;
        Ok(OAuth2Config {
            client: self.client.unwrap_or_default(),
            client_id: self.client_id,
            client_secret: self.client_secret,
            authorization_url,
            token_url,
            scopes: self.scopes,
            redirect_uri: self.redirect_uri,
            timeout: self.timeout,
            refresh_margin: self.refresh_margin,
        })
    }
}

fn endpoint(what: &str, text: &str) -> Result<Url> {
    let url = Url::parse(text).map_err(|error| {
        Error::new(
            ErrorKind::Config,
            format!("the OAuth2 {what} is not a URL: {error}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::new(
            ErrorKind::Config,
            format!("the OAuth2 {what} is not an http or https URL"),
        ));
    }
    Ok(url)
}
