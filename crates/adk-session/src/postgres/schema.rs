//! Bringing a PostgreSQL schema to the current layout when a service connects: ADK Python's v1
//! tables with adk-rs's additions (see [`crate::sql::layout`]).

use sqlx::{Connection, PgConnection};

use crate::error::{Error, Result};
use crate::sql::layout::{ADK_RS_VERSION_KEY, Found, PYTHON_VERSION_KEY, Plan};

/// ADK Python's v1 tables, as its `DatabaseSessionService` creates them on PostgreSQL.
const ADK_PYTHON_V1: &str = include_str!("../../schema/postgres/adk_python_v1.sql");
/// The session revision and event position added to ADK Python's tables.
const ADK_RS_COLUMNS: &str = include_str!("../../schema/postgres/adk_rs_columns.sql");
/// adk-rs's index, trigger and table beside ADK Python's, and their version.
const ADK_RS_OBJECTS: &str = include_str!("../../schema/postgres/adk_rs_objects.sql");
/// Upgrading the first layout of adk-rs in place.
const LEGACY_UPGRADE: &str = include_str!("../../schema/postgres/legacy_upgrade.sql");

/// Brings the schema `conn` writes to (the first of its `search_path`) to the current layout, in
/// one transaction under a transaction-scoped advisory lock, so that replicas starting together
/// change it once and the others wait, then find it ready.
pub(crate) async fn prepare(conn: &mut PgConnection) -> Result<()> {
    let storage = |error| Error::storage("preparing the PostgreSQL session tables", error);
    let mut tx = conn.begin().await.map_err(storage)?;
    sqlx::query(
        "SELECT pg_advisory_xact_lock(hashtext('adk-rs sessions layout ' || current_schema()))",
    )
    .execute(&mut *tx)
    .await
    .map_err(storage)?;
    let found = inspect(&mut tx).await.map_err(storage)?;
    let scripts: &[&'static str] = match found.plan()? {
        Plan::Ready => &[],
        Plan::Create => &[ADK_PYTHON_V1, ADK_RS_COLUMNS, ADK_RS_OBJECTS],
        Plan::Adopt => &[ADK_RS_COLUMNS, ADK_RS_OBJECTS],
        Plan::UpgradeLegacy => &[LEGACY_UPGRADE, ADK_RS_OBJECTS],
    };
    for script in scripts {
        sqlx::raw_sql(*script)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
    }
    tx.commit().await.map_err(storage)
}

/// What the schema holds.
async fn inspect(conn: &mut PgConnection) -> Result<Found, sqlx::Error> {
    let (sessions, sqlx_migrations, metadata): (bool, bool, bool) = sqlx::query_as(
        "SELECT to_regclass('sessions') IS NOT NULL, to_regclass('_sqlx_migrations') IS NOT NULL, \
         to_regclass('adk_internal_metadata') IS NOT NULL",
    )
    .fetch_one(&mut *conn)
    .await?;
    let mut found = Found {
        sessions,
        sqlx_migrations,
        ..Found::default()
    };
    if metadata {
        let read = |key: &'static str| {
            sqlx::query_scalar::<_, String>(
                "SELECT value FROM adk_internal_metadata WHERE key = $1",
            )
            .bind(key)
        };
        let python = read(PYTHON_VERSION_KEY).fetch_optional(&mut *conn).await?;
        let adk_rs = read(ADK_RS_VERSION_KEY).fetch_optional(&mut *conn).await?;
        found.set_metadata(python, adk_rs);
    }
    Ok(found)
}
