//! The test binaries of a build: `cargo test --no-run` compiles them and its JSON messages name
//! each one, with the package it belongs to.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::Value;

/// One compiled test binary and what `cargo test` would give it when running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBinary {
    /// The package the binary tests.
    pub package: String,
    /// The package's version, for `CARGO_PKG_VERSION`.
    pub version: String,
    /// The test target's name: `create` for `tests/create.rs`, the crate's name for its unit
    /// tests.
    pub target: String,
    /// The target's kind as cargo names it: `lib`, `bin` or `test`.
    pub kind: String,
    /// The compiled binary.
    pub executable: PathBuf,
    /// The package's directory: the binary's working directory and `CARGO_MANIFEST_DIR`.
    pub manifest_dir: PathBuf,
}

impl TestBinary {
    /// The binary's stable name across builds (its file name carries a hash that changes), such
    /// as `adk-cli test create` or `adk-core lib adk_core`.
    pub fn key(&self) -> String {
        format!("{} {} {}", self.package, self.kind, self.target)
    }

    /// The binary as one reads it in the run's output: `adk-cli tests/create` or `adk-core
    /// unit tests`.
    pub fn label(&self) -> String {
        match self.kind.as_str() {
            "test" => format!("{} tests/{}", self.package, self.target),
            "lib" => format!("{} unit tests", self.package),
            kind => format!("{} {kind} {}", self.package, self.target),
        }
    }

    /// The test binary one record of `cargo --message-format=json` names, if the record is
    /// the artifact of a test target with an executable.
    pub fn from_message(message: &Value) -> Option<Self> {
        if message.get("reason")?.as_str()? != "compiler-artifact"
            || !message.pointer("/profile/test")?.as_bool()?
        {
            return None;
        }
        let executable = PathBuf::from(message.get("executable")?.as_str()?);
        let manifest_dir = Path::new(message.get("manifest_path")?.as_str()?)
            .parent()?
            .to_path_buf();
        let target = message.get("target")?;
        let kind = target.pointer("/kind/0")?.as_str()?.to_owned();
        let (package, version) = package_name_and_version(message.get("package_id")?.as_str()?)?;
        Some(Self {
            package: package.unwrap_or_else(|| dir_name(&manifest_dir)),
            version,
            target: target.get("name")?.as_str()?.to_owned(),
            kind,
            executable,
            manifest_dir,
        })
    }
}

/// The name and version in a package id of cargo's JSON: `path+file:///x/adk-cli#0.1.0` (the
/// name is the folder's and is left out) or `path+file:///x/cli#adk-cli@0.1.0`.
fn package_name_and_version(id: &str) -> Option<(Option<String>, String)> {
    let (_, fragment) = id.rsplit_once('#')?;
    Some(match fragment.split_once('@') {
        Some((name, version)) => (Some(name.to_owned()), version.to_owned()),
        None => (None, fragment.to_owned()),
    })
}

/// The last component of `dir`, as text.
fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
}

/// Builds every test binary with `cargo <args> --no-run` in `root` (its diagnostics rendered on
/// stderr as usual) and returns them in cargo's order, each once.
///
/// # Errors
///
/// When cargo cannot start or the build fails.
pub(super) fn build(root: &Path, args: &[&str]) -> anyhow::Result<Vec<TestBinary>> {
    let mut child = Command::new(crate::tools::cargo())
        .args(args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .context("could not start cargo")?;
    let stdout = child
        .stdout
        .take()
        .context("cargo's stdout was not piped")?;
    let mut binaries: Vec<TestBinary> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.context("could not read cargo's output")?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(binary) = TestBinary::from_message(&message)
            && !binaries
                .iter()
                .any(|seen| seen.executable == binary.executable)
        {
            binaries.push(binary);
        }
    }
    let status = child.wait().context("could not wait for cargo")?;
    if !status.success() {
        bail!("building the tests failed: cargo exited with {status}");
    }
    Ok(binaries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artifact(package_id: &str, kind: &str, name: &str, test: bool) -> Value {
        json!({
            "reason": "compiler-artifact",
            "package_id": package_id,
            "manifest_path": "/src/crates/adk-cli/Cargo.toml",
            "target": { "kind": [kind], "name": name },
            "profile": { "test": test },
            "executable": format!("/target/debug/deps/{name}-0123abcd"),
            "fresh": true,
        })
    }

    #[test]
    fn an_integration_test_is_named_by_package_kind_and_target() {
        let binary = TestBinary::from_message(&artifact(
            "path+file:///src/crates/adk-cli#0.1.0",
            "test",
            "create",
            true,
        ))
        .unwrap();
        assert_eq!(binary.package, "adk-cli");
        assert_eq!(binary.version, "0.1.0");
        assert_eq!(binary.key(), "adk-cli test create");
        assert_eq!(binary.label(), "adk-cli tests/create");
        assert_eq!(binary.manifest_dir, Path::new("/src/crates/adk-cli"));
        assert_eq!(
            binary.executable,
            Path::new("/target/debug/deps/create-0123abcd")
        );
    }

    #[test]
    fn a_package_id_may_spell_out_the_name() {
        let binary = TestBinary::from_message(&artifact(
            "path+file:///src/xtask-dir#xtask@0.2.0",
            "lib",
            "xtask",
            true,
        ))
        .unwrap();
        assert_eq!(
            (binary.package.as_str(), binary.version.as_str()),
            ("xtask", "0.2.0")
        );
        assert_eq!(binary.label(), "xtask unit tests");
    }

    #[test]
    fn libraries_built_for_the_tests_and_other_records_are_not_test_binaries() {
        let mut library = artifact("path+file:///src/a#0.1.0", "lib", "a", false);
        assert_eq!(TestBinary::from_message(&library), None);
        library["profile"]["test"] = json!(true);
        library["executable"] = Value::Null;
        assert_eq!(TestBinary::from_message(&library), None);
        assert_eq!(
            TestBinary::from_message(&json!({ "reason": "build-finished", "success": true })),
            None
        );
    }
}
