//! What a release asks git: whether the tree is clean, which `v<version>` tags exist and which
//! one `HEAD` carries; and today's date for the CHANGELOG heading.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use semver::Version;

/// Runs git with `args` in `root` and returns its standard output.
fn git(root: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .context("could not start git")?;
    if !output.status.success() {
        bail!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            root.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).context("git printed something that is not UTF-8")
}

/// Fails, listing them, when the tree has changes, staged or not, or untracked files: a release
/// must be exactly what is committed.
pub fn require_clean(root: &Path) -> anyhow::Result<()> {
    let status = git(root, &["status", "--porcelain", "--untracked-files=all"])?;
    let dirty: Vec<&str> = status.lines().filter(|line| !line.is_empty()).collect();
    if dirty.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = dirty
        .iter()
        .take(10)
        .map(|line| format!("  {line}"))
        .collect();
    let more = match dirty.len().saturating_sub(10) {
        0 => String::new(),
        more => format!("\n  ... and {more} more"),
    };
    bail!(
        "the tree is not clean ({} changed or untracked paths); commit or stash them first, as a \
         release must be exactly what is committed:\n{}{more}",
        dirty.len(),
        shown.join("\n")
    )
}

/// The versions of the repository's `v<version>` tags, lowest first; other tags are ignored.
pub fn release_tags(root: &Path) -> anyhow::Result<Vec<Version>> {
    let tags = git(root, &["tag", "--list", "v*"])?;
    Ok(parse_release_tags(&tags))
}

/// The versions of the `v<version>` tags among `tags` (one a line), lowest first.
pub fn parse_release_tags(tags: &str) -> Vec<Version> {
    let mut versions: Vec<Version> = tags
        .lines()
        .filter_map(|tag| tag.trim().strip_prefix('v'))
        .filter_map(|version| Version::parse(version).ok())
        .collect();
    versions.sort();
    versions
}

/// Fails unless `HEAD` carries the tag `v<version>`: publishing publishes the tagged commit alone.
pub fn require_tag_at_head(root: &Path, version: &Version) -> anyhow::Result<()> {
    let tag = format!("v{version}");
    let tags = git(root, &["tag", "--points-at", "HEAD"])?;
    if !tags.lines().any(|line| line.trim() == tag) {
        bail!("HEAD does not carry the tag {tag}: publishing publishes the commit it tags");
    }
    Ok(())
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> anyhow::Result<String> {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("the clock is before 1970")?
        .as_secs();
    Ok(civil_date(seconds / 86_400))
}

/// The `YYYY-MM-DD` date of the day `days` after 1970-01-01 (the proleptic Gregorian calendar,
/// by Howard Hinnant's `civil_from_days`).
pub fn civil_date(days: u64) -> String {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(59), "1970-03-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_416), "2025-11-24");
    }

    #[test]
    fn release_tags_are_the_v_tags_that_name_a_version() {
        let tags = "v0.10.0\nv0.2.0\nnightly\nv0.3\nv0.3.0-rc.1\n";
        let versions: Vec<String> = parse_release_tags(tags)
            .iter()
            .map(Version::to_string)
            .collect();
        assert_eq!(versions, ["0.2.0", "0.3.0-rc.1", "0.10.0"]);
    }
}
