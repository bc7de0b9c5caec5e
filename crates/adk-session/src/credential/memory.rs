//! [`InMemoryCredentialService`]: credentials in the process's memory, for tests and single runs.

use std::collections::HashMap;

use adk_core::{CredentialKey, CredentialService, StoredCredential};
use async_trait::async_trait;
use parking_lot::Mutex;

/// Credentials kept in this process's memory and lost when it ends (nothing reaches a disk, so
/// nothing is encrypted).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use adk_core::{CredentialKey, CredentialService, StoredCredential};
/// use adk_session::InMemoryCredentialService;
/// use serde_json::json;
///
/// let credentials = InMemoryCredentialService::new();
/// let key = CredentialKey::new("app", "ada", "mail");
/// credentials.save(&key, StoredCredential::new(json!({"accessToken": "t0k"}))).await?;
/// assert_eq!(credentials.load(&key).await?.unwrap().value()["accessToken"], "t0k");
/// # Ok::<(), adk_core::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct InMemoryCredentialService {
    credentials: Mutex<HashMap<CredentialKey, StoredCredential>>,
}

impl InMemoryCredentialService {
    /// An empty service.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl CredentialService for InMemoryCredentialService {
    async fn load(&self, key: &CredentialKey) -> adk_core::Result<Option<StoredCredential>> {
        Ok(self.credentials.lock().get(key).cloned())
    }

    async fn save(
        &self,
        key: &CredentialKey,
        credential: StoredCredential,
    ) -> adk_core::Result<()> {
        self.credentials.lock().insert(key.clone(), credential);
        Ok(())
    }

    async fn delete(&self, key: &CredentialKey) -> adk_core::Result<()> {
        self.credentials.lock().remove(key);
        Ok(())
    }
}
