//! The order in which the published crates go to crates.io: every crate after all the crates it
//! names with a version, dev-dependencies included (crates.io refuses a crate whose dependencies
//! of any kind it does not have yet), and otherwise lowest layer first.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;

use super::workspace::{Package, Workspace};
use crate::tidy::layering::Tier;

/// The publishable crates of `workspace` in publishing order.
///
/// Among the crates whose dependencies are all placed, the one of the lowest layer (then name)
/// goes next, so the order reads like the layer table wherever dependencies allow. A cycle is an
/// error naming its crates, as such crates cannot be published at all.
pub fn publish_order(workspace: &Workspace) -> anyhow::Result<Vec<&Package>> {
    let publishable: BTreeMap<&str, &Package> = workspace
        .publishable()
        .map(|package| (package.name.as_str(), package))
        .collect();
    let mut waiting_on: BTreeMap<&str, BTreeSet<&str>> = publishable
        .values()
        .map(|package| {
            let needs = package
                .dependencies
                .iter()
                .filter(|dep| !dep.stripped_when_published() && dep.name != package.name)
                .filter_map(|dep| {
                    publishable
                        .get_key_value(dep.name.as_str())
                        .map(|(k, _)| *k)
                })
                .collect();
            (package.name.as_str(), needs)
        })
        .collect();
    let mut order = Vec::with_capacity(publishable.len());
    while !waiting_on.is_empty() {
        let next = waiting_on
            .iter()
            .filter(|(_, needs)| needs.is_empty())
            .map(|(name, _)| publishable[name])
            .min_by_key(|package| (layer_rank(package.tier()), package.name.as_str()));
        let Some(next) = next else {
            let stuck: Vec<&str> = waiting_on.keys().copied().collect();
            bail!(
                "these crates depend on each other in a cycle, dev-dependencies with a version \
                 included, so none can be published first: {}",
                stuck.join(", ")
            );
        };
        waiting_on.remove(next.name.as_str());
        for needs in waiting_on.values_mut() {
            needs.remove(next.name.as_str());
        }
        order.push(next);
    }
    Ok(order)
}

/// Sorts layers bottom-up, with the dev and app tiers (which are not published) last.
fn layer_rank(tier: Tier) -> u8 {
    match tier {
        Tier::Layer(layer) => layer,
        Tier::DevOnly | Tier::App => u8::MAX,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use semver::Version;

    use super::*;
    use crate::release::workspace::{DepKind, Dependency};

    fn package(name: &str, deps: &[(&str, DepKind, &str)]) -> Package {
        Package {
            name: name.to_owned(),
            version: Version::new(0, 1, 0),
            dir: PathBuf::from("crates").join(name),
            publish: name != "adk-test",
            description: None,
            license: None,
            repository: None,
            readme: None,
            keywords: Vec::new(),
            categories: Vec::new(),
            rust_version: None,
            docs_rs: None,
            lib_src: None,
            dependencies: deps
                .iter()
                .map(|(dep, kind, req)| Dependency {
                    name: (*dep).to_owned(),
                    kind: *kind,
                    req: (*req).to_owned(),
                    has_path: true,
                })
                .collect(),
        }
    }

    fn names(workspace: &Workspace) -> Vec<String> {
        publish_order(workspace)
            .unwrap()
            .iter()
            .map(|package| package.name.clone())
            .collect()
    }

    #[test]
    fn lower_layers_go_first_and_dev_dependencies_with_a_version_count() {
        let workspace = Workspace {
            packages: vec![
                package("adk", &[("adk-flow", DepKind::Normal, "=0.1.0")]),
                package("adk-core", &[("adk-test", DepKind::Dev, "*")]),
                package("adk-flow", &[("adk-core", DepKind::Normal, "=0.1.0")]),
                // L1, but its tests use the flow, so it waits for it.
                package("adk-local-model", &[("adk-flow", DepKind::Dev, "=0.1.0")]),
                package("adk-model", &[("adk-core", DepKind::Normal, "=0.1.0")]),
                package("adk-test", &[("adk-core", DepKind::Normal, "=0.1.0")]),
            ],
        };
        assert_eq!(
            names(&workspace),
            [
                "adk-core",
                "adk-model",
                "adk-flow",
                "adk-local-model",
                "adk"
            ]
        );
    }

    #[test]
    fn a_cycle_is_named() {
        let workspace = Workspace {
            packages: vec![
                package("adk-core", &[]),
                package("adk-flow", &[("adk-runner", DepKind::Dev, "=0.1.0")]),
                package("adk-runner", &[("adk-flow", DepKind::Normal, "=0.1.0")]),
            ],
        };
        let err = publish_order(&workspace).unwrap_err().to_string();
        assert!(
            err.ends_with("none can be published first: adk-flow, adk-runner"),
            "{err}"
        );
    }
}
