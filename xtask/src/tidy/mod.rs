//! `cargo xtask tidy`: workspace-wide checks that report every violation at once.
//!
//! The checks are [`layering`] (dependencies point down the layer table in ARCHITECTURE.md),
//! [`module_cycles`] (sibling modules inside a crate depend on each other one way only, read
//! through [`modules`]), [`source`] (`//!` doc headers, no ignored tests, no leftover
//! debugging macros) and [`doc_links`] (relative links in the Markdown name files that exist).
// `run` prints the violations for a person at a terminal: that is its job.
#![allow(clippy::print_stdout)]

pub mod doc_links;
pub mod layering;
pub mod module_cycles;
pub mod modules;
pub mod source;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// One thing tidy objects to, located at a file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The offending file, relative to the workspace root.
    pub path: PathBuf,
    /// The 1-based line the violation is on.
    pub line: usize,
    /// What is wrong, and which rule says so.
    pub message: String,
}

impl Violation {
    /// A violation at `line` of `path` (relative to the workspace root).
    pub fn new(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}",
            display_path(&self.path),
            self.line,
            self.message
        )
    }
}

/// Runs every tidy check on the workspace at `root` and returns all violations, sorted by place.
pub fn check_workspace(root: &Path) -> Vec<Violation> {
    let mut violations = layering::check(root);
    violations.extend(module_cycles::check(root));
    violations.extend(source::check(root));
    violations.extend(doc_links::check(root));
    violations.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    violations
}

/// Runs the checks, prints every violation, and fails if there is any.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let violations = check_workspace(root);
    if violations.is_empty() {
        println!("tidy: no violations");
        return Ok(());
    }
    for violation in &violations {
        println!("{violation}");
    }
    bail!("tidy found {} violation(s)", violations.len())
}

/// A path with `/` separators on every platform, so messages read the same everywhere.
pub fn display_path(path: &Path) -> String {
    path.components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The path of `path` relative to `root`, or `path` itself when it is not under `root`.
fn relative_to(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// The 1-based line number of byte `offset` in `text`.
fn line_of_offset(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_display_as_path_line_message() {
        let violation = Violation::new("crates/a/src/lib.rs", 3, "bad");
        assert_eq!(violation.to_string(), "crates/a/src/lib.rs:3: bad");
    }

    #[test]
    fn offsets_map_to_one_based_lines() {
        let text = "a\nbc\nd";
        assert_eq!(line_of_offset(text, 0), 1);
        assert_eq!(line_of_offset(text, 2), 2);
        assert_eq!(line_of_offset(text, 5), 3);
        assert_eq!(line_of_offset(text, 999), 3);
    }
}
