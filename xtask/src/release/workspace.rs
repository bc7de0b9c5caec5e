//! The workspace's packages as `cargo metadata` describes them, with workspace inheritance
//! already applied: what the metadata check and the publish order read.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use semver::Version;
use serde_json::Value;

use crate::tidy::layering::{Tier, tier_of};
use crate::tools::cargo;

/// The kind of a dependency, as `cargo metadata` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// `[dependencies]`.
    Normal,
    /// `[dev-dependencies]`.
    Dev,
    /// `[build-dependencies]`.
    Build,
}

/// One dependency of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The depended-on package's real name (not the key it is renamed to).
    pub name: String,
    /// Which table declares it.
    pub kind: DepKind,
    /// The version requirement, `*` when none was written.
    pub req: String,
    /// Whether it is a path dependency.
    pub has_path: bool,
}

impl Dependency {
    /// Whether cargo leaves this dependency out of the manifest it publishes: a path-only
    /// dev-dependency (a test helper that is not published, say).
    pub fn stripped_when_published(&self) -> bool {
        self.kind == DepKind::Dev && self.has_path && self.req == "*"
    }
}

/// One package of the workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// The package name.
    pub name: String,
    /// Its version.
    pub version: Version,
    /// Its directory, relative to the workspace root.
    pub dir: PathBuf,
    /// Whether `cargo publish` may publish it (no `publish = false`).
    pub publish: bool,
    /// `package.description`.
    pub description: Option<String>,
    /// `package.license`.
    pub license: Option<String>,
    /// `package.repository`.
    pub repository: Option<String>,
    /// `package.readme`, relative to the package's directory.
    pub readme: Option<String>,
    /// `package.keywords`.
    pub keywords: Vec<String>,
    /// `package.categories`.
    pub categories: Vec<String>,
    /// `package.rust-version`.
    pub rust_version: Option<String>,
    /// `package.metadata.docs.rs`, if there is one.
    pub docs_rs: Option<Value>,
    /// The library target's root file, relative to the workspace root.
    pub lib_src: Option<PathBuf>,
    /// Its dependencies, of every kind.
    pub dependencies: Vec<Dependency>,
}

impl Package {
    /// Where the package sits in the layer table of `cargo xtask tidy`.
    pub fn tier(&self) -> Tier {
        tier_of(&self.name, &self.dir)
    }
}

/// The packages of the workspace at a root, sorted by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// The packages.
    pub packages: Vec<Package>,
}

impl Workspace {
    /// Reads the workspace at `root` with `cargo metadata --no-deps`, which resolves nothing and
    /// so needs no network.
    pub fn load(root: &Path) -> anyhow::Result<Self> {
        let output = Command::new(cargo())
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--offline",
            ])
            .current_dir(root)
            .output()
            .context("could not start cargo metadata")?;
        if !output.status.success() {
            bail!(
                "cargo metadata failed in {}: {}",
                root.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let metadata: Value =
            serde_json::from_slice(&output.stdout).context("cargo metadata printed no JSON")?;
        Self::from_metadata(&metadata)
    }

    /// The workspace described by `cargo metadata`'s JSON.
    pub fn from_metadata(metadata: &Value) -> anyhow::Result<Self> {
        let root = metadata["workspace_root"]
            .as_str()
            .context("cargo metadata has no workspace_root")?;
        let packages = metadata["packages"]
            .as_array()
            .context("cargo metadata has no packages")?;
        let mut packages = packages
            .iter()
            .map(|package| parse_package(Path::new(root), package))
            .collect::<anyhow::Result<Vec<_>>>()?;
        packages.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { packages })
    }

    /// The package named `name`.
    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.iter().find(|package| package.name == name)
    }

    /// The packages `cargo publish` may publish.
    pub fn publishable(&self) -> impl Iterator<Item = &Package> {
        self.packages.iter().filter(|package| package.publish)
    }
}

/// One package of `cargo metadata`'s JSON.
fn parse_package(root: &Path, package: &Value) -> anyhow::Result<Package> {
    let name = string(package, "name").context("a package without a name")?;
    let context = || format!("package {name} in cargo metadata");
    let version =
        Version::parse(package["version"].as_str().unwrap_or_default()).with_context(context)?;
    let manifest = PathBuf::from(string(package, "manifest_path").with_context(context)?);
    let dir = manifest
        .parent()
        .with_context(context)?
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let lib_src = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        // A procedural-macro crate's library is a target of kind `proc-macro`.
        .find(|target| {
            strings(target, "kind")
                .iter()
                .any(|kind| kind == "lib" || kind == "proc-macro")
        })
        .and_then(|target| target["src_path"].as_str())
        .map(|src| {
            Path::new(src)
                .strip_prefix(root)
                .unwrap_or(Path::new(src))
                .to_path_buf()
        });
    let dependencies = package["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .map(parse_dependency)
        .collect();
    Ok(Package {
        version,
        dir,
        // `null` is "any registry"; `[]` is `publish = false`.
        publish: package["publish"]
            .as_array()
            .is_none_or(|registries| !registries.is_empty()),
        description: string(package, "description"),
        license: string(package, "license"),
        repository: string(package, "repository"),
        readme: string(package, "readme"),
        keywords: strings(package, "keywords"),
        categories: strings(package, "categories"),
        rust_version: string(package, "rust_version"),
        docs_rs: package["metadata"]["docs"]["rs"]
            .is_object()
            .then(|| package["metadata"]["docs"]["rs"].clone()),
        lib_src,
        dependencies,
        name,
    })
}

/// One dependency of `cargo metadata`'s JSON.
fn parse_dependency(dependency: &Value) -> Dependency {
    Dependency {
        name: string(dependency, "name").unwrap_or_default(),
        kind: match dependency["kind"].as_str() {
            Some("dev") => DepKind::Dev,
            Some("build") => DepKind::Build,
            _ => DepKind::Normal,
        },
        req: string(dependency, "req").unwrap_or_else(|| "*".to_owned()),
        has_path: dependency["path"].is_string(),
    }
}

/// The non-empty string at `key`.
fn string(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned)
}

/// The strings of the array at `key`.
fn strings(value: &Value, key: &str) -> Vec<String> {
    value[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn packages_are_read_from_cargo_metadata() {
        let metadata = json!({
            "workspace_root": "/w",
            "packages": [
                {
                    "name": "adk-core",
                    "version": "0.1.0",
                    "manifest_path": "/w/crates/adk-core/Cargo.toml",
                    "publish": null,
                    "description": "The core.",
                    "license": "Apache-2.0",
                    "repository": "https://example.com/adk",
                    "readme": "README.md",
                    "keywords": ["adk"],
                    "categories": ["asynchronous"],
                    "rust_version": "1.94",
                    "metadata": {"docs": {"rs": {"all-features": true}}},
                    "targets": [
                        {"kind": ["lib"], "src_path": "/w/crates/adk-core/src/lib.rs"},
                        {"kind": ["bench"], "src_path": "/w/crates/adk-core/benches/b.rs"}
                    ],
                    "dependencies": [
                        {"name": "adk-test", "kind": "dev", "req": "*", "path": "/w/crates/adk-test"},
                        {"name": "serde", "kind": null, "req": "^1"}
                    ]
                },
                {
                    "name": "adk-test",
                    "version": "0.1.0",
                    "manifest_path": "/w/crates/adk-test/Cargo.toml",
                    "publish": [],
                    "description": "  ",
                    "metadata": null,
                    "targets": [],
                    "dependencies": []
                }
            ]
        });
        let workspace = Workspace::from_metadata(&metadata).unwrap();
        let core = workspace.package("adk-core").unwrap();
        assert!(core.publish);
        assert_eq!(core.dir, Path::new("crates/adk-core"));
        assert_eq!(
            core.lib_src.as_deref(),
            Some(Path::new("crates/adk-core/src/lib.rs"))
        );
        assert_eq!(core.docs_rs, Some(json!({"all-features": true})));
        assert_eq!(core.tier(), Tier::Layer(0));
        assert!(core.dependencies[0].stripped_when_published());
        assert!(!core.dependencies[1].stripped_when_published());
        let test = workspace.package("adk-test").unwrap();
        assert!(!test.publish);
        assert_eq!(test.description, None);
        assert_eq!(test.docs_rs, None);
        assert_eq!(
            workspace
                .publishable()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["adk-core"]
        );
    }
}
