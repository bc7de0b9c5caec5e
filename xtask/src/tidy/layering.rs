//! The layering check: workspace crates depend only down the layer table in ARCHITECTURE.md.
//!
//! ```text
//! L0   adk-core, adk-macros
//! L1   adk-telemetry, adk-model, adk-tool, adk-session, adk-local-model, adk-gate
//! L2   adk-flow
//! L3   adk-runner, adk-orchestrator, adk-workflow
//! L4   adk-config, adk-a2a, and any other crate under crates/
//! L5   adk-server
//! L6   adk-launcher
//! L7   adk, the facade
//! dev  adk-test: depends only on L0 and L1, and appears elsewhere only under [dev-dependencies]
//! app  examples/*, xtask and adk-cli (the `adk` binary): may depend on anything, except adk-test
//!      as a normal dependency
//! ```
//!
//! Only `[dependencies]` and `[build-dependencies]` (also inside `[target.'cfg(..)'.*]`) are
//! checked; `[dev-dependencies]` may use any workspace crate.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Violation, line_of_offset, relative_to};

/// Where a crate sits in the layer table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// A library layer, L0 (bottom) to L7 (the facade, top).
    Layer(u8),
    /// adk-test: dev-only helpers that sit on L0 and L1.
    DevOnly,
    /// An application: an example, xtask or the `adk` binary, on top of everything.
    App,
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Layer(layer) => write!(f, "L{layer}"),
            Self::DevOnly => f.write_str("dev"),
            Self::App => f.write_str("app"),
        }
    }
}

/// The crates the layer table names; other crates under `crates/` are L4 (above the runner, below
/// the server and the facade), anything else is an app.
pub const LAYER_TABLE: &[(&str, Tier)] = &[
    ("adk-core", Tier::Layer(0)),
    // The procedural macros depend on no workspace crate; the code they write names the facade.
    ("adk-macros", Tier::Layer(0)),
    ("adk-telemetry", Tier::Layer(1)),
    ("adk-model", Tier::Layer(1)),
    ("adk-tool", Tier::Layer(1)),
    ("adk-session", Tier::Layer(1)),
    ("adk-local-model", Tier::Layer(1)),
    // The front door of the servers (authentication, hosts, origins, timeouts): below both the
    // A2A server and the REST server, which share it; it knows no other adk crate.
    ("adk-gate", Tier::Layer(1)),
    ("adk-flow", Tier::Layer(2)),
    ("adk-runner", Tier::Layer(3)),
    // The orchestrator and the run loop are agents above the flow: they see the flow's agents
    // only as `dyn Agent`, and run under the runner like every agent.
    ("adk-orchestrator", Tier::Layer(3)),
    // Graph workflows are agents above the flow: they run the flow's agents as nodes, and run
    // under the runner like every agent.
    ("adk-workflow", Tier::Layer(3)),
    // YAML agent configs build flow agents and workflows; the runner is not needed to build them.
    ("adk-config", Tier::Layer(4)),
    ("adk-a2a", Tier::Layer(4)),
    // The server mounts the crates of L4 (A2A) behind its features.
    ("adk-server", Tier::Layer(5)),
    // The launcher offers the server, and everything else, on the command line.
    ("adk-launcher", Tier::Layer(6)),
    // The facade sits on top of everything it re-exports.
    ("adk", Tier::Layer(7)),
    ("adk-test", Tier::DevOnly),
    // The `adk` binary is an application: it bundles the example agents.
    ("adk-cli", Tier::App),
];

/// The layer unlisted crates under `crates/` go to: above the runner, below the server and the
/// facade.
const TOP_LAYER: u8 = 4;

/// The tier of the crate `name` whose directory is `dir` (relative to the workspace root).
pub fn tier_of(name: &str, dir: &Path) -> Tier {
    if let Some((_, tier)) = LAYER_TABLE.iter().find(|(listed, _)| *listed == name) {
        return *tier;
    }
    if dir.starts_with("crates") {
        Tier::Layer(TOP_LAYER)
    } else {
        Tier::App
    }
}

/// Which kind of dependency table a dependency is declared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// `[dependencies]`.
    Normal,
    /// `[build-dependencies]`.
    Build,
    /// `[dev-dependencies]`.
    Dev,
}

impl DepKind {
    /// The kind of the dependency table named `key` in a manifest, if it is one.
    fn of_table(key: &str) -> Option<Self> {
        match key {
            "dependencies" => Some(Self::Normal),
            "build-dependencies" | "build_dependencies" => Some(Self::Build),
            "dev-dependencies" | "dev_dependencies" => Some(Self::Dev),
            _ => None,
        }
    }
}

/// What is wrong with `from` depending on `to` in a `kind` table labelled `section`, if anything.
pub fn edge_violation(
    (from, from_tier): (&str, Tier),
    (to, to_tier): (&str, Tier),
    kind: DepKind,
    section: &str,
) -> Option<String> {
    if kind == DepKind::Dev {
        return None;
    }
    if to_tier == Tier::DevOnly {
        return Some(format!(
            "{from} ({from_tier}) depends on {to} under {section}: \
             {to} may appear only under [dev-dependencies]"
        ));
    }
    match (from_tier, to_tier) {
        (Tier::App, _) => None,
        (Tier::DevOnly, Tier::Layer(0 | 1)) => None,
        (Tier::DevOnly, _) => Some(format!(
            "{from} ({from_tier}) depends on {to} ({to_tier}): \
             {from} may depend only on L0 and L1 crates (ARCHITECTURE.md)"
        )),
        (Tier::Layer(a), Tier::Layer(b)) if b < a => None,
        (Tier::Layer(a), Tier::Layer(b)) if b == a => Some(format!(
            "{from} ({from_tier}) depends on {to} ({to_tier}): \
             dependencies must point down the layer table in ARCHITECTURE.md \
             (no sideways dependencies within a layer)"
        )),
        (Tier::Layer(_), _) => Some(format!(
            "{from} ({from_tier}) depends on {to} ({to_tier}): \
             dependencies must point down the layer table in ARCHITECTURE.md"
        )),
    }
}

/// A workspace member crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The package name.
    pub name: String,
    /// The member's `Cargo.toml`, relative to the workspace root.
    pub manifest: PathBuf,
    /// Where the crate sits in the layer table.
    pub tier: Tier,
}

/// One dependency declared in a member's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dependency {
    /// The real crate name (the `package = ".."` rename target, else the key).
    name: String,
    /// The kind of table it is declared in.
    kind: DepKind,
    /// The table as a person would write it, e.g. `[dependencies]`.
    section: String,
    /// The 1-based line of the dependency's key.
    line: usize,
}

/// Checks the layering of every member of the workspace at `root`.
pub fn check(root: &Path) -> Vec<Violation> {
    let mut violations = Vec::new();
    let members = discover_members(root, &mut violations);
    let tiers: HashMap<&str, Tier> = members
        .iter()
        .map(|member| (member.name.as_str(), member.tier))
        .collect();
    for member in &members {
        violations.extend(check_member(root, member, &tiers));
    }
    violations
}

/// Lists the workspace members named by the root manifest's `workspace.members`.
///
/// Entries are directories, or `dir/*` for every subdirectory of `dir` with a `Cargo.toml`.
/// Problems (unreadable or malformed manifests) are pushed onto `violations`.
pub fn discover_members(root: &Path, violations: &mut Vec<Violation>) -> Vec<Member> {
    let root_manifest = Path::new("Cargo.toml");
    let Some(text) = read_manifest(root, root_manifest, violations) else {
        return Vec::new();
    };
    let Some(document) = parse_manifest(&text, root_manifest, violations) else {
        return Vec::new();
    };
    let patterns = workspace_member_patterns(document.get_ref());
    let mut members: Vec<Member> = patterns
        .iter()
        .flat_map(|pattern| expand_member_pattern(root, pattern))
        .filter_map(|dir| load_member(root, &dir, violations))
        .collect();
    members.sort_by(|a, b| a.manifest.cmp(&b.manifest));
    members.dedup_by(|a, b| a.manifest == b.manifest);
    members
}

/// The strings of the root manifest's `workspace.members` array.
fn workspace_member_patterns(document: &DeTable<'_>) -> Vec<String> {
    let Some(DeValue::Table(workspace)) = get(document, "workspace") else {
        return Vec::new();
    };
    let Some(DeValue::Array(members)) = get(workspace, "members") else {
        return Vec::new();
    };
    members
        .iter()
        .filter_map(|value| match value.get_ref() {
            DeValue::String(pattern) => Some(pattern.to_string()),
            _ => None,
        })
        .collect()
}

/// The member directories (relative to `root`) that one `workspace.members` entry names.
fn expand_member_pattern(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let Some(parent) = pattern.strip_suffix("/*") else {
        return vec![PathBuf::from(pattern)];
    };
    let Ok(entries) = std::fs::read_dir(root.join(parent)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| relative_to(root, &path))
        .collect();
    dirs.sort();
    dirs
}

/// Reads the member in `dir` (relative to `root`): its package name and tier.
fn load_member(root: &Path, dir: &Path, violations: &mut Vec<Violation>) -> Option<Member> {
    let manifest = dir.join("Cargo.toml");
    let text = read_manifest(root, &manifest, violations)?;
    let document = parse_manifest(&text, &manifest, violations)?;
    let name = package_name(document.get_ref());
    let Some(name) = name else {
        violations.push(Violation::new(&manifest, 1, "no [package] name"));
        return None;
    };
    let tier = tier_of(&name, dir);
    Some(Member {
        name,
        manifest,
        tier,
    })
}

/// The `package.name` of a manifest.
fn package_name(document: &DeTable<'_>) -> Option<String> {
    let Some(DeValue::Table(package)) = get(document, "package") else {
        return None;
    };
    match get(package, "name") {
        Some(DeValue::String(name)) => Some(name.to_string()),
        _ => None,
    }
}

/// Checks the dependencies of one member against the tiers of the workspace's crates.
fn check_member(root: &Path, member: &Member, tiers: &HashMap<&str, Tier>) -> Vec<Violation> {
    let mut violations = Vec::new();
    let Some(text) = read_manifest(root, &member.manifest, &mut violations) else {
        return violations;
    };
    let Some(document) = parse_manifest(&text, &member.manifest, &mut violations) else {
        return violations;
    };
    for dependency in dependencies(&text, document.get_ref()) {
        let Some(&to_tier) = tiers.get(dependency.name.as_str()) else {
            continue;
        };
        let message = edge_violation(
            (&member.name, member.tier),
            (&dependency.name, to_tier),
            dependency.kind,
            &dependency.section,
        );
        if let Some(message) = message {
            violations.push(Violation::new(&member.manifest, dependency.line, message));
        }
    }
    violations
}

/// Every dependency a manifest declares, in plain and `[target.'cfg(..)'.*]` tables.
fn dependencies(text: &str, document: &DeTable<'_>) -> Vec<Dependency> {
    let mut found = Vec::new();
    collect_dependency_tables(text, document, "", &mut found);
    if let Some(DeValue::Table(targets)) = get(document, "target") {
        for (target, value) in targets.iter() {
            if let DeValue::Table(target_table) = value.get_ref() {
                let prefix = format!("target.{}.", quote_key(target.get_ref()));
                collect_dependency_tables(text, target_table, &prefix, &mut found);
            }
        }
    }
    found
}

/// Pushes the dependencies of every dependency table directly inside `table` onto `found`.
fn collect_dependency_tables(
    text: &str,
    table: &DeTable<'_>,
    prefix: &str,
    found: &mut Vec<Dependency>,
) {
    for (key, value) in table.iter() {
        let Some(kind) = DepKind::of_table(key.get_ref()) else {
            continue;
        };
        let DeValue::Table(entries) = value.get_ref() else {
            continue;
        };
        let section = format!("[{prefix}{}]", key.get_ref());
        for (dep_key, dep_value) in entries.iter() {
            found.push(Dependency {
                name: real_crate_name(dep_key.get_ref(), dep_value.get_ref()),
                kind,
                section: section.clone(),
                line: line_of_offset(text, dep_key.span().start),
            });
        }
    }
}

/// The crate a dependency entry refers to: its `package` when renamed, else its key.
fn real_crate_name(key: &str, value: &DeValue<'_>) -> String {
    if let DeValue::Table(details) = value
        && let Some(DeValue::String(package)) = get(details, "package")
    {
        return package.to_string();
    }
    key.to_owned()
}

/// A table key as it would be written in a header: quoted when it is not a bare key.
fn quote_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        key.to_owned()
    } else {
        format!("'{key}'")
    }
}

/// The value under `key` in `table`.
pub(crate) fn get<'a, 'i>(table: &'a DeTable<'i>, key: &str) -> Option<&'a DeValue<'i>> {
    table
        .iter()
        .find(|(candidate, _)| candidate.get_ref() == key)
        .map(|(_, value)| value.get_ref())
}

/// Reads the manifest at `manifest` (relative to `root`), recording a violation if it cannot.
fn read_manifest(root: &Path, manifest: &Path, violations: &mut Vec<Violation>) -> Option<String> {
    match std::fs::read_to_string(root.join(manifest)) {
        Ok(text) => Some(text),
        Err(err) => {
            violations.push(Violation::new(manifest, 1, format!("cannot read: {err}")));
            None
        }
    }
}

/// Parses a manifest's text, recording a violation if it is not valid TOML.
fn parse_manifest<'i>(
    text: &'i str,
    manifest: &Path,
    violations: &mut Vec<Violation>,
) -> Option<Spanned<DeTable<'i>>> {
    match DeTable::parse(text) {
        Ok(document) => Some(document),
        Err(err) => {
            let line = err
                .span()
                .map_or(1, |span| line_of_offset(text, span.start));
            let message = format!("invalid TOML: {}", err.message());
            violations.push(Violation::new(manifest, line, message));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UP: &str = "dependencies must point down the layer table in ARCHITECTURE.md";

    fn edge(from: &str, to: &str, kind: DepKind) -> Option<String> {
        let from = (from, tier_of(from, Path::new("crates/x")));
        let to = (to, tier_of(to, Path::new("crates/x")));
        edge_violation(from, to, kind, "[dependencies]")
    }

    #[test]
    fn downward_dependencies_pass() {
        assert_eq!(edge("adk-model", "adk-core", DepKind::Normal), None);
        assert_eq!(edge("adk-flow", "adk-tool", DepKind::Normal), None);
        assert_eq!(edge("adk", "adk-runner", DepKind::Build), None);
        assert_eq!(edge("adk-server", "adk-runner", DepKind::Normal), None);
        assert_eq!(edge("adk-server", "adk-a2a", DepKind::Normal), None);
        assert_eq!(edge("adk-config", "adk-flow", DepKind::Normal), None);
        assert_eq!(edge("adk-server", "adk-config", DepKind::Normal), None);
    }

    #[test]
    fn upward_and_sideways_dependencies_fail() {
        let up = edge("adk-core", "adk-flow", DepKind::Normal).unwrap();
        assert_eq!(up, format!("adk-core (L0) depends on adk-flow (L2): {UP}"));
        let sideways = edge("adk-model", "adk-tool", DepKind::Build).unwrap();
        assert!(sideways.starts_with(&format!("adk-model (L1) depends on adk-tool (L1): {UP}")));
        let unknown_peer = edge("adk-a2a", "adk-unlisted", DepKind::Normal).unwrap();
        assert!(unknown_peer.starts_with("adk-a2a (L4) depends on adk-unlisted (L4)"));
        let above = edge("adk-a2a", "adk-server", DepKind::Normal).unwrap();
        assert!(above.starts_with("adk-a2a (L4) depends on adk-server (L5)"));
        let under_the_facade = edge("adk-server", "adk", DepKind::Normal).unwrap();
        assert!(under_the_facade.starts_with("adk-server (L5) depends on adk (L7)"));
    }

    #[test]
    fn dev_dependencies_are_not_checked() {
        assert_eq!(edge("adk-core", "adk-flow", DepKind::Dev), None);
        assert_eq!(edge("adk-core", "adk-test", DepKind::Dev), None);
    }

    #[test]
    fn adk_test_sits_on_l0_and_l1_only() {
        assert_eq!(edge("adk-test", "adk-session", DepKind::Normal), None);
        let message = edge("adk-test", "adk-runner", DepKind::Normal).unwrap();
        assert!(message.starts_with("adk-test (dev) depends on adk-runner (L3)"));
    }

    #[test]
    fn adk_test_is_never_a_normal_dependency() {
        let message = edge("adk", "adk-test", DepKind::Normal).unwrap();
        assert_eq!(
            message,
            "adk (L7) depends on adk-test under [dependencies]: \
             adk-test may appear only under [dev-dependencies]"
        );
        let app = edge_violation(
            ("quickstart", Tier::App),
            ("adk-test", Tier::DevOnly),
            DepKind::Normal,
            "[dependencies]",
        );
        assert!(app.is_some());
    }

    #[test]
    fn apps_may_depend_on_anything_else() {
        let app = (
            "quickstart",
            tier_of("quickstart", Path::new("examples/quickstart")),
        );
        assert_eq!(app.1, Tier::App);
        for (name, tier) in LAYER_TABLE.iter().filter(|(_, t)| *t != Tier::DevOnly) {
            assert_eq!(
                edge_violation(app, (name, *tier), DepKind::Normal, "[dependencies]"),
                None
            );
        }
    }

    #[test]
    fn unlisted_crates_under_crates_are_l4() {
        assert_eq!(
            tier_of("adk-server", Path::new("crates/adk-server")),
            Tier::Layer(5)
        );
        assert_eq!(
            tier_of("adk-new-crate", Path::new("crates/adk-new-crate")),
            Tier::Layer(4)
        );
        assert_eq!(tier_of("adk-cli", Path::new("crates/adk-cli")), Tier::App);
        assert_eq!(tier_of("xtask", Path::new("xtask")), Tier::App);
    }

    #[test]
    fn dependency_lines_and_sections_are_found() {
        let text = "\
[package]
name = \"adk-model\"

[dependencies]
adk-core.workspace = true
renamed = { package = \"adk-flow\", path = \"../adk-flow\" }

[target.'cfg(unix)'.build-dependencies]
adk-tool = { workspace = true }

[dev-dependencies.adk-test]
workspace = true
";
        let document = DeTable::parse(text).unwrap();
        let mut found = dependencies(text, document.get_ref());
        found.sort_by_key(|dependency| dependency.line);
        let summary: Vec<_> = found
            .iter()
            .map(|d| (d.name.as_str(), d.kind, d.section.as_str(), d.line))
            .collect();
        assert_eq!(
            summary,
            [
                ("adk-core", DepKind::Normal, "[dependencies]", 5),
                ("adk-flow", DepKind::Normal, "[dependencies]", 6),
                (
                    "adk-tool",
                    DepKind::Build,
                    "[target.'cfg(unix)'.build-dependencies]",
                    9
                ),
                ("adk-test", DepKind::Dev, "[dev-dependencies]", 11),
            ]
        );
    }
}
