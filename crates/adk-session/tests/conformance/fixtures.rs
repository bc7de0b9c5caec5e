//! The backends the session conformance suite runs against, each in fresh storage.

use std::io::Write;
use std::sync::{Arc, Once};

use adk_core::{IdGen, SessionService, UuidIdGen};
use adk_session::{InMemorySessionService, PostgresSessionService, SqliteSessionService};
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool};

/// The environment variable holding the URL of the PostgreSQL the tests may use.
pub(crate) const POSTGRES_URL_ENV: &str = "ADK_POSTGRES_URL";

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

/// The PostgreSQL URL, or `None` after saying loudly that the PostgreSQL tests do not run and
/// reporting the calling test as skipped.
///
/// # Panics
///
/// In CI (`CI` set), when `ADK_POSTGRES_URL` is not: there the tests must run.
pub(crate) fn postgres_url() -> Option<String> {
    match std::env::var(POSTGRES_URL_ENV) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{POSTGRES_URL_ENV} is not set in CI: the PostgreSQL tests must run there")
        }
        _ => {
            // Each test that does not run says so on stdout, where `cargo xtask ci` counts it as
            // skipped.
            adk_test::report_skipped(&format!("{POSTGRES_URL_ENV} is not set"));
            // Straight to stderr, not through `eprintln!`: the test harness captures that, and
            // this notice must be seen. Once per test binary is loud enough.
            static NOTICE: Once = Once::new();
            NOTICE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** NOT RUN: the PostgreSQL tests were skipped because {POSTGRES_URL_ENV} \
                     is not set (e.g. postgres://adk:adk@127.0.0.1:5432/adk) ***\n"
                );
            });
            None
        }
    }
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
