//! Which layout a database holds when a service opens it, and what opening it must do.
//!
//! adk-rs stores sessions in ADK Python's v1 tables (`adk_internal_metadata` with
//! `schema_version` 1), adding a session revision and an event position that ADK Python never
//! reads. Opening recognises four layouts and brings each to that one.

use crate::error::{Error, ErrorKind, Result};

/// The key of `adk_internal_metadata` naming the version of adk-rs's additions.
pub(crate) const ADK_RS_VERSION_KEY: &str = "adk_rs_schema_version";
/// The version of adk-rs's additions this build writes.
pub(crate) const ADK_RS_VERSION: &str = "1";
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
}

impl Found {
    /// Records what `adk_internal_metadata` holds, when the table exists. A table without ADK
    /// Python's version is its malformed case: refused by [`plan`](Self::plan), not guessed at.
    pub(crate) fn set_metadata(&mut self, python: Option<String>, adk_rs: Option<String>) {
        self.python_version = Some(python.unwrap_or_else(|| String::from("(missing)")));
        self.adk_rs_version = adk_rs;
    }

    /// The plan for this database, or why it cannot be opened.
    pub(crate) fn plan(&self) -> Result<Plan> {
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
            (Some(PYTHON_VERSION), Some(ADK_RS_VERSION)) => Ok(Plan::Ready),
            (Some(PYTHON_VERSION), Some(other)) => Err(unsupported(&format!(
                "its adk-rs additions are at version {other}, newer than this build's \
                 {ADK_RS_VERSION}; use a newer adk-rs"
            ))),
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
        assert_eq!(
            found(false, false, None, None).plan().unwrap(),
            Plan::Create
        );
        assert_eq!(
            found(true, true, None, None).plan().unwrap(),
            Plan::UpgradeLegacy
        );
        assert_eq!(
            found(true, false, Some("1"), None).plan().unwrap(),
            Plan::Adopt
        );
        assert_eq!(
            found(true, false, Some("1"), Some("1")).plan().unwrap(),
            Plan::Ready
        );
    }

    #[test]
    fn unknown_layouts_are_refused_with_a_reason() {
        let v0 = found(true, false, None, None).plan().unwrap_err();
        assert_eq!(v0.kind(), ErrorKind::Corrupt);
        assert!(v0.to_string().contains("adk migrate session"), "{v0}");
        let newer = found(true, false, Some("1"), Some("2")).plan().unwrap_err();
        assert!(newer.to_string().contains("newer adk-rs"), "{newer}");
        let python = found(true, false, Some("2"), None).plan().unwrap_err();
        assert!(
            python.to_string().contains("schema version is 2"),
            "{python}"
        );
    }
}
