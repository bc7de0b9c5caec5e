//! [`Glob`]: which files of a directory a corpus indexes, by a pattern over their paths relative
//! to the directory (`**/*.md`, `guides/*.{md,txt}`).

use crate::retrieval::RetrievalError;

/// A pattern over `/`-separated relative paths: `*` matches within one path segment, `**` as a
/// whole segment matches any number of segments (none too), `?` one character of a segment, and
/// `{a,b}` either alternative. Other characters match themselves.
///
/// ```
/// use adk_tool::retrieval::Glob;
///
/// let glob = Glob::new("**/*.{md,txt}").unwrap();
/// assert!(glob.matches("README.md"));
/// assert!(glob.matches("guides/install/linux.txt"));
/// assert!(!glob.matches("src/main.rs"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    /// The pattern with its braces expanded, each split into segments.
    alternatives: Vec<Vec<String>>,
}

impl Glob {
    /// Parses `pattern`.
    ///
    /// # Errors
    ///
    /// [`RetrievalError::InvalidGlob`] for an empty pattern, an absolute one, or braces that do
    /// not close or nest.
    pub fn new(pattern: impl Into<String>) -> Result<Self, RetrievalError> {
        let pattern = pattern.into();
        let invalid = |reason: &str| RetrievalError::InvalidGlob {
            pattern: pattern.clone(),
            reason: reason.to_owned(),
        };
        if pattern.is_empty() {
            return Err(invalid("it is empty"));
        }
        if pattern.starts_with('/') {
            return Err(invalid("it must be relative to the directory"));
        }
        let expanded = expand_braces(&pattern).map_err(invalid)?;
        let alternatives = expanded
            .iter()
            .map(|one| one.split('/').map(str::to_owned).collect())
            .collect();
        Ok(Self {
            pattern,
            alternatives,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether `path` (relative, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        let segments: Vec<&str> = path.split('/').collect();
        self.alternatives.iter().any(|pattern| {
            let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
            matches_segments(&pattern, &segments)
        })
    }
}

/// Every pattern `pattern` stands for once its `{a,b}` groups are expanded.
fn expand_braces(pattern: &str) -> Result<Vec<String>, &'static str> {
    let Some(open) = pattern.find('{') else {
        if pattern.contains('}') {
            return Err("a `}` closes no `{`");
        }
        return Ok(vec![pattern.to_owned()]);
    };
    let close = pattern[open..]
        .find('}')
        .map(|at| open + at)
        .ok_or("a `{` is not closed")?;
    let inside = &pattern[open + 1..close];
    if inside.contains('{') {
        return Err("braces cannot nest");
    }
    let (before, after) = (&pattern[..open], &pattern[close + 1..]);
    let mut expanded = Vec::new();
    for rest in expand_braces(after)? {
        for choice in inside.split(',') {
            expanded.push(format!("{before}{choice}{rest}"));
        }
    }
    Ok(expanded)
}

/// Whether the path `segments` match the pattern `pattern`, segment by segment.
fn matches_segments(pattern: &[&str], segments: &[&str]) -> bool {
    match pattern.split_first() {
        None => segments.is_empty(),
        Some((&"**", rest)) => {
            (0..=segments.len()).any(|skip| matches_segments(rest, &segments[skip..]))
        }
        Some((first, rest)) => segments.split_first().is_some_and(|(segment, others)| {
            matches_segment(first, segment) && matches_segments(rest, others)
        }),
    }
}

/// Whether one path segment matches one pattern segment (`*` and `?` within it).
fn matches_segment(pattern: &str, segment: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let segment: Vec<char> = segment.chars().collect();
    // The classic two-pointer wildcard match, which backtracks only to the last `*`.
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < segment.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == segment[s]) {
            p += 1;
            s += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, s));
            p += 1;
        } else if let Some((star_p, star_s)) = star {
            p = star_p + 1;
            s = star_s + 1;
            star = Some((star_p, star_s + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_question_marks_and_braces() {
        let cases = [
            ("*.md", "a.md", true),
            ("*.md", "dir/a.md", false),
            ("**/*.md", "a.md", true),
            ("**/*.md", "x/y/z.md", true),
            ("docs/**", "docs/a/b.txt", true),
            ("docs/**", "other/a.txt", false),
            ("docs/**/notes.txt", "docs/notes.txt", true),
            ("?.txt", "a.txt", true),
            ("?.txt", "ab.txt", false),
            ("*.{md,txt}", "a.txt", true),
            ("*.{md,txt}", "a.rs", false),
            ("{a,b}/{c,d}.md", "b/c.md", true),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(
                Glob::new(pattern).unwrap().matches(path),
                expected,
                "{pattern} {path}"
            );
        }
    }

    #[test]
    fn bad_patterns_say_why() {
        for (pattern, reason) in [
            ("", "empty"),
            ("/etc/*", "relative"),
            ("*.{md", "not closed"),
            ("*.{a,{b}}", "nest"),
            ("a}", "closes no"),
        ] {
            let error = Glob::new(pattern).unwrap_err();
            assert!(error.to_string().contains(reason), "{pattern}: {error}");
        }
    }
}
