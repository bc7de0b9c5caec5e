//! The SQL credential services: [`SqliteCredentialService`] and [`PostgresCredentialService`],
//! one table (`adk_credentials`) written once over [`SqlCredentials`], each credential sealed by
//! the [`CredentialCipher`] before it is written.

use adk_core::{CredentialKey, StoredCredential};
use sqlx::{
    Arguments, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row,
    SqlSafeStr, SqlStr, Type,
};

use super::CredentialCipher;
use crate::error::{Error, Result};

/// The statements of one database.
pub(crate) struct Statements {
    /// Creates the table when it is missing.
    pub(crate) create: &'static str,
    /// Binds app, user, key; returns the sealed value.
    pub(crate) load: &'static str,
    /// Binds app, user, key and the sealed value; inserts or replaces.
    pub(crate) save: &'static str,
    /// Binds app, user, key.
    pub(crate) delete: &'static str,
}

/// Credentials sealed in one table of database `D`.
#[derive(Debug)]
pub(crate) struct SqlCredentials<D: Database> {
    pool: Pool<D>,
    cipher: CredentialCipher,
    statements: &'static Statements,
}

// `Statements` holds only text; `Debug` of the service names none of it.
impl std::fmt::Debug for Statements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Statements")
    }
}

impl<D: Database> SqlCredentials<D>
where
    for<'c> &'c Pool<D>: Executor<'c, Database = D>,
    for<'q> D::Arguments: IntoArguments<D>,
    for<'q> &'q str: Encode<'q, D> + Type<D>,
    Vec<u8>: for<'q> Encode<'q, D> + for<'r> Decode<'r, D> + Type<D>,
    usize: ColumnIndex<D::Row>,
{
    /// The service over `pool`, with its table created when missing.
    pub(crate) async fn prepare(
        pool: Pool<D>,
        cipher: CredentialCipher,
        statements: &'static Statements,
    ) -> Result<Self> {
        sqlx::query(sql(statements.create))
            .execute(&pool)
            .await
            .map_err(|error| Error::storage("creating the table adk_credentials", error))?;
        Ok(Self {
            pool,
            cipher,
            statements,
        })
    }

    pub(crate) async fn load(&self, key: &CredentialKey) -> Result<Option<StoredCredential>> {
        let row = sqlx::query_with(sql(self.statements.load), key_args::<D>(key)?)
            .fetch_optional(&self.pool)
            .await
            .map_err(|error| Error::storage(format!("loading credential {key}"), error))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let sealed: Vec<u8> = row
            .try_get(0)
            .map_err(|error| Error::corrupt(format!("reading credential {key}"), error))?;
        let plain = self.cipher.open(key, &sealed)?;
        let value = serde_json::from_slice(&plain)
            .map_err(|error| Error::corrupt(format!("reading credential {key}"), error))?;
        Ok(Some(StoredCredential::new(value)))
    }

    pub(crate) async fn save(
        &self,
        key: &CredentialKey,
        credential: &StoredCredential,
    ) -> Result<()> {
        let plain = serde_json::to_vec(credential.value())
            .map_err(|error| Error::corrupt(format!("writing credential {key}"), error))?;
        let sealed = self.cipher.seal(key, &plain)?;
        let mut args = key_args::<D>(key)?;
        args.add(sealed)
            .map_err(|error| Error::storage("binding a statement's arguments", error))?;
        sqlx::query_with(sql(self.statements.save), args)
            .execute(&self.pool)
            .await
            .map_err(|error| Error::storage(format!("storing credential {key}"), error))?;
        Ok(())
    }

    pub(crate) async fn delete(&self, key: &CredentialKey) -> Result<()> {
        sqlx::query_with(sql(self.statements.delete), key_args::<D>(key)?)
            .execute(&self.pool)
            .await
            .map_err(|error| Error::storage(format!("deleting credential {key}"), error))?;
        Ok(())
    }

    pub(crate) async fn close(&self) {
        self.pool.close().await;
    }
}

/// A statement as sqlx takes it (converted outside the async code, as the session store does).
fn sql(statement: &'static str) -> SqlStr {
    statement.into_sql_str()
}

/// App, user and credential name, the arguments every statement starts with.
fn key_args<D: Database>(key: &CredentialKey) -> Result<D::Arguments>
where
    for<'q> &'q str: Encode<'q, D> + Type<D>,
{
    let mut args = D::Arguments::default();
    for part in [&key.app_name, &key.user_id, &key.name] {
        args.add(part.as_str())
            .map_err(|error| Error::storage("binding a statement's arguments", error))?;
    }
    Ok(args)
}
