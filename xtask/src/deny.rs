//! `cargo deny`: the dependency policy of `deny.toml` (licences, banned duplicates, sources),
//! checked by a pinned `cargo-deny` that xtask installs into the user cache on first use.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::tools::{Tool, tools_dir};

/// The `cargo-deny` release used (built from crates.io with `--locked`).
pub const CARGO_DENY: Tool = Tool {
    crate_name: "cargo-deny",
    version: "0.20.2",
    binary: "cargo-deny",
};

/// The checks run: the licence allow-list, the banned duplicates and the allowed sources.
/// Advisories are left out: their database is fetched from GitHub, which CI cannot reach.
pub const CHECKS: &[&str] = &["licenses", "bans", "sources"];

/// Runs `cargo deny check licenses bans sources` on the workspace at `workspace`, installing
/// the pinned `cargo-deny` first if needed.
pub fn check(workspace: &Path) -> anyhow::Result<()> {
    let binary = CARGO_DENY.ensure_installed(&tools_dir()?)?;
    check_with(workspace, &binary)
}

/// Runs the checks on the workspace at `workspace` with the `cargo-deny` at `binary`.
pub fn check_with(workspace: &Path, binary: &Path) -> anyhow::Result<()> {
    // The inclusion graphs of the duplicate warnings would run to thousands of lines.
    let status = Command::new(binary)
        .args(["check", "--hide-inclusion-graph"])
        .args(CHECKS)
        .current_dir(workspace)
        .status()
        .with_context(|| format!("could not start {}", binary.display()))?;
    if !status.success() {
        bail!("cargo deny found problems ({status}); see its report above and deny.toml");
    }
    Ok(())
}
