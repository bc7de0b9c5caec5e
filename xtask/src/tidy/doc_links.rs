//! The documentation link check: every relative link in the workspace's Markdown names a file
//! or directory that exists.
//!
//! A renamed screenshot or a moved document leaves its links pointing at nothing, and no build
//! notices. Inline links (`[text](target)`, images included) and reference definitions
//! (`[label]: target`) are checked outside fenced code blocks; links with a scheme (`https:`,
//! `mailto:`), bare fragments (`#section`), site-absolute paths (`/...`) and rustdoc's
//! intra-doc links (`adk_core::Agent`, `mod@tool`, `content`: a crate's README is its crate
//! docs, whose links `cargo doc` checks) are left alone.

use std::path::{Path, PathBuf};

use super::source::collect_files;
use super::{Violation, relative_to};

/// Runs the link check on every `.md` file of the workspace at `root`.
pub fn check(root: &Path) -> Vec<Violation> {
    let mut files = Vec::new();
    collect_files(root, "md", &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in files {
        let path = relative_to(root, &file);
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                let dir = file.parent().unwrap_or(root);
                for (line, target) in broken_links(&text, |target| dir.join(target).exists()) {
                    violations.push(Violation::new(&path, line, broken_link_message(&target)));
                }
            }
            Err(err) => violations.push(Violation::new(path, 1, format!("cannot read: {err}"))),
        }
    }
    violations
}

/// The message for a link whose target does not exist.
pub fn broken_link_message(target: &str) -> String {
    format!("broken link: `{target}` names no file beside this document")
}

/// The relative link targets of `text` (line, target without its fragment) for which `exists`
/// answers false.
pub fn broken_links(text: &str, exists: impl Fn(&Path) -> bool) -> Vec<(usize, String)> {
    let mut broken = Vec::new();
    let mut fence: Option<&str> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = Some(marker);
            continue;
        }
        for target in link_targets(line) {
            if let Some(file) = local_file(target)
                && !exists(&file)
            {
                broken.push((index + 1, target.to_owned()));
            }
        }
    }
    broken
}

/// The targets of the inline links and the reference definition on one line, with inline code
/// spans skipped.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    if let Some(rest) = line.trim_start().strip_prefix('[')
        && let Some((_, after)) = rest.split_once("]:")
        && let Some(target) = after.split_whitespace().next()
    {
        targets.push(target.trim_start_matches('<').trim_end_matches('>'));
    }
    let mut in_code = false;
    let bytes = line.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(index + 1) == Some(&b'(') => {
                let start = index + 2;
                if let Some(length) = line[start..].find(')') {
                    let inside = &line[start..start + length];
                    if let Some(target) = inside.split_whitespace().next() {
                        targets.push(target.trim_start_matches('<').trim_end_matches('>'));
                    }
                    index = start + length;
                }
            }
            _ => {}
        }
        index += 1;
    }
    targets
}

/// The file a link target names relative to its document, or `None` for a link this check
/// leaves alone (a URL, a bare fragment, a site-absolute path, a Rust item).
fn local_file(target: &str) -> Option<PathBuf> {
    let path = target.split(['#', '?']).next().unwrap_or_default();
    let has_scheme = path.split_once(':').is_some_and(|(scheme, rest)| {
        !rest.starts_with(':')
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+')
    });
    if path.is_empty() || path.starts_with('/') || has_scheme || is_rust_item(path) {
        return None;
    }
    Some(PathBuf::from(path))
}

/// Whether a link target is a rustdoc intra-doc path: identifiers joined by `::`, perhaps
/// after a `kind@` disambiguator, with no `/` or `.` a file path would have.
fn is_rust_item(target: &str) -> bool {
    let item = target.split_once('@').map_or(target, |(_, item)| item);
    !item.is_empty()
        && item
            .split("::")
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broken(text: &str) -> Vec<(usize, String)> {
        broken_links(text, |path| {
            ["docs/eval.md", "docs/images/ui.png", "crates"]
                .iter()
                .any(|known| Path::new(known) == path)
        })
    }

    #[test]
    fn links_to_existing_files_pass() {
        let text = "See [eval](docs/eval.md#the-evals-tab) and\n![ui](docs/images/ui.png \"UI\").\n\
                    [crates]: crates\n";
        assert!(broken(text).is_empty());
    }

    #[test]
    fn links_to_missing_files_are_reported_with_their_line() {
        let text = "# Title\n\n![ui](docs/images/old.png)\n[ref]: docs/gone.md#part\n";
        assert_eq!(
            broken(text),
            vec![
                (3, "docs/images/old.png".to_owned()),
                (4, "docs/gone.md#part".to_owned())
            ]
        );
    }

    #[test]
    fn urls_fragments_code_and_fences_are_left_alone() {
        let text = "[a](https://example.com/x.md) [b](#local) [c](mailto:a@b.c) [d](/abs)\n\
                    [`Agent`](adk_core::Agent) [tool](mod@tool) [capture](content)\n\
                    `[e](missing.md)`\n```\n[f](missing.md)\n```\n";
        assert!(broken(text).is_empty());
    }
}
