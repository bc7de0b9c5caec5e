//! The backends the session conformance suite runs against, each in fresh storage.

use std::sync::Arc;

use adk_core::{IdGen, SessionService, UuidIdGen};
use adk_session::{InMemorySessionService, PostgresSessionService, SqliteSessionService};
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool};

/// A session service on fresh storage, and what to clean up after the test.
pub(crate) struct Fixture {
    pub(crate) service: Arc<dyn SessionService>,
    cleanup: Cleanup,
}

enum Cleanup {
    Nothing,
    /// The temporary directory of a SQLite file, removed when dropped.
    Directory(tempfile::TempDir),
    /// A PostgreSQL schema of this test, dropped at the end.
    Schema {
        admin: PgPool,
        service: PostgresSessionService,
        schema: String,
    },
}

impl Fixture {
    /// The service, borrowed.
    pub(crate) fn borrowed(&self) -> &dyn SessionService {
        self.service.as_ref()
    }

    /// The service's `Arc`, for tests that hand it to spawned tasks.
    pub(crate) fn shared(&self) -> &Arc<dyn SessionService> {
        &self.service
    }

    /// Removes the test's storage.
    pub(crate) async fn teardown(self) {
        drop(self.service);
        match self.cleanup {
            Cleanup::Nothing => {}
            Cleanup::Directory(dir) => dir.close().expect("removing the temporary directory"),
            Cleanup::Schema {
                admin,
                service,
                schema,
            } => {
                service.close().await;
                sqlx::query(AssertSqlSafe(format!(
                    "DROP SCHEMA IF EXISTS {schema} CASCADE"
                )))
                .execute(&admin)
                .await
                .expect("dropping the test schema");
                admin.close().await;
            }
        }
    }
}

/// An in-memory service.
pub(crate) async fn in_memory() -> Option<Fixture> {
    Some(Fixture {
        service: Arc::new(InMemorySessionService::new()),
        cleanup: Cleanup::Nothing,
    })
}

/// A SQLite service on a file in a fresh temporary directory.
pub(crate) async fn sqlite() -> Option<Fixture> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let service = SqliteSessionService::open(dir.path().join("sessions.db"))
        .await
        .expect("opening SQLite");
    Some(Fixture {
        service: Arc::new(service),
        cleanup: Cleanup::Directory(dir),
    })
}

/// A PostgreSQL service in a fresh schema of the database at `$ADK_POSTGRES_URL`; `None` (after a
/// loud notice) when the variable is unset outside CI. In CI (`CI` set) a missing URL fails.
pub(crate) async fn postgres() -> Option<Fixture> {
    let url = postgres_url()?;
    let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
    let admin = PgPool::connect_with(options.clone())
        .await
        .expect("connecting to ADK_POSTGRES_URL");
    let schema = format!("adk_test_{}", UuidIdGen.new_uuid().replace('-', ""));
    sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&admin)
        .await
        .expect("creating the test schema");
    let service =
        PostgresSessionService::connect_with(options.options([("search_path", schema.as_str())]))
            .await
            .expect("connecting the service");
    Some(Fixture {
        service: Arc::new(service.clone()),
        cleanup: Cleanup::Schema {
            admin,
            service,
            schema,
        },
    })
}

/// The PostgreSQL URL, or `None` after reporting the calling test as skipped (see
/// [`adk_test::postgres_url`]; in CI a missing URL fails).
pub(crate) fn postgres_url() -> Option<String> {
    adk_test::postgres_url()
}

/// A fresh schema named `{prefix}_{pid}` of the database at `$ADK_POSTGRES_URL` (dropped first if
/// an earlier run left it): an admin pool, and connection options whose `search_path` is the
/// schema. `None` as [`postgres_url`] says.
pub(crate) async fn fresh_schema(prefix: &str) -> Option<(PgPool, PgConnectOptions, String)> {
    let url = postgres_url()?;
    let options: PgConnectOptions = url.parse().expect("a valid ADK_POSTGRES_URL");
    let admin = PgPool::connect_with(options.clone())
        .await
        .expect("connecting to ADK_POSTGRES_URL");
    let schema = format!("{prefix}_{}", std::process::id());
    sqlx::raw_sql(AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    )))
    .execute(&admin)
    .await
    .expect("creating the test schema");
    let options = options.options([("search_path", schema.as_str())]);
    Some((admin, options, schema))
}

/// Drops a schema of [`fresh_schema`] and closes the admin pool.
pub(crate) async fn drop_schema(admin: PgPool, schema: &str) {
    sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&admin)
        .await
        .expect("dropping the test schema");
    admin.close().await;
}
