//! `cargo deny`: the dependency policy of `deny.toml` (licences, banned duplicates, sources),
//! checked by a pinned `cargo-deny` that xtask installs into the user cache on first use.
// The installer reports its progress on stdout, like the rest of the pipeline.
#![allow(clippy::print_stdout)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// The `cargo-deny` release used (built from crates.io with `--locked`).
pub const CARGO_DENY_VERSION: &str = "0.20.2";

/// The environment variable that overrides where tools are installed.
pub const TOOLS_DIR_ENV: &str = "ADK_TOOLS_DIR";

/// The checks run: the licence allow-list, the banned duplicates and the allowed sources.
/// Advisories are left out: their database is fetched from GitHub, which CI cannot reach.
pub const CHECKS: &[&str] = &["licenses", "bans", "sources"];

/// Where tools are installed: `$ADK_TOOLS_DIR`, else `$HOME/.cache/adk-rs/tools`.
pub fn tools_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(TOOLS_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .with_context(|| format!("neither {TOOLS_DIR_ENV} nor HOME is set; set {TOOLS_DIR_ENV}"))?;
    Ok(Path::new(&home).join(".cache/adk-rs/tools"))
}

/// The `cargo-deny` binary of version [`CARGO_DENY_VERSION`] under `root`, installed there with
/// `cargo install --locked` unless it already is. Idempotent: a second call only checks the
/// version.
pub fn ensure_installed(root: &Path) -> anyhow::Result<PathBuf> {
    let binary = root
        .join("bin")
        .join(format!("cargo-deny{}", std::env::consts::EXE_SUFFIX));
    if installed_version(&binary).as_deref() == Some(CARGO_DENY_VERSION) {
        return Ok(binary);
    }
    println!(
        "ci: installing cargo-deny {CARGO_DENY_VERSION} into {} (once; a few minutes)",
        root.display()
    );
    let status = Command::new(cargo())
        .args(install_args(root))
        .status()
        .context("could not start cargo install")?;
    if !status.success() {
        bail!("cargo install cargo-deny {CARGO_DENY_VERSION} failed ({status})");
    }
    match installed_version(&binary) {
        Some(version) if version == CARGO_DENY_VERSION => Ok(binary),
        other => bail!(
            "after installing, {} reports version {other:?}, not {CARGO_DENY_VERSION}",
            binary.display()
        ),
    }
}

/// `cargo install`'s arguments for the pinned release into `root`.
pub fn install_args(root: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["install", "--locked", "cargo-deny", "--version"]
        .map(OsString::from)
        .into();
    args.push(CARGO_DENY_VERSION.into());
    args.push("--root".into());
    args.push(root.into());
    args
}

/// Runs `cargo deny check licenses bans sources` on the workspace at `workspace`.
pub fn check(workspace: &Path) -> anyhow::Result<()> {
    let binary = ensure_installed(&tools_dir()?)?;
    // The inclusion graphs of the duplicate warnings would run to thousands of lines.
    let status = Command::new(&binary)
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

/// The version `binary --version` reports (`cargo-deny 0.20.2`), if it runs.
fn installed_version(binary: &Path) -> Option<String> {
    let output = Command::new(binary).arg("--version").output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}

/// The cargo that launched xtask, or `cargo` from `PATH`.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_release_is_installed_locked_into_the_tools_dir() {
        let args: Vec<String> = install_args(Path::new("/cache/tools"))
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "install",
                "--locked",
                "cargo-deny",
                "--version",
                CARGO_DENY_VERSION,
                "--root",
                "/cache/tools"
            ]
        );
        assert_eq!(CHECKS, ["licenses", "bans", "sources"]);
    }
}
