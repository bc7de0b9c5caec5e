//! Bringing a SQLite database to the current layout when it is opened: ADK Python's v1 tables with
//! adk-rs's additions (see [`crate::sql::layout`]).

use sqlx::{Connection, SqliteConnection};

use crate::error::{Error, Result};
use crate::sql::layout::{ADK_RS_VERSION_KEY, Found, PYTHON_VERSION_KEY, Plan};

/// ADK Python's v1 tables, as its `DatabaseSessionService` creates them on SQLite.
const ADK_PYTHON_V1: &str = include_str!("../../schema/sqlite/adk_python_v1.sql");
/// The session revision and event position added to ADK Python's tables.
const ADK_RS_COLUMNS: &str = include_str!("../../schema/sqlite/adk_rs_columns.sql");
/// adk-rs's indexes, trigger and tables beside ADK Python's, and their version.
const ADK_RS_OBJECTS: &str = include_str!("../../schema/sqlite/adk_rs_objects.sql");
/// Upgrading the first layout of adk-rs: its tables set aside under other names.
const LEGACY_SET_ASIDE: &str = include_str!("../../schema/sqlite/legacy_set_aside.sql");
/// Upgrading the first layout of adk-rs: its rows copied into the new tables.
const LEGACY_COPY: &str = include_str!("../../schema/sqlite/legacy_copy.sql");

/// Brings the database behind `conn` to the current layout in one write transaction, so that two
/// processes opening one new file cannot both create it.
pub(crate) async fn prepare(conn: &mut SqliteConnection, what: &str) -> Result<()> {
    let storage = |error| Error::storage(format!("{what} (schema)"), error);
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(storage)?;
    let found = inspect(&mut tx).await.map_err(storage)?;
    let scripts: &[&'static str] = match found.plan()? {
        Plan::Ready => &[],
        Plan::Create => &[ADK_PYTHON_V1, ADK_RS_COLUMNS, ADK_RS_OBJECTS],
        Plan::Adopt => &[ADK_RS_COLUMNS, ADK_RS_OBJECTS],
        Plan::UpgradeLegacy => &[
            LEGACY_SET_ASIDE,
            ADK_PYTHON_V1,
            ADK_RS_COLUMNS,
            LEGACY_COPY,
            ADK_RS_OBJECTS,
        ],
    };
    for script in scripts {
        sqlx::raw_sql(*script)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
    }
    tx.commit().await.map_err(storage)
}

/// What the database holds.
async fn inspect(conn: &mut SqliteConnection) -> Result<Found, sqlx::Error> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name IN ('sessions', '_sqlx_migrations', 'adk_internal_metadata')",
    )
    .fetch_all(&mut *conn)
    .await?;
    let has = |name: &str| tables.iter().any(|table| table == name);
    let mut found = Found {
        sessions: has("sessions"),
        sqlx_migrations: has("_sqlx_migrations"),
        ..Found::default()
    };
    if has("adk_internal_metadata") {
        let read = |key: &'static str| {
            sqlx::query_scalar::<_, String>(
                "SELECT value FROM adk_internal_metadata WHERE \"key\" = ?",
            )
            .bind(key)
        };
        let python = read(PYTHON_VERSION_KEY).fetch_optional(&mut *conn).await?;
        let adk_rs = read(ADK_RS_VERSION_KEY).fetch_optional(&mut *conn).await?;
        found.set_metadata(python, adk_rs);
    }
    Ok(found)
}
