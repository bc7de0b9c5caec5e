//! The source checks: `//!` doc headers, no ignored tests, no leftover debugging macros.
//!
//! Every `.rs` file under `crates/`, `examples/` and `xtask/` (skipping `target` and hidden
//! directories) must start with a `//!` line (a `lib.rs` may start by including its crate's
//! README as the crate docs instead), must not ignore a test, and, outside xtask, must not
//! invoke the debugging or placeholder macros. The patterns are assembled with `concat!` so that
//! this file, which names them, does not trip the checks itself.

use std::path::{Path, PathBuf};

use super::{Violation, relative_to};

/// The directories, relative to the workspace root, whose `.rs` files are checked.
pub const CHECKED_DIRS: &[&str] = &["crates", "examples", "xtask"];

/// The directory whose files may use the forbidden macros (in its own test fixtures, say).
const MACRO_EXEMPT_DIR: &str = "xtask";

/// The start of an ignore attribute, bare or with a reason after `=`.
pub const IGNORE_ATTRIBUTE: &str = concat!("#[", "ignore");

/// The macro invocations that must not be left in crates and examples.
pub const FORBIDDEN_MACROS: &[&str] = &[
    concat!("dbg", "!("),
    concat!("todo", "!("),
    concat!("unimplemented", "!("),
];

/// The message for a file whose first line is not a `//!` comment.
pub const MISSING_HEADER: &str = "missing `//!` doc header: the first line must be a `//!` comment saying what the file owns \
     (or, in a `lib.rs`, the crate's README as its docs: `#![doc = include_str!(\"../README.md\")]`)";

/// The first line of a `lib.rs` whose crate docs are its README (the README is the crate's page
/// on crates.io and its doc root on docs.rs, so the two cannot drift apart).
pub const README_DOC_HEADER: &str = r#"#![doc = include_str!("../README.md")]"#;

/// The message for a line that ignores a test.
pub fn ignored_test_message() -> String {
    format!("ignored test ({IGNORE_ATTRIBUTE}]): fix the test or delete it, never ignore it")
}

/// The message for a line that invokes the forbidden macro `pattern`, such as the debug-print one.
pub fn forbidden_macro_message(pattern: &str) -> String {
    format!("`{pattern}..)` left in the code: remove it before merging")
}

/// Runs the source checks on every `.rs` file of the workspace at `root`.
pub fn check(root: &Path) -> Vec<Violation> {
    let mut violations = Vec::new();
    for file in rust_files(root) {
        let path = relative_to(root, &file);
        match std::fs::read(&file) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                violations.extend(check_file(&path, &text));
            }
            Err(err) => violations.push(Violation::new(path, 1, format!("cannot read: {err}"))),
        }
    }
    violations
}

/// Runs the source checks on one file's text; `path` is relative to the workspace root.
pub fn check_file(path: &Path, text: &str) -> Vec<Violation> {
    let mut violations = Vec::new();
    if !has_doc_header(path, text) {
        violations.push(Violation::new(path, 1, MISSING_HEADER));
    }
    let check_macros = !path.starts_with(MACRO_EXEMPT_DIR);
    for (index, line) in text.lines().enumerate() {
        if is_comment(line) {
            continue;
        }
        let line_number = index + 1;
        if ignores_a_test(line) {
            violations.push(Violation::new(path, line_number, ignored_test_message()));
        }
        if !check_macros {
            continue;
        }
        for pattern in FORBIDDEN_MACROS {
            if invokes_macro(line, pattern) {
                let message = forbidden_macro_message(pattern);
                violations.push(Violation::new(path, line_number, message));
            }
        }
    }
    violations
}

/// Whether the file's first line is a `//!` doc comment, or, for a `lib.rs`, the
/// [`README_DOC_HEADER`].
fn has_doc_header(path: &Path, text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}');
    text.starts_with("//!")
        || (path.file_name().is_some_and(|name| name == "lib.rs")
            && text.lines().next() == Some(README_DOC_HEADER))
}

/// Whether the line is a `//` comment (doc comments included), which the line checks skip.
fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("//")
}

/// Whether the line carries an ignore attribute, plain or under `cfg_attr`.
fn ignores_a_test(line: &str) -> bool {
    let plain = match_positions(line, IGNORE_ATTRIBUTE)
        .any(|start| !is_ident_char_at(line, start + IGNORE_ATTRIBUTE.len()));
    plain || (line.contains(concat!("#[", "cfg_attr(")) && contains_word(line, "ignore"))
}

/// Whether the line invokes the macro `pattern` itself, not one whose name ends with it.
fn invokes_macro(line: &str, pattern: &str) -> bool {
    match_positions(line, pattern).any(|start| start == 0 || !is_ident_char_at(line, start - 1))
}

/// Whether `word` occurs in `line` as a whole identifier.
fn contains_word(line: &str, word: &str) -> bool {
    match_positions(line, word).any(|start| {
        let before = start == 0 || !is_ident_char_at(line, start - 1);
        before && !is_ident_char_at(line, start + word.len())
    })
}

/// The byte offsets at which `pattern` occurs in `line`.
fn match_positions<'a>(line: &'a str, pattern: &'a str) -> impl Iterator<Item = usize> + 'a {
    line.match_indices(pattern).map(|(start, _)| start)
}

/// Whether the byte at `index` of `line` is part of an identifier (false past the end).
fn is_ident_char_at(line: &str, index: usize) -> bool {
    line.as_bytes()
        .get(index)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Every `.rs` file under the [`CHECKED_DIRS`] of `root`, in a stable order.
pub fn rust_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in CHECKED_DIRS {
        collect_files(&root.join(dir), "rs", &mut files);
    }
    files.sort();
    files
}

/// Pushes the files named `*.<extension>` under `dir` onto `files`, skipping build output,
/// installed packages and hidden directories.
pub fn collect_files(dir: &Path, extension: &str, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if !is_skipped_dir(&path) {
                collect_files(&path, extension, files);
            }
        } else if path.extension().is_some_and(|ext| ext == extension) {
            files.push(path);
        }
    }
}

/// Whether a directory is build output, installed packages or hidden, and so not walked.
fn is_skipped_dir(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name == "target" || name == "node_modules" || name.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(path: &str, text: &str) -> Vec<(usize, String)> {
        check_file(Path::new(path), text)
            .into_iter()
            .map(|v| (v.line, v.message))
            .collect()
    }

    #[test]
    fn a_doc_header_on_the_first_line_passes() {
        assert!(messages("crates/a/src/lib.rs", "//! a\nfn f() {}\n").is_empty());
    }

    #[test]
    fn a_missing_or_late_doc_header_fails() {
        let expected = vec![(1, MISSING_HEADER.to_owned())];
        assert_eq!(messages("crates/a/src/lib.rs", ""), expected);
        assert_eq!(
            messages("crates/a/src/lib.rs", "/// a\nfn f() {}\n"),
            expected
        );
        assert_eq!(messages("crates/a/src/lib.rs", "\n//! late\n"), expected);
    }

    #[test]
    fn ignore_attributes_fail_in_every_form() {
        for attribute in [
            concat!("#[", "ignore]"),
            concat!("#[", "ignore = \"slow\"]"),
            concat!("#[", "cfg_attr(miri, ", "ignore)]"),
        ] {
            let text = format!("//! t\n#[test]\n{attribute}\nfn t() {{}}\n");
            assert_eq!(
                messages("xtask/tests/t.rs", &text),
                [(3, ignored_test_message())],
                "{attribute}"
            );
        }
    }

    #[test]
    fn lookalikes_and_comments_pass() {
        let text = concat!(
            "//! t\n",
            "#[",
            "ignored_by_nothing]\n",
            "// #[",
            "ignore]\n",
            "/// dbg",
            "!(x)\n",
            "my_dbg",
            "!(x);\n",
        );
        assert!(messages("crates/a/src/lib.rs", text).is_empty());
    }

    #[test]
    fn forbidden_macros_fail_outside_xtask() {
        let text = concat!(
            "//! t\nfn f() {\n    dbg",
            "!(1);\n    std::todo",
            "!()\n}\n"
        );
        assert_eq!(
            messages("crates/a/src/lib.rs", text),
            [
                (3, forbidden_macro_message(FORBIDDEN_MACROS[0])),
                (4, forbidden_macro_message(FORBIDDEN_MACROS[1])),
            ]
        );
        assert!(messages("xtask/src/x.rs", text).is_empty());
    }
}
