//! The feature sets CI checks one by one: for every package of the workspace, its default
//! features, no features at all, and each feature alone, read from the package's `[features]`.
//!
//! The test step builds everything with `--all-features`, where cargo unifies features across the
//! workspace: a crate that only compiles because a sibling turned a feature of a shared dependency
//! on passes there. Checking each set in a `cargo check` of its own, on that one package, catches
//! it. A feature that turns on every other feature (the facade's `full`) is the all-features
//! build already and is not checked again.

use std::fmt;
use std::path::Path;

use anyhow::{Context as _, anyhow, bail};
use toml::de::{DeTable, DeValue};

use crate::tidy::layering::get;

/// One `cargo check` of one package with one choice of features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSet {
    /// The package's name.
    pub package: String,
    /// Whether the package's default features are turned off.
    pub no_default_features: bool,
    /// The one feature turned on, if any.
    pub feature: Option<String>,
}

impl FeatureSet {
    /// The arguments of the `cargo` command that checks this set.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = vec!["check".to_owned(), "-p".to_owned(), self.package.clone()];
        if self.no_default_features {
            args.push("--no-default-features".to_owned());
        }
        if let Some(feature) = &self.feature {
            args.push("--features".to_owned());
            args.push(feature.clone());
        }
        args
    }
}

impl fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cargo {}", self.cargo_args().join(" "))
    }
}

/// The feature sets of every package under `crates/` and `examples/` of the workspace at `root`,
/// in a stable order (packages by directory name).
pub fn workspace_feature_sets(root: &Path) -> anyhow::Result<Vec<FeatureSet>> {
    let mut manifests = Vec::new();
    for folder in ["crates", "examples"] {
        let dir = root.join(folder);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("could not list {}", dir.display()))?;
        for entry in entries {
            let manifest = entry?.path().join("Cargo.toml");
            if manifest.is_file() {
                manifests.push(manifest);
            }
        }
    }
    manifests.sort();
    let mut sets = Vec::new();
    for manifest in manifests {
        let text = std::fs::read_to_string(&manifest)
            .with_context(|| format!("could not read {}", manifest.display()))?;
        sets.extend(
            package_feature_sets(&text).with_context(|| {
                format!("could not read the features of {}", manifest.display())
            })?,
        );
    }
    Ok(sets)
}

/// The feature sets of the package whose `Cargo.toml` is `manifest`: its defaults; then, when it
/// has features, no features (unless the defaults are already none) and each feature alone
/// (except one that turns on all the others).
pub fn package_feature_sets(manifest: &str) -> anyhow::Result<Vec<FeatureSet>> {
    let document = DeTable::parse(manifest).map_err(|error| anyhow!("{}", error.message()))?;
    let document = document.get_ref();
    let Some(DeValue::Table(package)) = get(document, "package") else {
        bail!("the manifest has no [package]");
    };
    let Some(DeValue::String(package)) = get(package, "name") else {
        bail!("the manifest names no package");
    };
    let set = |no_default_features, feature: Option<&str>| FeatureSet {
        package: package.to_string(),
        no_default_features,
        feature: feature.map(str::to_owned),
    };
    let mut sets = vec![set(false, None)];
    let Some(DeValue::Table(features)) = get(document, "features") else {
        return Ok(sets);
    };
    let enables = |name: &str| -> Vec<String> {
        match get(features, name) {
            Some(DeValue::Array(list)) => list
                .iter()
                .filter_map(|item| match item.get_ref() {
                    DeValue::String(text) => Some(text.to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let own: Vec<String> = features
        .keys()
        .map(|key| key.get_ref().to_string())
        .filter(|name| name != "default")
        .collect();
    if !enables("default").is_empty() {
        sets.push(set(true, None));
    }
    for feature in &own {
        let enabled = enables(feature);
        let enables_all_others = own.len() > 2
            && own
                .iter()
                .all(|other| other == feature || enabled.contains(other));
        if !enables_all_others {
            sets.push(set(true, Some(feature)));
        }
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(manifest: &str) -> Vec<String> {
        package_feature_sets(manifest)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_package_without_features_is_checked_once() {
        let sets = package_feature_sets("[package]\nname = \"plain\"\n").unwrap();
        assert_eq!(sets.len(), 1);
        assert_eq!(sets[0].to_string(), "cargo check -p plain");
    }

    #[test]
    fn defaults_none_and_each_feature_alone_but_not_the_one_of_all() {
        let manifest = r#"
            [package]
            name = "facade"

            [features]
            default = ["a"]
            a = []
            b = ["dep:x"]
            c = []
            full = ["a", "b", "c"]
        "#;
        assert_eq!(
            commands(manifest),
            [
                "cargo check -p facade",
                "cargo check -p facade --no-default-features",
                "cargo check -p facade --no-default-features --features a",
                "cargo check -p facade --no-default-features --features b",
                "cargo check -p facade --no-default-features --features c",
            ]
        );
    }

    #[test]
    fn empty_defaults_are_not_checked_twice() {
        let manifest = "[package]\nname = \"tool\"\n[features]\ndefault = []\nmcp = []\n";
        assert_eq!(
            commands(manifest),
            [
                "cargo check -p tool",
                "cargo check -p tool --no-default-features --features mcp",
            ]
        );
    }

    #[test]
    fn the_workspace_checks_every_facade_feature_alone() {
        let sets: Vec<String> = workspace_feature_sets(&crate::workspace_root())
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        for feature in [
            "gemini",
            "openai",
            "sqlite",
            "postgres",
            "object-store",
            "mcp",
            "otel",
            "server",
        ] {
            let expected = format!("cargo check -p adk --no-default-features --features {feature}");
            assert!(sets.contains(&expected), "{expected} in {sets:#?}");
        }
        assert!(sets.contains(&"cargo check -p adk --no-default-features".to_owned()));
        assert!(sets.contains(&"cargo check -p adk-core".to_owned()));
        assert!(!sets.iter().any(|set| set.ends_with("--features full")));
    }
}
