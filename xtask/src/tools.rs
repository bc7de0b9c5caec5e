//! Cargo subcommands xtask needs but the toolchain lacks, built once from crates.io at a pinned
//! version into the user cache (`~/.cache/adk-rs/tools`, or `ADK_TOOLS_DIR`).
// The installer reports its progress on stdout, like the rest of xtask.
#![allow(clippy::print_stdout)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// The environment variable that overrides where tools are installed.
pub const TOOLS_DIR_ENV: &str = "ADK_TOOLS_DIR";

/// A tool published on crates.io, pinned to one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The crate that holds the tool.
    pub crate_name: &'static str,
    /// The pinned version, installed with `--locked`.
    pub version: &'static str,
    /// The binary the crate installs.
    pub binary: &'static str,
}

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

impl Tool {
    /// The tool's binary under `root`, installed there with `cargo install --locked` unless the
    /// pinned version already is. A second call only asks the binary for its version.
    pub fn ensure_installed(&self, root: &Path) -> anyhow::Result<PathBuf> {
        if let Some(binary) = self.installed(root) {
            return Ok(binary);
        }
        println!(
            "installing {} {} into {} (once; it takes a few minutes)",
            self.crate_name,
            self.version,
            root.display()
        );
        let status = self
            .install_command(root)
            .status()
            .context("could not start cargo install")?;
        if !status.success() {
            bail!(
                "cargo install {} {} failed ({status})",
                self.crate_name,
                self.version
            );
        }
        self.check_installed(root)
    }

    /// The tool's binary under `root` if the pinned version is installed there.
    pub fn installed(&self, root: &Path) -> Option<PathBuf> {
        let binary = self.binary_in(root);
        (self.installed_version(&binary).as_deref() == Some(self.version)).then_some(binary)
    }

    /// The tool's binary under `root` after an install, or why it is not the pinned version.
    pub fn check_installed(&self, root: &Path) -> anyhow::Result<PathBuf> {
        let binary = self.binary_in(root);
        match self.installed_version(&binary) {
            Some(version) if version == self.version => Ok(binary),
            other => bail!(
                "after installing, {} reports version {other:?}, not {}",
                binary.display(),
                self.version
            ),
        }
    }

    /// The `cargo install` command that puts the pinned release under `root`.
    pub fn install_command(&self, root: &Path) -> Command {
        let mut command = Command::new(cargo());
        command.args(self.install_args(root));
        command
    }

    /// Where the binary lands under `root`.
    pub fn binary_in(&self, root: &Path) -> PathBuf {
        root.join("bin")
            .join(format!("{}{}", self.binary, std::env::consts::EXE_SUFFIX))
    }

    /// `cargo install`'s arguments for the pinned release into `root`.
    pub fn install_args(&self, root: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["install", "--locked", self.crate_name, "--version"]
            .map(OsString::from)
            .into();
        args.push(self.version.into());
        args.push("--root".into());
        args.push(root.into());
        args
    }

    /// The version the installed binary reports, if it runs. Cargo subcommands answer
    /// `--version` both as `cargo-x 1.2.3` and, called through cargo, as `x 1.2.3`: the version
    /// is the last word either way.
    fn installed_version(&self, binary: &Path) -> Option<String> {
        let mut command = Command::new(binary);
        // A cargo subcommand run directly expects its own name as the first argument.
        if let Some(subcommand) = self.binary.strip_prefix("cargo-") {
            command.arg(subcommand);
        }
        let output = command.arg("--version").output().ok()?;
        if !output.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&output.stdout);
        text.split_whitespace().last().map(str::to_owned)
    }
}

/// The cargo that launched xtask, or `cargo` from `PATH`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: Tool = Tool {
        crate_name: "cargo-example",
        version: "1.2.3",
        binary: "cargo-example",
    };

    #[test]
    fn a_tool_is_installed_locked_at_its_pinned_version_into_the_tools_dir() {
        let args: Vec<String> = TOOL
            .install_args(Path::new("/cache/tools"))
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "install",
                "--locked",
                "cargo-example",
                "--version",
                "1.2.3",
                "--root",
                "/cache/tools"
            ]
        );
        let binary = TOOL.binary_in(Path::new("/cache/tools"));
        assert!(binary.starts_with("/cache/tools/bin"));
        assert!(binary.ends_with(format!("cargo-example{}", std::env::consts::EXE_SUFFIX)));
    }

    #[test]
    fn a_missing_binary_has_no_version() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(TOOL.installed_version(&TOOL.binary_in(dir.path())), None);
    }
}
