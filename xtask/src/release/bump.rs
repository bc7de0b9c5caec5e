//! Bumping the workspace's version in the root `Cargo.toml`: `workspace.package.version` and the
//! `version = "=X"` of every published crate's entry in `[workspace.dependencies]`.
//!
//! The edits replace only those string values, found by their spans in the parsed manifest, so
//! comments, layout and every other line stay as they were.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context as _, bail};
use semver::Version;
use toml::de::{DeTable, DeValue};

use crate::tidy::layering::get;

/// One replaced value in the root manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changes, for a person: `workspace.package.version` or `adk-core`.
    pub what: String,
    /// The value before, as written (without quotes).
    pub before: String,
    /// The value after.
    pub after: String,
    /// The byte range of the quoted string in the manifest.
    range: Range<usize>,
}

/// The version written in `workspace.package.version` of the root manifest's text.
pub fn workspace_version(manifest: &str) -> anyhow::Result<Version> {
    let document = DeTable::parse(manifest).map_err(|err| anyhow::anyhow!("{}", err.message()))?;
    let (_, version) = workspace_version_value(document.get_ref())?;
    Version::parse(&version).with_context(|| {
        format!("workspace.package.version {version:?} in Cargo.toml is not a semantic version")
    })
}

/// The changes that bump the root manifest's text to `version`: the workspace's version and the
/// requirement of every `[workspace.dependencies]` entry whose `path` is one of `published`
/// (directories relative to the root, such as `crates/adk-core`).
pub fn plan(manifest: &str, published: &[&Path], version: &Version) -> anyhow::Result<Vec<Change>> {
    let document = DeTable::parse(manifest).map_err(|err| anyhow::anyhow!("{}", err.message()))?;
    let document = document.get_ref();
    let (range, before) = workspace_version_value(document)?;
    let mut changes = vec![Change {
        what: "workspace.package.version".to_owned(),
        before,
        after: version.to_string(),
        range,
    }];
    let Some(DeValue::Table(workspace)) = get(document, "workspace") else {
        bail!("Cargo.toml has no [workspace]");
    };
    let Some(DeValue::Table(dependencies)) = get(workspace, "dependencies") else {
        bail!("Cargo.toml has no [workspace.dependencies]");
    };
    let mut missing = Vec::new();
    for (key, value) in dependencies.iter() {
        let DeValue::Table(entry) = value.get_ref() else {
            continue;
        };
        let Some(DeValue::String(path)) = get(entry, "path") else {
            continue;
        };
        if !published.iter().any(|dir| Path::new(path.as_ref()) == *dir) {
            continue;
        }
        let requirement = entry
            .iter()
            .find(|(field, _)| field.get_ref() == "version")
            .map(|(_, value)| value);
        match requirement {
            Some(spanned) if matches!(spanned.get_ref(), DeValue::String(_)) => {
                let DeValue::String(before) = spanned.get_ref() else {
                    unreachable!("matched as a string just above");
                };
                changes.push(Change {
                    what: format!("[workspace.dependencies] {}", key.get_ref()),
                    before: before.to_string(),
                    after: format!("={version}"),
                    range: spanned.span(),
                });
            }
            _ => missing.push(key.get_ref().to_string()),
        }
    }
    if !missing.is_empty() {
        bail!(
            "[workspace.dependencies] gives no version for the published crates {}: write \
             `version = \"={}\"` beside their path",
            missing.join(", "),
            changes[0].before
        );
    }
    Ok(changes)
}

/// `manifest` with `changes` applied.
pub fn apply(manifest: &str, changes: &[Change]) -> String {
    let mut ordered: Vec<&Change> = changes.iter().collect();
    ordered.sort_by_key(|change| std::cmp::Reverse(change.range.start));
    let mut text = manifest.to_owned();
    for change in ordered {
        text.replace_range(change.range.clone(), &format!("\"{}\"", change.after));
    }
    text
}

/// The span and value of `workspace.package.version`.
fn workspace_version_value(document: &DeTable<'_>) -> anyhow::Result<(Range<usize>, String)> {
    let version = match get(document, "workspace") {
        Some(DeValue::Table(workspace)) => match get(workspace, "package") {
            Some(DeValue::Table(package)) => package
                .iter()
                .find(|(key, _)| key.get_ref() == "version")
                .map(|(_, value)| value),
            _ => None,
        },
        _ => None,
    };
    match version {
        Some(spanned) => match spanned.get_ref() {
            DeValue::String(text) => Ok((spanned.span(), text.to_string())),
            _ => bail!("workspace.package.version in Cargo.toml is not a string"),
        },
        None => bail!("Cargo.toml has no workspace.package.version"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"[workspace]
members = ["crates/*"]

[workspace.package]
# The version every crate shares.
version = "0.1.0"
edition = "2024"

[workspace.dependencies]
adk-core = { version = "=0.1.0", path = "crates/adk-core" }
adk-flow = { path = "crates/adk-flow", version = "=0.1.0" }  # keeps this comment
adk-test = { path = "crates/adk-test" }
serde = { version = "0.1.0", features = ["derive"] }
"#;

    fn published() -> Vec<&'static Path> {
        vec![Path::new("crates/adk-core"), Path::new("crates/adk-flow")]
    }

    #[test]
    fn the_workspace_version_is_read() {
        assert_eq!(workspace_version(MANIFEST).unwrap(), Version::new(0, 1, 0));
    }

    #[test]
    fn a_bump_changes_the_version_and_the_published_crates_requirements_alone() {
        let version = Version::new(0, 2, 0);
        let changes = plan(MANIFEST, &published(), &version).unwrap();
        let summary: Vec<_> = changes
            .iter()
            .map(|c| format!("{}: {} -> {}", c.what, c.before, c.after))
            .collect();
        assert_eq!(
            summary,
            [
                "workspace.package.version: 0.1.0 -> 0.2.0",
                "[workspace.dependencies] adk-core: =0.1.0 -> =0.2.0",
                "[workspace.dependencies] adk-flow: =0.1.0 -> =0.2.0",
            ]
        );
        let bumped = apply(MANIFEST, &changes);
        let expected = MANIFEST
            .replace(
                "version = \"0.1.0\"\nedition",
                "version = \"0.2.0\"\nedition",
            )
            .replace("\"=0.1.0\"", "\"=0.2.0\"");
        assert_eq!(bumped, expected);
        assert_eq!(workspace_version(&bumped).unwrap(), version);
    }

    #[test]
    fn a_published_crate_without_a_version_is_refused() {
        let manifest = MANIFEST.replace(
            "adk-core = { version = \"=0.1.0\", path",
            "adk-core = { path",
        );
        let err = plan(&manifest, &published(), &Version::new(0, 2, 0))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "[workspace.dependencies] gives no version for the published crates adk-core: write \
             `version = \"=0.1.0\"` beside their path"
        );
    }
}
