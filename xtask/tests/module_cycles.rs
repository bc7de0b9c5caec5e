//! The module-cycle check on small crates written into temporary directories: a cycle between
//! siblings bites, however its edges are written (a `use`, a path in code, a re-export, a macro
//! call); a parent and its child, and test-only code, do not make one. (The real workspace is
//! checked by tidy's own test.)

use std::fs;
use std::path::Path;

use tempfile::TempDir;
use xtask::tidy::module_cycles::{check, cycles};
use xtask::tidy::{Violation, display_path};

/// A workspace with one crate, `crates/demo`, whose `src` files are given as (path, text).
fn demo_crate(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, text) in files {
        let path = dir.path().join("crates/demo/src").join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("the source directory");
        fs::write(path, text).expect("a source file");
    }
    dir
}

/// The cycles' member lists, as `parent: a, b`.
fn cycle_members(root: &Path) -> Vec<String> {
    let (found, unreadable) = cycles(root);
    assert_eq!(unreadable, []);
    found
        .iter()
        .map(|cycle| format!("{}: {}", cycle.parent.join("::"), cycle.modules.join(", ")))
        .collect()
}

#[test]
fn siblings_that_use_each_other_are_a_cycle_with_both_edges_named() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::Thing;\npub struct Other;\n"),
        (
            "b.rs",
            "pub struct Thing;\n\npub fn make() -> crate::a::Other {\n    crate::a::Other\n}\n",
        ),
    ]);
    let violations = check(workspace.path());
    let report: Vec<String> = violations.iter().map(Violation::to_string).collect();
    assert_eq!(
        report,
        [
            "crates/demo/src/a.rs:1: module cycle under the crate root between a, b: a -> b \
             (crates/demo/src/a.rs:1 `crate::b::Thing`), b -> a (crates/demo/src/b.rs:3 \
             `crate::a::Other`); give what they share a home both can depend on, so the \
             modules read in one direction"
        ]
    );
}

#[test]
fn a_cycle_around_three_modules_is_one_cycle() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod leaf;\n"),
        ("a.rs", "pub fn f() { crate::b::g() }\n"),
        ("b.rs", "pub fn g() { crate::c::h() }\n"),
        ("c.rs", "pub fn h() { crate::a::f(); crate::leaf::x() }\n"),
        ("leaf.rs", "pub fn x() {}\n"),
    ]);
    assert_eq!(cycle_members(workspace.path()), [": a, b, c"]);
}

#[test]
fn a_parent_and_its_children_are_no_cycle_but_nested_siblings_are() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod flow;\n"),
        (
            "flow/mod.rs",
            "mod steps;\nmod step;\npub struct Shared;\npub fn run() { steps::go() }\n",
        ),
        (
            "flow/steps.rs",
            "use super::Shared;\npub fn go() { super::step::one() }\n",
        ),
        ("flow/step.rs", "pub fn one() { super::steps::go() }\n"),
    ]);
    assert_eq!(cycle_members(workspace.path()), ["flow: step, steps"]);
}

#[test]
fn a_use_through_a_re_export_counts_against_the_defining_module() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod agent;\nmod flow;\npub use agent::Agent;\n"),
        (
            "agent.rs",
            "pub struct Agent;\nimpl Agent { pub fn run(&self) { crate::flow::run() } }\n",
        ),
        ("flow.rs", "use crate::Agent;\npub fn run() {}\n"),
    ]);
    assert_eq!(cycle_members(workspace.path()), [": agent, flow"]);
}

#[test]
fn paths_inside_macro_calls_count() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub const NAME: &str = \"a\";\npub fn f() -> String { format!(\"{}\", crate::b::NAME) }\n",
        ),
        (
            "b.rs",
            "pub const NAME: &str = \"b\";\npub fn g() -> String { vec![crate::a::NAME].concat() }\n",
        ),
    ]);
    assert_eq!(cycle_members(workspace.path()), [": a, b"]);
}

#[test]
fn test_only_code_makes_no_cycle() {
    let workspace = demo_crate(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub fn f() { crate::b::g() }\n"),
        (
            "b.rs",
            "pub fn g() {}\n\n#[cfg(test)]\nmod tests {\n    use crate::a::f;\n}\n\n\
             #[cfg(test)]\nfn helper() { crate::a::f() }\n",
        ),
    ]);
    assert_eq!(cycle_members(workspace.path()), Vec::<String>::new());
}

#[test]
fn a_crate_that_does_not_parse_is_reported() {
    let workspace = demo_crate(&[("lib.rs", "mod a;\n"), ("a.rs", "pub fn broken( {\n")]);
    let (_, unreadable) = cycles(workspace.path());
    assert_eq!(unreadable.len(), 1);
    assert_eq!(display_path(&unreadable[0].path), "crates/demo/src/a.rs");
    assert!(unreadable[0].message.starts_with("cannot parse"));
}
