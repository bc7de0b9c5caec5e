//! CHANGELOG.md in the Keep a Changelog format: finding the section of a release and dating it.
//!
//! A release's section starts with a level-two heading naming its version in brackets,
//! `## [0.2.0]`, optionally dated, `## [0.2.0] - 2026-11-24`, and runs to the next such heading.

use semver::Version;

/// The changelog file, at the workspace root.
pub const CHANGELOG: &str = "CHANGELOG.md";

/// The section of one release in a changelog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section<'a> {
    /// The heading line, as written.
    pub heading: &'a str,
    /// The byte range of the heading line in the changelog (without its line break).
    pub heading_range: std::ops::Range<usize>,
    /// The date after the heading's version, if there is one.
    pub date: Option<&'a str>,
    /// What the section says, trimmed.
    pub body: &'a str,
}

/// Why a changelog has no usable section for a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionError {
    /// No `## [version]` heading.
    Missing,
    /// The heading is there but nothing follows it before the next release.
    Empty,
    /// The heading has something after the version that is not ` - YYYY-MM-DD`.
    BadDate(String),
}

impl std::fmt::Display for SectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str("has no section for it"),
            Self::Empty => f.write_str("has an empty section for it"),
            Self::BadDate(heading) => write!(
                f,
                "dates it oddly in `{heading}`: write `## [<version>]` or `## [<version>] - YYYY-MM-DD`"
            ),
        }
    }
}

/// The section of `version` in `changelog`.
pub fn section<'a>(changelog: &'a str, version: &Version) -> Result<Section<'a>, SectionError> {
    let wanted = format!("[{version}]");
    let mut offset = 0;
    let mut found: Option<(std::ops::Range<usize>, &str, Option<&str>)> = None;
    let mut body_start = 0;
    let mut body_end = changelog.len();
    for line in changelog.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        let Some(title) = text.strip_prefix("## ") else {
            continue;
        };
        if found.is_some() {
            body_end = start;
            break;
        }
        let Some(rest) = title.trim().strip_prefix(&wanted) else {
            continue;
        };
        let rest = rest.trim();
        let date = if rest.is_empty() {
            None
        } else {
            match rest.strip_prefix('-').map(str::trim) {
                Some(date) if is_iso_date(date) => Some(date),
                _ => return Err(SectionError::BadDate(text.to_owned())),
            }
        };
        found = Some((start..start + text.len(), text, date));
        body_start = offset;
    }
    let Some((heading_range, heading, date)) = found else {
        return Err(SectionError::Missing);
    };
    let body = changelog[body_start..body_end].trim();
    if body.is_empty() {
        return Err(SectionError::Empty);
    }
    Ok(Section {
        heading,
        heading_range,
        date,
        body,
    })
}

/// `changelog` with the section of `version` dated `date` (`YYYY-MM-DD`), if it had no date.
pub fn with_date(changelog: &str, section: &Section<'_>, version: &Version, date: &str) -> String {
    if section.date.is_some() {
        return changelog.to_owned();
    }
    let mut dated = String::with_capacity(changelog.len() + date.len() + 3);
    dated.push_str(&changelog[..section.heading_range.start]);
    dated.push_str(&format!("## [{version}] - {date}"));
    dated.push_str(&changelog[section.heading_range.end..]);
    dated
}

/// Whether `text` is a `YYYY-MM-DD` date.
fn is_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHANGELOG_TEXT: &str = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0]\n\n### Added\n\n\
                                  - A server.\n\n## [0.1.0] - 2026-01-02\n\n- The core.\n";

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn a_section_runs_to_the_next_release() {
        let section = section(CHANGELOG_TEXT, &v("0.2.0")).unwrap();
        assert_eq!(section.heading, "## [0.2.0]");
        assert_eq!(section.date, None);
        assert_eq!(section.body, "### Added\n\n- A server.");
        let older = super::section(CHANGELOG_TEXT, &v("0.1.0")).unwrap();
        assert_eq!(older.date, Some("2026-01-02"));
        assert_eq!(older.body, "- The core.");
    }

    #[test]
    fn missing_empty_and_oddly_dated_sections_are_refused() {
        assert_eq!(
            section(CHANGELOG_TEXT, &v("0.3.0")),
            Err(SectionError::Missing)
        );
        let empty = "## [0.3.0]\n\n## [0.2.0]\n- x\n";
        assert_eq!(section(empty, &v("0.3.0")), Err(SectionError::Empty));
        let odd = "## [0.3.0] (soon)\n- x\n";
        assert_eq!(
            section(odd, &v("0.3.0")),
            Err(SectionError::BadDate("## [0.3.0] (soon)".to_owned()))
        );
        // [0.2.0] is not [0.2.0-rc.1], nor the other way round.
        assert_eq!(
            section(CHANGELOG_TEXT, &v("0.2.0-rc.1")),
            Err(SectionError::Missing)
        );
    }

    #[test]
    fn dating_a_section_changes_its_heading_alone() {
        let version = v("0.2.0");
        let section = section(CHANGELOG_TEXT, &version).unwrap();
        let dated = with_date(CHANGELOG_TEXT, &section, &version, "2026-11-24");
        assert_eq!(
            dated,
            CHANGELOG_TEXT.replace("## [0.2.0]\n", "## [0.2.0] - 2026-11-24\n")
        );
        let again = super::section(&dated, &version).unwrap();
        assert_eq!(with_date(&dated, &again, &version, "2027-01-01"), dated);
    }
}
