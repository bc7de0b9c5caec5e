//! Google's Application Default Credentials for Vertex AI, found and used as Google's libraries
//! do: a JSON key file named by `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `application_default_credentials.json`, else the metadata server of the machine. A service
//! account's key signs a JWT that is exchanged for an access token (RFC 7523); an authorized
//! user's refresh token is exchanged for one; the metadata server hands one out. Tokens are cached
//! and fetched again shortly before they expire, one fetch at a time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_core::{Clock, SystemClock};
use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};

/// The scope every token is asked for.
const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google's token endpoint, when a key file names none.
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The metadata server, when `GCE_METADATA_HOST` names none.
const DEFAULT_METADATA_HOST: &str = "metadata.google.internal";

/// A token is fetched again when it has less than this left, so that no call starts with a token
/// that expires on the way.
const REFRESH_MARGIN_SECONDS: f64 = 300.0;

/// How long a token fetch may take.
const TOKEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The most of a token endpoint's answer that is read.
const MAX_TOKEN_ANSWER_BYTES: usize = 64 * 1024;

/// Where Vertex AI access tokens come from: Application Default Credentials
/// ([`GoogleCredentials::from_env`]), a key file, or the metadata server.
///
/// Its `Debug` output never shows a key, a secret or a token.
///
/// ```no_run
/// # fn main() -> Result<(), adk_model::Error> {
/// let credentials = adk_model::GoogleCredentials::from_file("service-account.json")?;
/// let model = adk_model::GeminiModel::builder("gemini-2.5-flash")
///     .vertex("my-project", "us-central1")
///     .credentials(credentials)
///     .build()?;
/// # let _ = model; Ok(()) }
/// ```
#[derive(Clone)]
pub struct GoogleCredentials {
    source: Arc<Source>,
    clock: Arc<dyn Clock>,
    cached: Arc<tokio::sync::Mutex<Option<Token>>>,
}

enum Source {
    ServiceAccount {
        client_email: String,
        private_key: SecretString,
        private_key_id: Option<String>,
        token_uri: String,
        project_id: Option<String>,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: SecretString,
        refresh_token: SecretString,
        token_uri: String,
        quota_project_id: Option<String>,
    },
    MetadataServer {
        base: String,
    },
}

#[derive(Clone)]
struct Token {
    value: SecretString,
    expires_at: f64,
}

/// A key file as gcloud and the Cloud console write it.
#[derive(Deserialize)]
struct KeyFile {
    #[serde(rename = "type")]
    kind: String,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    project_id: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    quota_project_id: Option<String>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: Option<f64>,
}

impl std::fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &*self.source {
            Source::ServiceAccount { client_email, .. } => {
                format!("service account {client_email}")
            }
            Source::AuthorizedUser { .. } => "authorized user".to_owned(),
            Source::MetadataServer { base } => format!("metadata server at {base}"),
        };
        f.debug_struct("GoogleCredentials")
            .field("source", &kind)
            .finish_non_exhaustive()
    }
}

impl GoogleCredentials {
    /// Application Default Credentials, found as Google's libraries find them: the key file
    /// `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
    /// `application_default_credentials.json` (in `CLOUDSDK_CONFIG`, else
    /// `~/.config/gcloud`), else the metadata server (`GCE_METADATA_HOST`, else
    /// `metadata.google.internal`), which answers on Google Cloud's machines.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Auth`] when the named key file cannot be read or is not a key.
    pub fn from_env() -> Result<Self, Error> {
        if let Some(path) =
            std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|path| !path.is_empty())
        {
            return Self::from_file(PathBuf::from(path));
        }
        let gcloud = std::env::var_os("CLOUDSDK_CONFIG")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|home| Path::new(&home).join(".config/gcloud"))
            });
        if let Some(file) = gcloud
            .map(|dir| dir.join("application_default_credentials.json"))
            .filter(|file| file.is_file())
        {
            return Self::from_file(file);
        }
        let host = std::env::var("GCE_METADATA_HOST")
            .ok()
            .filter(|host| !host.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_METADATA_HOST.to_owned());
        Ok(Self::metadata_server(format!("http://{host}")))
    }

    /// The service-account or authorized-user key in the JSON file at `path`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Auth`] when the file cannot be read or holds no key of a known type.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| {
            auth_error(format!(
                "cannot read the Google credentials file {}: {error}; check GOOGLE_APPLICATION_CREDENTIALS",
                path.display()
            ))
        })?;
        Self::from_json(&text).map_err(|error| {
            let message = format!("{} ({})", error, path.display());
            error.with_message(message)
        })
    }

    /// The service-account or authorized-user key in `json`, as a key file holds it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Auth`] when `json` holds no key of a known type.
    pub fn from_json(json: &str) -> Result<Self, Error> {
        let key: KeyFile = serde_json::from_str(json).map_err(|error| {
            auth_error(format!(
                "the Google credentials are not a key file's JSON: {error}"
            ))
        })?;
        let missing = |field: &str| {
            auth_error(format!(
                "the Google credentials of type `{}` have no `{field}`; download the key again",
                key.kind
            ))
        };
        let token_uri = key
            .token_uri
            .clone()
            .unwrap_or_else(|| DEFAULT_TOKEN_URI.to_owned());
        let source = match key.kind.as_str() {
            "service_account" => Source::ServiceAccount {
                client_email: key
                    .client_email
                    .clone()
                    .ok_or_else(|| missing("client_email"))?,
                private_key: SecretString::from(
                    key.private_key
                        .clone()
                        .ok_or_else(|| missing("private_key"))?,
                ),
                private_key_id: key.private_key_id.clone(),
                token_uri,
                project_id: key.project_id.clone(),
            },
            "authorized_user" => Source::AuthorizedUser {
                client_id: key.client_id.clone().ok_or_else(|| missing("client_id"))?,
                client_secret: SecretString::from(
                    key.client_secret
                        .clone()
                        .ok_or_else(|| missing("client_secret"))?,
                ),
                refresh_token: SecretString::from(
                    key.refresh_token
                        .clone()
                        .ok_or_else(|| missing("refresh_token"))?,
                ),
                token_uri,
                quota_project_id: key.quota_project_id.clone(),
            },
            other => {
                return Err(auth_error(format!(
                    "Google credentials of type `{other}` are not supported; use a service-account key, `gcloud auth application-default login`, or the metadata server"
                )));
            }
        };
        Ok(Self::with_source(source))
    }

    /// The metadata server at `base` (`http://metadata.google.internal` on Google Cloud).
    pub fn metadata_server(base: impl Into<String>) -> Self {
        Self::with_source(Source::MetadataServer {
            base: base.into().trim_end_matches('/').to_owned(),
        })
    }

    fn with_source(source: Source) -> Self {
        Self {
            source: Arc::new(source),
            clock: Arc::new(SystemClock),
            cached: Arc::new(tokio::sync::Mutex::new(None)),
        }
    }

    /// Reads the time from `clock` instead of the system's (for tests of expiry).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The project the credentials belong to, when they say: a service account's `project_id`,
    /// an authorized user's `quota_project_id`.
    pub(crate) fn project(&self) -> Option<&str> {
        match &*self.source {
            Source::ServiceAccount { project_id, .. } => project_id.as_deref(),
            Source::AuthorizedUser {
                quota_project_id, ..
            } => quota_project_id.as_deref(),
            Source::MetadataServer { .. } => None,
        }
    }

    /// A valid access token: the cached one while it has more than the margin left, else a new
    /// one (one fetch at a time; calls waiting meanwhile get the new token).
    pub(crate) async fn token(&self, client: &reqwest::Client) -> Result<SecretString, Error> {
        let mut cached = self.cached.lock().await;
        let now = self.clock.now();
        if let Some(token) = cached
            .as_ref()
            .filter(|token| token.expires_at - now > REFRESH_MARGIN_SECONDS)
        {
            return Ok(token.value.clone());
        }
        let token = self.fetch(client, now).await?;
        let value = token.value.clone();
        *cached = Some(token);
        Ok(value)
    }

    /// Forgets the cached token `rejected`, so that the next call fetches a new one (after the
    /// model API refused it).
    pub(crate) async fn invalidate(&self, rejected: &SecretString) {
        let mut cached = self.cached.lock().await;
        if cached
            .as_ref()
            .is_some_and(|token| token.value.expose_secret() == rejected.expose_secret())
        {
            *cached = None;
        }
    }

    async fn fetch(&self, client: &reqwest::Client, now: f64) -> Result<Token, Error> {
        let (request, endpoint) = match &*self.source {
            Source::ServiceAccount {
                client_email,
                private_key,
                private_key_id,
                token_uri,
                ..
            } => {
                let assertion = sign_assertion(
                    client_email,
                    private_key,
                    private_key_id.as_deref(),
                    token_uri,
                    now,
                )?;
                let form = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ];
                (client.post(token_uri).form(&form), token_uri.clone())
            }
            Source::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
                ..
            } => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.expose_secret()),
                    ("refresh_token", refresh_token.expose_secret()),
                ];
                (client.post(token_uri).form(&form), token_uri.clone())
            }
            Source::MetadataServer { base } => {
                let url = format!(
                    "{base}/computeMetadata/v1/instance/service-accounts/default/token?scopes={CLOUD_PLATFORM_SCOPE}"
                );
                (client.get(&url).header("Metadata-Flavor", "Google"), url)
            }
        };
        let shown = crate::error::shown_url(&endpoint);
        let response = request.timeout(TOKEN_TIMEOUT).send().await.map_err(|error| {
            let hint = if matches!(&*self.source, Source::MetadataServer { .. }) {
                "; outside Google Cloud, set GOOGLE_APPLICATION_CREDENTIALS to a key file or run `gcloud auth application-default login`"
            } else {
                ""
            };
            auth_error(format!(
                "could not get a Google access token from {shown}: {}{hint}",
                error.without_url()
            ))
        })?;
        let status = response.status();
        let body = read_limited(response).await?;
        if !status.is_success() {
            let detail: String = body.chars().take(300).collect();
            return Err(auth_error(format!(
                "{shown} refused to give a Google access token (HTTP {status}): {detail}; check the credentials and that they may use Vertex AI"
            ))
            .with_body(body));
        }
        let answer: TokenAnswer = serde_json::from_str(&body).map_err(|error| {
            auth_error(format!(
                "the token answer of {shown} is not what Google's token endpoints send: {error}"
            ))
        })?;
        Ok(Token {
            value: SecretString::from(answer.access_token),
            expires_at: now + answer.expires_in.unwrap_or(3600.0),
        })
    }
}

/// The signed JWT a service account exchanges for a token: RS256 over its key, valid an hour.
fn sign_assertion(
    client_email: &str,
    private_key: &SecretString,
    private_key_id: Option<&str>,
    token_uri: &str,
    now: f64,
) -> Result<String, Error> {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_key.expose_secret().as_bytes())
        .map_err(|error| {
            auth_error(format!(
                "the service account's private key is not an RSA key in PEM: {error}; download the key again"
            ))
        })?;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = private_key_id.map(str::to_owned);
    let iat = now.max(0.0) as u64;
    let claims = Claims {
        iss: client_email,
        scope: CLOUD_PLATFORM_SCOPE,
        aud: token_uri,
        iat,
        exp: iat + 3600,
    };
    jsonwebtoken::encode(&header, &claims, &key).map_err(|error| {
        auth_error(format!(
            "could not sign the service account's token request: {error}"
        ))
    })
}

async fn read_limited(mut response: reqwest::Response) -> Result<String, Error> {
    let mut body = Vec::new();
    while body.len() < MAX_TOKEN_ANSWER_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(error) => {
                return Err(auth_error(format!(
                    "the token endpoint's answer broke off: {}",
                    error.without_url()
                )));
            }
        }
    }
    body.truncate(MAX_TOKEN_ANSWER_BYTES);
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn auth_error(message: String) -> Error {
    Error::new(ErrorKind::Auth, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_are_read_and_never_shown() {
        let user = GoogleCredentials::from_json(
            r#"{"type":"authorized_user","client_id":"id","client_secret":"very-secret","refresh_token":"refresh-secret","quota_project_id":"proj"}"#,
        )
        .unwrap();
        assert_eq!(user.project(), Some("proj"));
        let shown = format!("{user:?}");
        assert!(!shown.contains("secret"), "{shown}");
        let error = GoogleCredentials::from_json(r#"{"type":"external_account"}"#).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Auth);
        assert!(error.to_string().contains("external_account"), "{error}");
        let error = GoogleCredentials::from_json(r#"{"type":"service_account"}"#).unwrap_err();
        assert!(error.to_string().contains("client_email"), "{error}");
    }
}
