//! [`CredentialService`]: where the credentials tools act with on a user's behalf (OAuth2 tokens,
//! the state of a sign-in in progress) are kept, per app, user and credential key, outside the
//! session and its events. Implementations live in `adk-session`.

use std::fmt;

use async_trait::async_trait;
use serde_json::Value;

use crate::Result;

/// Which credential: the app and user it belongs to, and the tool's credential key (an OAuth2
/// client's sign-in, say).
///
/// ```
/// use adk_core::CredentialKey;
///
/// let key = CredentialKey::new("mail_app", "ada", "gmail_oauth");
/// assert_eq!(key.to_string(), "mail_app/ada/gmail_oauth");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct CredentialKey {
    /// The app.
    pub app_name: String,
    /// The user the credential acts for.
    pub user_id: String,
    /// The credential's name, as the tool that needs it says.
    pub name: String,
}

impl CredentialKey {
    /// The credential `name` of `user_id` in `app_name`.
    pub fn new(
        app_name: impl Into<String>,
        user_id: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            app_name: app_name.into(),
            user_id: user_id.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for CredentialKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.app_name, self.user_id, self.name)
    }
}

/// A stored credential: a JSON value that holds secrets (tokens, a PKCE verifier), whose shape
/// the tool that stores it decides.
///
/// Its `Debug` output never shows the value, so a credential logged by mistake leaks nothing.
///
/// ```
/// use adk_core::StoredCredential;
/// use serde_json::json;
///
/// let credential = StoredCredential::new(json!({"accessToken": "t0k"}));
/// assert_eq!(format!("{credential:?}"), "StoredCredential([REDACTED])");
/// assert_eq!(credential.value()["accessToken"], "t0k");
/// ```
#[derive(Clone, PartialEq)]
pub struct StoredCredential(Value);

impl StoredCredential {
    /// A credential holding `value`.
    pub fn new(value: Value) -> Self {
        Self(value)
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// The value, owned.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl fmt::Debug for StoredCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StoredCredential([REDACTED])")
    }
}

/// Keeps the credentials tools use on a user's behalf, one per [`CredentialKey`], out of the
/// session: a session's events and state are shown to clients and stored in clear, a credential
/// never is. Implementations that store credentials durably encrypt them.
#[async_trait]
pub trait CredentialService: Send + Sync {
    /// The credential stored under `key`, if any.
    async fn load(&self, key: &CredentialKey) -> Result<Option<StoredCredential>>;

    /// Stores `credential` under `key`, replacing what was there.
    async fn save(&self, key: &CredentialKey, credential: StoredCredential) -> Result<()>;

    /// Forgets the credential under `key` (nothing happens when there is none).
    async fn delete(&self, key: &CredentialKey) -> Result<()>;
}

crate::__into_shared!(
    /// A [`CredentialService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn CredentialService>`.
    IntoCredentialService,
    into_credential_service,
    CredentialService,
    "`{Self}` is not a credential service"
);
