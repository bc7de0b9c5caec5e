//! Which layout a database holds when a service opens it, and what opening it must do.
//!
//! adk-rs stores sessions in ADK Python's v1 tables (`adk_internal_metadata` with
//! `schema_version` 1), adding a session revision and an event position that ADK Python never
//! reads. Opening recognises five layouts and brings each to that one.

use crate::error::{Error, ErrorKind, Result};

/// The key of `adk_internal_metadata` naming the version of adk-rs's additions.
pub(crate) const ADK_RS_VERSION_KEY: &str = "adk_rs_schema_version";
/// The key of `adk_internal_metadata` naming ADK Python's schema version.
pub(crate) const PYTHON_VERSION_KEY: &str = "schema_version";
/// ADK Python's schema version adk-rs reads and writes.
pub(crate) const PYTHON_VERSION: &str = "1";

/// What a database holds, read before anything is changed.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// A `sessions` table exists.
    pub(crate) sessions: bool,
    /// sqlx's `_sqlx_migrations` table exists: the first layout of adk-rs.
    pub(crate) sqlx_migrations: bool,
    /// `adk_internal_metadata`'s `schema_version`, when the table exists.
    pub(crate) python_version: Option<String>,
    /// `adk_internal_metadata`'s `adk_rs_schema_version`, when set.
    pub(crate) adk_rs_version: Option<String>,
}

/// What opening a database must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing: the database has the current layout.
    Ready,
    /// Create ADK Python's v1 tables and adk-rs's additions in an empty database.
    Create,
    /// Add adk-rs's columns and objects to ADK Python's v1 tables.
    Adopt,
    /// Upgrade adk-rs's first layout (the sqlx migrations `0001` and `0002`).
    UpgradeLegacy,
    /// Bring adk-rs's additions from an older version (this one) to the current one.
    Upgrade(u32),
}

impl Found {
    /// Records what `adk_internal_metadata` holds, when the table exists. A table without ADK
    /// Python's version is its malformed case: refused by [`plan`](Self::plan), not guessed at.
    pub(crate) fn set_metadata(&mut self, python: Option<String>, adk_rs: Option<String>) {
        self.python_version = Some(python.unwrap_or_else(|| String::from("(missing)")));
        self.adk_rs_version = adk_rs;
    }

    /// The plan for this database, whose current version of adk-rs's additions is `current`, or
    /// why it cannot be opened.
    pub(crate) fn plan(&self, current: u32) -> Result<Plan> {
        // ADK Python opening a database of the first layout adds its metadata table (and an
        // index) to it: `_sqlx_migrations` without adk-rs's version still means the first layout.
        if self.sqlx_migrations && self.adk_rs_version.is_none() {
            return Ok(Plan::UpgradeLegacy);
        }
        match (
            self.python_version.as_deref(),
            self.adk_rs_version.as_deref(),
        ) {
            (None, _) if !self.sessions => Ok(Plan::Create),
            (None, _) => Err(unsupported(
                "it has session tables but no `adk_internal_metadata`: ADK Python's legacy v0 \
                 schema (pickled events), which adk-rs does not read; migrate it with ADK \
                 Python's `adk migrate session` first",
            )),
            (Some(PYTHON_VERSION), None) => Ok(Plan::Adopt),
            (Some(PYTHON_VERSION), Some(found)) => match found.parse::<u32>() {
                Ok(found) if found == current => Ok(Plan::Ready),
                Ok(found) if (1..current).contains(&found) => Ok(Plan::Upgrade(found)),
                _ => Err(unsupported(&format!(
                    "its adk-rs additions are at version {found}, which this build (version \
                     {current}) does not know; use a newer adk-rs"
                ))),
            },
            (Some(other), _) => Err(unsupported(&format!(
                "ADK Python's schema version is {other}; adk-rs reads version {PYTHON_VERSION}"
            ))),
        }
    }
}

/// A database adk-rs cannot open.
fn unsupported(why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("the session database cannot be opened: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(sessions: bool, sqlx: bool, python: Option<&str>, adk_rs: Option<&str>) -> Found {
        Found {
            sessions,
            sqlx_migrations: sqlx,
            python_version: python.map(str::to_owned),
            adk_rs_version: adk_rs.map(str::to_owned),
        }
    }

    #[test]
    fn every_layout_has_its_plan() {
        for (found, plan) in [
            (found(false, false, None, None), Plan::Create),
            (found(true, true, None, None), Plan::UpgradeLegacy),
            (found(true, true, Some("1"), None), Plan::UpgradeLegacy),
            (found(true, false, Some("1"), None), Plan::Adopt),
            (found(true, false, Some("1"), Some("1")), Plan::Upgrade(1)),
            (found(true, false, Some("1"), Some("2")), Plan::Ready),
        ] {
            assert_eq!(found.plan(2).unwrap(), plan, "{found:?}");
        }
    }

    #[test]
    fn unknown_layouts_are_refused_with_a_reason() {
        for (found, reason) in [
            (found(true, false, None, None), "adk migrate session"),
            (found(true, false, Some("1"), Some("3")), "newer adk-rs"),
            (found(true, false, Some("1"), Some("0")), "newer adk-rs"),
            (found(true, false, Some("1"), Some("x")), "newer adk-rs"),
            (found(true, false, Some("2"), None), "schema version is 2"),
        ] {
            let error = found.plan(2).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Corrupt);
            assert!(error.to_string().contains(reason), "{error}");
        }
    }
}
