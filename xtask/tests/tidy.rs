//! Tidy as a test: the real workspace has no violations, and fake workspaces show each check bites.
//!
//! The fake workspaces are small trees of `Cargo.toml` and `.rs` files written into temporary
//! directories; each test breaks one rule and asserts on the exact violation tidy reports.

use std::fs;
use std::path::Path;

use tempfile::TempDir;
use xtask::tidy::source::{
    MISSING_HEADER, README_DOC_HEADER, forbidden_macro_message, ignored_test_message,
};
use xtask::tidy::{Violation, check_workspace, display_path};
use xtask::workspace_root;

/// The sentence every up- or sideways-pointing dependency violation carries.
const POINT_DOWN: &str = "dependencies must point down the layer table in ARCHITECTURE.md";

#[test]
fn the_real_workspace_is_tidy() {
    let violations = check_workspace(&workspace_root());
    let report: Vec<String> = violations.iter().map(Violation::to_string).collect();
    assert!(
        violations.is_empty(),
        "tidy found {} violation(s):\n{}",
        violations.len(),
        report.join("\n")
    );
}

#[test]
fn a_clean_fake_workspace_is_tidy() {
    let workspace = FakeWorkspace::new();
    assert_eq!(check_workspace(workspace.root()), []);
}

#[test]
fn an_upward_dependency_fails() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency("adk-core", "[dependencies]", "adk-flow.workspace = true");
    assert_eq!(
        report(&workspace),
        [format!(
            "crates/adk-core/Cargo.toml:6: adk-core (L0) depends on adk-flow (L2): {POINT_DOWN}"
        )]
    );
}

#[test]
fn a_sideways_dependency_fails() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency(
        "adk-model",
        "[dependencies]",
        "adk-tool = { workspace = true, features = [\"x\"] }",
    );
    assert_eq!(
        report(&workspace),
        [format!(
            "crates/adk-model/Cargo.toml:7: adk-model (L1) depends on adk-tool (L1): {POINT_DOWN} \
             (no sideways dependencies within a layer)"
        )]
    );
}

#[test]
fn adk_test_as_a_normal_dependency_fails() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency("adk-runner", "[dependencies]", "adk-test.workspace = true");
    workspace.add_dependency(
        "quickstart",
        "[build-dependencies]",
        "adk-test = { path = \"../../crates/adk-test\" }",
    );
    assert_eq!(
        report(&workspace),
        [
            "crates/adk-runner/Cargo.toml:8: adk-runner (L3) depends on adk-test under \
             [dependencies]: adk-test may appear only under [dev-dependencies]",
            "examples/quickstart/Cargo.toml:9: quickstart (app) depends on adk-test under \
             [build-dependencies]: adk-test may appear only under [dev-dependencies]",
        ]
    );
}

#[test]
fn adk_test_may_be_a_dev_dependency_anywhere() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency(
        "adk-core",
        "[dev-dependencies]",
        "adk-test.workspace = true",
    );
    workspace.add_dependency("adk", "[dev-dependencies]", "adk-test.workspace = true");
    assert_eq!(check_workspace(workspace.root()), []);
}

#[test]
fn adk_test_depending_above_l1_fails() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency("adk-test", "[dependencies]", "adk-flow.workspace = true");
    assert_eq!(
        report(&workspace),
        [
            "crates/adk-test/Cargo.toml:7: adk-test (dev) depends on adk-flow (L2): \
             adk-test may depend only on L0 and L1 crates (ARCHITECTURE.md)"
        ]
    );
}

#[test]
fn target_specific_and_renamed_dependencies_are_checked() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency(
        "adk-session",
        "[target.'cfg(unix)'.dependencies]",
        "runner = { package = \"adk-runner\", path = \"../adk-runner\" }",
    );
    assert_eq!(
        report(&workspace),
        [format!(
            "crates/adk-session/Cargo.toml:9: adk-session (L1) depends on adk-runner (L3): \
             {POINT_DOWN}"
        )]
    );
}

#[test]
fn unlisted_crates_under_crates_are_l4() {
    let workspace = FakeWorkspace::new();
    workspace.add_crate("crates/adk-a2a", "adk-a2a", "adk-runner.workspace = true\n");
    workspace.add_crate(
        "crates/adk-widgets",
        "adk-widgets",
        "adk-a2a = { path = \"../adk-a2a\" }\n",
    );
    // The server (L5) may mount an L4 crate, and the facade (L7) re-export both.
    workspace.add_crate(
        "crates/adk-server",
        "adk-server",
        "adk-a2a = { path = \"../adk-a2a\" }\n",
    );
    workspace.add_dependency(
        "adk",
        "[dependencies]",
        "adk-server = { path = \"../adk-server\" }",
    );
    assert_eq!(
        report(&workspace),
        [format!(
            "crates/adk-widgets/Cargo.toml:6: adk-widgets (L4) depends on adk-a2a (L4): {POINT_DOWN} \
             (no sideways dependencies within a layer)"
        )]
    );
}

#[test]
fn a_file_without_a_doc_header_fails() {
    let workspace = FakeWorkspace::new();
    workspace.write(
        "crates/adk-flow/src/agent.rs",
        "/// Not a module header.\npub struct A;\n",
    );
    assert_eq!(
        report(&workspace),
        [format!("crates/adk-flow/src/agent.rs:1: {MISSING_HEADER}")]
    );
}

#[test]
fn a_lib_rs_may_take_its_docs_from_the_readme_and_no_other_file_may() {
    let workspace = FakeWorkspace::new();
    let readme_docs = format!("{README_DOC_HEADER}\npub struct A;\n");
    workspace.write("crates/adk-flow/src/lib.rs", &readme_docs);
    workspace.write("crates/adk-flow/src/agent.rs", &readme_docs);
    assert_eq!(
        report(&workspace),
        [format!("crates/adk-flow/src/agent.rs:1: {MISSING_HEADER}")]
    );
}

#[test]
fn an_ignored_test_fails() {
    let workspace = FakeWorkspace::new();
    let test = concat!(
        "//! Tests.\n",
        "\n",
        "#[test]\n",
        "#[",
        "ignore = \"flaky\"]\n",
        "fn flaky() {}\n",
    );
    workspace.write("crates/adk-tool/tests/flaky.rs", test);
    assert_eq!(
        report(&workspace),
        [format!(
            "crates/adk-tool/tests/flaky.rs:4: {}",
            ignored_test_message()
        )]
    );
}

#[test]
fn leftover_debug_macros_fail_outside_xtask() {
    let workspace = FakeWorkspace::new();
    let code = concat!("//! Code.\n", "fn f() {\n", "    dbg", "!(1);\n", "}\n");
    workspace.write("examples/quickstart/src/main.rs", code);
    workspace.write("xtask/src/debug.rs", code);
    assert_eq!(
        report(&workspace),
        [format!(
            "examples/quickstart/src/main.rs:3: {}",
            forbidden_macro_message(concat!("dbg", "!("))
        )]
    );
}

#[test]
fn target_directories_are_skipped() {
    let workspace = FakeWorkspace::new();
    workspace.write("crates/adk-core/target/debug/build/out.rs", "no header\n");
    assert_eq!(check_workspace(workspace.root()), []);
}

#[test]
fn every_violation_is_reported_at_once() {
    let workspace = FakeWorkspace::new();
    workspace.add_dependency("adk-core", "[dependencies]", "adk-flow.workspace = true");
    workspace.add_dependency("adk-model", "[dependencies]", "adk-tool.workspace = true");
    workspace.add_dependency("adk-runner", "[dependencies]", "adk-test.workspace = true");
    workspace.write("crates/adk-flow/src/agent.rs", "pub struct A;\n");
    let violations = check_workspace(workspace.root());
    let files: Vec<String> = violations.iter().map(|v| display_path(&v.path)).collect();
    assert_eq!(
        files,
        [
            "crates/adk-core/Cargo.toml",
            "crates/adk-flow/src/agent.rs",
            "crates/adk-model/Cargo.toml",
            "crates/adk-runner/Cargo.toml",
        ]
    );
}

/// Every violation tidy finds in `workspace`, formatted as `path:line: message`.
fn report(workspace: &FakeWorkspace) -> Vec<String> {
    check_workspace(workspace.root())
        .iter()
        .map(Violation::to_string)
        .collect()
}

/// A minimal, tidy copy of the adk-rs layout in a temporary directory.
struct FakeWorkspace {
    dir: TempDir,
}

/// The library crates of the fake workspace and their (correct) workspace dependencies.
const LIBRARY_CRATES: &[(&str, &[&str])] = &[
    ("adk-core", &[]),
    ("adk-telemetry", &["adk-core"]),
    ("adk-model", &["adk-core"]),
    ("adk-tool", &["adk-core"]),
    ("adk-session", &["adk-core"]),
    ("adk-flow", &["adk-core", "adk-tool"]),
    ("adk-runner", &["adk-core", "adk-flow"]),
    ("adk", &["adk-runner", "adk-core"]),
    ("adk-test", &["adk-core"]),
];

const ROOT_MANIFEST: &str = r#"[workspace]
members = ["crates/*", "examples/*", "xtask"]

[workspace.dependencies]
adk-core = { path = "crates/adk-core" }
adk-telemetry = { path = "crates/adk-telemetry" }
adk-model = { path = "crates/adk-model" }
adk-tool = { path = "crates/adk-tool" }
adk-session = { path = "crates/adk-session" }
adk-flow = { path = "crates/adk-flow" }
adk-runner = { path = "crates/adk-runner" }
adk = { path = "crates/adk" }
adk-test = { path = "crates/adk-test" }
"#;

impl FakeWorkspace {
    /// Writes a tidy workspace: every library crate, the quickstart example and xtask.
    fn new() -> Self {
        let workspace = Self {
            dir: tempfile::Builder::new()
                .prefix("xtask-tidy-")
                .tempdir()
                .expect("create a temporary directory"),
        };
        workspace.write("Cargo.toml", ROOT_MANIFEST);
        for (name, deps) in LIBRARY_CRATES {
            let deps: String = deps
                .iter()
                .map(|d| format!("{d}.workspace = true\n"))
                .collect();
            workspace.add_crate(&format!("crates/{name}"), name, &deps);
        }
        workspace.add_crate(
            "examples/quickstart",
            "quickstart",
            "adk.workspace = true\n",
        );
        workspace.add_crate("xtask", "xtask", "adk-runner.workspace = true\n");
        workspace
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `path` (relative to the root), creating its directories.
    fn write(&self, path: &str, text: &str) {
        let path = self.root().join(path);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create dirs");
        fs::write(&path, text).expect("write a file");
    }

    /// Adds a crate at `dir` with `deps` (lines of its `[dependencies]`) and a headed `lib.rs`.
    ///
    /// The manifest's lines are: 1 `[package]`, 2 name, 3 edition, 4 blank, 5 `[dependencies]`,
    /// then one line per dependency; [`Self::add_dependency`] appends after those.
    fn add_crate(&self, dir: &str, name: &str, deps: &str) {
        let manifest =
            format!("[package]\nname = \"{name}\"\nedition = \"2024\"\n\n[dependencies]\n{deps}");
        self.write(&format!("{dir}/Cargo.toml"), &manifest);
        self.write(
            &format!("{dir}/src/lib.rs"),
            &format!("//! The {name} crate.\n"),
        );
    }

    /// Appends `line` to the table `section` of crate `name`'s manifest (a new table unless it is
    /// `[dependencies]`, which the manifest ends with).
    fn add_dependency(&self, name: &str, section: &str, line: &str) {
        let manifest = self.manifest_of(name);
        let mut text = fs::read_to_string(&manifest).expect("read a manifest");
        if section == "[dependencies]" {
            // The manifest ends with its `[dependencies]` table: extend it.
            text.push_str(&format!("{line}\n"));
        } else {
            text.push_str(&format!("\n{section}\n{line}\n"));
        }
        fs::write(&manifest, text).expect("write a manifest");
    }

    /// The manifest of crate `name`, wherever the fake workspace put it.
    fn manifest_of(&self, name: &str) -> std::path::PathBuf {
        let dir = match name {
            "quickstart" => "examples/quickstart".to_owned(),
            "xtask" => "xtask".to_owned(),
            _ => format!("crates/{name}"),
        };
        self.root().join(dir).join("Cargo.toml")
    }
}
