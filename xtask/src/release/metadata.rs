//! The metadata every published crate needs on crates.io and docs.rs, checked for every library
//! crate under `crates/` at once, so that a new crate without it fails before a release does.
//!
//! Every crate under `crates/` is a published library except those of [`NOT_PUBLISHED`]; packages
//! elsewhere (the examples, xtask) are not published.

use std::fmt;
use std::path::Path;

use semver::Version;

use super::workspace::{DepKind, Package, Workspace};
use crate::tidy::source::README_DOC_HEADER;

/// The crates under `crates/` that are not published, and why.
pub const NOT_PUBLISHED: &[(&str, &str)] = &[
    (
        "adk-test",
        "dev-only test helpers, never a normal dependency",
    ),
    (
        "adk-cli",
        "the `adk` binary bundles the example agents, which are not published",
    ),
];

/// The line of a `lib.rs` that labels feature-gated items with their feature on docs.rs.
pub const DOC_CFG_ATTRIBUTE: &str = "#![cfg_attr(docsrs, feature(doc_cfg))]";

/// The most keywords and categories crates.io accepts.
const MAX_TAGS: usize = 5;

/// The longest keyword crates.io accepts.
const MAX_KEYWORD_LEN: usize = 20;

/// Every category slug crates.io knows (its `src/boot/categories.toml`); it rejects others.
pub const CRATES_IO_CATEGORIES: &[&str] = &[
    "algorithms",
    "api-bindings",
    "asynchronous",
    "authentication",
    "caching",
    "command-line-interface",
    "command-line-utilities",
    "compression",
    "computer-vision",
    "concurrency",
    "config",
    "cryptography",
    "cryptography::cryptocurrencies",
    "data-structures",
    "database",
    "database-implementations",
    "date-and-time",
    "development-tools",
    "development-tools::build-utils",
    "development-tools::cargo-plugins",
    "development-tools::debugging",
    "development-tools::ffi",
    "development-tools::procedural-macro-helpers",
    "development-tools::profiling",
    "development-tools::testing",
    "email",
    "embedded",
    "emulators",
    "encoding",
    "external-ffi-bindings",
    "filesystem",
    "game-development",
    "game-engines",
    "games",
    "graphics",
    "gui",
    "hardware-support",
    "internationalization",
    "localization",
    "mathematics",
    "memory-management",
    "multimedia",
    "multimedia::audio",
    "multimedia::encoding",
    "multimedia::images",
    "multimedia::video",
    "network-programming",
    "no-std",
    "os",
    "os::linux-apis",
    "os::macos-apis",
    "os::unix-apis",
    "os::windows-apis",
    "parser-implementations",
    "parsing",
    "rendering",
    "rendering::data-formats",
    "rendering::engine",
    "rendering::graphics-api",
    "rust-patterns",
    "science",
    "science::robotics",
    "simulation",
    "template-engine",
    "text-editors",
    "text-processing",
    "value-formatting",
    "visualization",
    "wasm",
    "web-programming",
    "web-programming::http-client",
    "web-programming::http-server",
    "web-programming::websocket",
];

/// One thing a package's metadata lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The package.
    pub package: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.package, self.message)
    }
}

/// Whether the package is a library crate that is published: it lives under `crates/` and is not
/// one of [`NOT_PUBLISHED`].
pub fn is_published_library(package: &Package) -> bool {
    package.dir.starts_with("crates")
        && !NOT_PUBLISHED.iter().any(|(name, _)| *name == package.name)
}

/// Checks the metadata of every package of `workspace` (at `root`, whose workspace version is
/// `version`), returning every problem at once.
pub fn check(root: &Path, workspace: &Workspace, version: &Version) -> Vec<Problem> {
    let mut problems = Vec::new();
    for package in &workspace.packages {
        let mut report = |message: String| {
            problems.push(Problem {
                package: package.name.clone(),
                message,
            });
        };
        if is_published_library(package) {
            check_library(root, workspace, package, version, &mut report);
        } else if package.publish {
            let why = NOT_PUBLISHED
                .iter()
                .find(|(name, _)| *name == package.name)
                .map_or(
                    "only the library crates under crates/ are published",
                    |(_, why)| why,
                );
            report(format!("must say `publish = false` ({why})"));
        }
    }
    problems
}

/// Checks one published library crate.
fn check_library(
    root: &Path,
    workspace: &Workspace,
    package: &Package,
    version: &Version,
    report: &mut dyn FnMut(String),
) {
    if !package.publish {
        report(
            "says `publish = false`, but every crate under crates/ is published except those \
             listed in NOT_PUBLISHED (xtask/src/release/metadata.rs)"
                .to_owned(),
        );
    }
    if &package.version != version {
        report(format!(
            "version {} differs from the workspace's {version}: use `version.workspace = true`",
            package.version
        ));
    }
    for (field, value) in [
        ("description", &package.description),
        ("license", &package.license),
        ("repository", &package.repository),
        ("rust-version", &package.rust_version),
    ] {
        if value.is_none() {
            report(format!(
                "no `{field}` (inherit it with `{field}.workspace = true` where the workspace has one)"
            ));
        }
    }
    check_readme(root, package, report);
    check_keywords(&package.keywords, report);
    check_categories(&package.categories, report);
    check_docs_rs(package, report);
    check_lib_header(root, package, report);
    check_dependencies(workspace, package, version, report);
}

/// The README exists, is the package's `readme`, and shows a Rust example.
fn check_readme(root: &Path, package: &Package, report: &mut dyn FnMut(String)) {
    if package.readme.as_deref() != Some("README.md") {
        report("no `readme = \"README.md\"`".to_owned());
    }
    let path = root.join(&package.dir).join("README.md");
    match std::fs::read_to_string(&path) {
        Ok(text) if !has_rust_example(&text) => report(
            "README.md has no Rust example: add a ```rust block (its doctest runs in CI)"
                .to_owned(),
        ),
        Ok(_) => {}
        Err(err) => report(format!("cannot read README.md: {err}")),
    }
}

/// Whether `markdown` has a fenced code block that rustdoc compiles as a doctest: its info string
/// is empty or starts with `rust`, and it is not `ignore`d.
pub fn has_rust_example(markdown: &str) -> bool {
    let mut in_block = false;
    for line in markdown.lines() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if in_block {
            in_block = false;
            continue;
        }
        in_block = true;
        let info = info.trim();
        let attributes: Vec<&str> = info.split(',').map(str::trim).collect();
        let rust = info.is_empty() || attributes[0] == "rust";
        if rust && !attributes.contains(&"ignore") {
            return true;
        }
    }
    false
}

/// One to five keywords, each as crates.io accepts them.
fn check_keywords(keywords: &[String], report: &mut dyn FnMut(String)) {
    check_tag_count("keywords", keywords.len(), report);
    for keyword in keywords {
        let mut chars = keyword.chars();
        let valid = keyword.len() <= MAX_KEYWORD_LEN
            && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'));
        if !valid {
            report(format!(
                "keyword {keyword:?} is not one crates.io accepts (at most {MAX_KEYWORD_LEN} \
                 ASCII letters, digits, `_`, `-` or `+`, starting with a letter or digit)"
            ));
        }
    }
}

/// One to [`MAX_TAGS`] of `what` (keywords or categories), as crates.io takes them.
fn check_tag_count(what: &str, count: usize, report: &mut dyn FnMut(String)) {
    if count == 0 || count > MAX_TAGS {
        report(format!(
            "has {count} {what}; crates.io takes 1 to {MAX_TAGS}"
        ));
    }
}

/// One to five categories, each a slug crates.io knows.
fn check_categories(categories: &[String], report: &mut dyn FnMut(String)) {
    check_tag_count("categories", categories.len(), report);
    for category in categories {
        if !CRATES_IO_CATEGORIES.contains(&category.as_str()) {
            report(format!(
                "category {category:?} is not one of crates.io's (see CRATES_IO_CATEGORIES)"
            ));
        }
    }
}

/// docs.rs builds with every feature and `--cfg docsrs`.
fn check_docs_rs(package: &Package, report: &mut dyn FnMut(String)) {
    let Some(docs_rs) = &package.docs_rs else {
        report(
            "no [package.metadata.docs.rs] with `all-features = true` and \
             `rustdoc-args = [\"--cfg\", \"docsrs\"]`"
                .to_owned(),
        );
        return;
    };
    if docs_rs["all-features"].as_bool() != Some(true) {
        report("[package.metadata.docs.rs] lacks `all-features = true`".to_owned());
    }
    let args: Vec<&str> = docs_rs["rustdoc-args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|arg| arg.as_str())
        .collect();
    if !args.windows(2).any(|pair| pair == ["--cfg", "docsrs"]) {
        report(
            "[package.metadata.docs.rs] lacks `rustdoc-args = [\"--cfg\", \"docsrs\"]`".to_owned(),
        );
    }
}

/// The library's root takes its docs from the README and turns `doc_cfg` on for docs.rs.
fn check_lib_header(root: &Path, package: &Package, report: &mut dyn FnMut(String)) {
    let Some(lib_src) = &package.lib_src else {
        report("has no library target".to_owned());
        return;
    };
    let text = match std::fs::read_to_string(root.join(lib_src)) {
        Ok(text) => text,
        Err(err) => {
            report(format!("cannot read {}: {err}", lib_src.display()));
            return;
        }
    };
    let mut lines = text.lines().map(str::trim);
    if lines.next() != Some(README_DOC_HEADER) {
        report(format!(
            "the first line of {} must be `{README_DOC_HEADER}`: the README is the crate's docs",
            lib_src.display()
        ));
    }
    if !text.lines().any(|line| line.trim() == DOC_CFG_ATTRIBUTE) {
        report(format!(
            "{} lacks `{DOC_CFG_ATTRIBUTE}`, which labels feature-gated items on docs.rs",
            lib_src.display()
        ));
    }
}

/// Dependencies on the workspace's crates: published ones at exactly the workspace's version,
/// unpublished ones only as path-only dev-dependencies, which cargo leaves out when publishing.
fn check_dependencies(
    workspace: &Workspace,
    package: &Package,
    version: &Version,
    report: &mut dyn FnMut(String),
) {
    let exact = format!("={version}");
    for dependency in &package.dependencies {
        let Some(target) = workspace.package(&dependency.name) else {
            continue;
        };
        if !target.publish {
            if !dependency.stripped_when_published() {
                report(format!(
                    "depends on {}, which is not published, other than as a dev-dependency with \
                     a path and no version",
                    dependency.name
                ));
            }
        } else if dependency.req != exact && !dependency.stripped_when_published() {
            let table = match dependency.kind {
                DepKind::Normal => "dependencies",
                DepKind::Dev => "dev-dependencies",
                DepKind::Build => "build-dependencies",
            };
            report(format!(
                "requires {} {} in [{table}]; the workspace's crates require each other at \
                 exactly `{exact}` (the `version` of its entry in [workspace.dependencies])",
                dependency.name, dependency.req
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_examples_are_found_and_others_are_not() {
        assert!(has_rust_example("text\n\n```\nlet a = 1;\n```\n"));
        assert!(has_rust_example("```rust,no_run\nmain();\n```\n"));
        assert!(!has_rust_example(
            "```yaml\na: 1\n```\n```text\ntree\n```\n"
        ));
        assert!(!has_rust_example("```rust,ignore\nnot built\n```\n"));
        // The closing fence of a YAML block does not open a Rust one.
        assert!(!has_rust_example("```yaml\na: 1\n```\nprose\n"));
    }

    #[test]
    fn the_categories_are_sorted_and_unique() {
        let mut sorted = CRATES_IO_CATEGORIES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, CRATES_IO_CATEGORIES);
    }

    #[test]
    fn keywords_follow_crates_io_rules() {
        let mut problems = Vec::new();
        let words = [
            "llm",
            "json-rpc",
            "c++",
            "-dash",
            "a-very-long-keyword-indeed",
            "é",
        ];
        check_keywords(&words.map(str::to_owned), &mut |message: String| {
            problems.push(message)
        });
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(problems[0].starts_with("has 6 keywords"));
        assert!(problems[1].starts_with("keyword \"-dash\""));
        assert!(problems[2].starts_with("keyword \"a-very-long-keyword-indeed\""));
        assert!(problems[3].starts_with("keyword \"é\""));
    }
}
