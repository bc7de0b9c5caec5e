//! Credential services (`adk_core::CredentialService`): in memory, and in SQLite or PostgreSQL
//! with every credential encrypted at rest by a [`CredentialCipher`].

mod cipher;
mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

pub use cipher::{CREDENTIAL_KEY_ENV, CredentialCipher};
pub use memory::InMemoryCredentialService;

/// Implements `CredentialService` for a wrapper of `SqlCredentials`, whose field `inner` does
/// the work.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! sql_credential_service {
    ($name:ident) => {
        #[async_trait::async_trait]
        impl adk_core::CredentialService for $name {
            async fn load(
                &self,
                key: &adk_core::CredentialKey,
            ) -> adk_core::Result<Option<adk_core::StoredCredential>> {
                self.inner
                    .load(key)
                    .await
                    .map_err(crate::Error::into_credential)
            }

            async fn save(
                &self,
                key: &adk_core::CredentialKey,
                credential: adk_core::StoredCredential,
            ) -> adk_core::Result<()> {
                self.inner
                    .save(key, &credential)
                    .await
                    .map_err(crate::Error::into_credential)
            }

            async fn delete(&self, key: &adk_core::CredentialKey) -> adk_core::Result<()> {
                self.inner
                    .delete(key)
                    .await
                    .map_err(crate::Error::into_credential)
            }
        }

        impl $name {
            /// Closes the connections, waiting for work in progress.
            pub async fn close(&self) {
                self.inner.close().await;
            }
        }
    };
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::path::Path;
    use std::sync::Arc;

    use sqlx::{Sqlite, SqlitePool};

    use super::CredentialCipher;
    use super::sql::{SqlCredentials, Statements};
    use crate::Error;

    const STATEMENTS: Statements = Statements {
        create: "CREATE TABLE IF NOT EXISTS adk_credentials (\
                 app_name TEXT NOT NULL, user_id TEXT NOT NULL, credential_key TEXT NOT NULL, \
                 sealed BLOB NOT NULL, PRIMARY KEY (app_name, user_id, credential_key))",
        load: "SELECT sealed FROM adk_credentials \
               WHERE app_name = ?1 AND user_id = ?2 AND credential_key = ?3",
        save: "INSERT INTO adk_credentials (app_name, user_id, credential_key, sealed) \
               VALUES (?1, ?2, ?3, ?4) ON CONFLICT (app_name, user_id, credential_key) \
               DO UPDATE SET sealed = excluded.sealed",
        delete: "DELETE FROM adk_credentials \
                 WHERE app_name = ?1 AND user_id = ?2 AND credential_key = ?3",
    };

    /// Credentials in a SQLite database (the sessions' own file, or another), each encrypted
    /// with ChaCha20-Poly1305 before it is written: the file holds no token in clear.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use adk_core::{CredentialKey, CredentialService, StoredCredential};
    /// use adk_session::{CredentialCipher, SqliteCredentialService};
    /// use serde_json::json;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// // In production: `CredentialCipher::from_env()?` (ADK_CREDENTIAL_KEY).
    /// let cipher = CredentialCipher::new([42; 32]);
    /// let credentials = SqliteCredentialService::open(dir.path().join("app.db"), cipher).await?;
    /// let key = CredentialKey::new("app", "ada", "mail");
    /// credentials.save(&key, StoredCredential::new(json!({"accessToken": "t0k"}))).await?;
    /// assert_eq!(credentials.load(&key).await?.unwrap().value()["accessToken"], "t0k");
    /// # Ok::<(), adk_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[derive(Debug, Clone)]
    pub struct SqliteCredentialService {
        inner: Arc<SqlCredentials<Sqlite>>,
    }

    impl SqliteCredentialService {
        /// Opens (creating when missing) the database at `path`, with its table
        /// `adk_credentials`.
        pub async fn open(
            path: impl AsRef<Path>,
            cipher: CredentialCipher,
        ) -> adk_core::Result<Self> {
            let pool = crate::sqlite::open_pool(path.as_ref())
                .await
                .map_err(Error::into_credential)?;
            Self::from_pool(pool, cipher).await
        }

        /// Uses `pool`, creating the table `adk_credentials` when missing.
        pub async fn from_pool(
            pool: SqlitePool,
            cipher: CredentialCipher,
        ) -> adk_core::Result<Self> {
            let inner = SqlCredentials::prepare(pool, cipher, &STATEMENTS)
                .await
                .map_err(Error::into_credential)?;
            Ok(Self {
                inner: Arc::new(inner),
            })
        }
    }

    sql_credential_service!(SqliteCredentialService);
}

#[cfg(feature = "postgres")]
mod postgres {
    use std::sync::Arc;

    use sqlx::postgres::PgPoolOptions;
    use sqlx::{PgPool, Postgres};

    use super::CredentialCipher;
    use super::sql::{SqlCredentials, Statements};
    use crate::Error;

    const STATEMENTS: Statements = Statements {
        create: "CREATE TABLE IF NOT EXISTS adk_credentials (\
                 app_name TEXT NOT NULL, user_id TEXT NOT NULL, credential_key TEXT NOT NULL, \
                 sealed BYTEA NOT NULL, PRIMARY KEY (app_name, user_id, credential_key))",
        load: "SELECT sealed FROM adk_credentials \
               WHERE app_name = $1 AND user_id = $2 AND credential_key = $3",
        save: "INSERT INTO adk_credentials (app_name, user_id, credential_key, sealed) \
               VALUES ($1, $2, $3, $4) ON CONFLICT (app_name, user_id, credential_key) \
               DO UPDATE SET sealed = excluded.sealed",
        delete: "DELETE FROM adk_credentials \
                 WHERE app_name = $1 AND user_id = $2 AND credential_key = $3",
    };

    /// Credentials in PostgreSQL (beside the sessions, or elsewhere), each encrypted with
    /// ChaCha20-Poly1305 before it is written: the database holds no token in clear.
    #[derive(Debug, Clone)]
    pub struct PostgresCredentialService {
        inner: Arc<SqlCredentials<Postgres>>,
    }

    impl PostgresCredentialService {
        /// Connects to the database at `url` (`postgres://user:password@host:port/database`),
        /// creating the table `adk_credentials` when missing.
        pub async fn connect(url: &str, cipher: CredentialCipher) -> adk_core::Result<Self> {
            let pool = PgPoolOptions::new()
                .max_connections(4)
                .connect(url)
                .await
                .map_err(|error| {
                    Error::storage("connecting to PostgreSQL", error).into_credential()
                })?;
            Self::from_pool(pool, cipher).await
        }

        /// Uses `pool`, creating the table `adk_credentials` when missing.
        pub async fn from_pool(pool: PgPool, cipher: CredentialCipher) -> adk_core::Result<Self> {
            let inner = SqlCredentials::prepare(pool, cipher, &STATEMENTS)
                .await
                .map_err(Error::into_credential)?;
            Ok(Self {
                inner: Arc::new(inner),
            })
        }
    }

    sql_credential_service!(PostgresCredentialService);
}

#[cfg(feature = "postgres")]
pub use postgres::PostgresCredentialService;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteCredentialService;
