//! `cargo-semver-checks` against the previous release, when there is one.
//!
//! A release is a `v<version>` git tag: the previous release of `<version>` is the highest such
//! tag below it. The tool is installed from crates.io at a pinned version into the tools cache
//! ([`crate::tools`]) the first time it is needed, and not before.
// The step reports what it does, or why it skips, on stdout.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use semver::Version;

use super::git;
use crate::tools::{Tool, tools_dir};

/// The pinned `cargo-semver-checks`.
pub const SEMVER_CHECKS: Tool = Tool {
    crate_name: "cargo-semver-checks",
    version: "0.51.0",
    binary: "cargo-semver-checks",
};

/// The release before `version` among `released`: the highest version below it.
pub fn previous_release<'a>(released: &'a [Version], version: &Version) -> Option<&'a Version> {
    released.iter().filter(|earlier| *earlier < version).max()
}

/// Checks the published crates of the workspace at `root` against the previous release of
/// `version`; returns why it skipped, if it did (the first release has nothing to compare with).
pub fn run(root: &Path, version: &Version) -> anyhow::Result<Option<String>> {
    let released = git::release_tags(root)?;
    let Some(previous) = previous_release(&released, version) else {
        let reason = format!(
            "no earlier release to compare with: no git tag v<version> below v{version} (this is \
             the first release)"
        );
        println!("\nrelease: cargo-semver-checks skipped: {reason}");
        return Ok(Some(reason));
    };
    let baseline = format!("v{previous}");
    println!("\nrelease: cargo-semver-checks against {baseline}");
    let binary = SEMVER_CHECKS.ensure_installed(&tools_dir()?)?;
    // `--workspace` checks the crates that are published and leaves the others out.
    let status = Command::new(binary)
        .args(["semver-checks", "--workspace", "--baseline-rev", &baseline])
        .current_dir(root)
        .status()
        .context("could not start cargo-semver-checks")?;
    if !status.success() {
        bail!(
            "cargo-semver-checks found changes since {baseline} that {version} does not allow \
             (it exited with {status}): choose a version that allows them or undo them"
        );
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_previous_release_is_the_highest_tag_below_the_version() {
        let released: Vec<Version> = ["0.2.0", "0.2.1", "0.3.0"]
            .iter()
            .map(|text| Version::parse(text).unwrap())
            .collect();
        let previous = |text: &str| {
            previous_release(&released, &Version::parse(text).unwrap()).map(Version::to_string)
        };
        assert_eq!(previous("0.3.0").as_deref(), Some("0.2.1"));
        assert_eq!(previous("0.4.0").as_deref(), Some("0.3.0"));
        assert_eq!(previous("0.2.0"), None);
        assert_eq!(previous("0.1.5"), None);
    }
}
