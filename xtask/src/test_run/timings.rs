//! How long each test binary took last time, kept beside the build, so the next run starts the
//! slowest first and its wall time is the longest binary rather than the sum of a queue's tail.
//! A build that has never run the tests (a fresh machine, a new target directory) orders them by
//! the committed `xtask/test-timings.tsv` instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file, in the build's profile folder (`target/debug`), that holds the timings.
const FILE_NAME: &str = "xtask-test-timings.tsv";

/// The timings of a whole test step, committed: what a build that never ran the tests goes by.
/// Refresh it from a run's own file (`target/debug/xtask-test-timings.tsv`) when the slowest
/// binaries change.
const COMMITTED: &str = include_str!("../../test-timings.tsv");

/// Seconds per test binary, by [`key`](super::binaries::TestBinary::key).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Timings {
    seconds: HashMap<String, f64>,
}

impl Timings {
    /// Where the timings of the binaries in `deps_dir` (`target/debug/deps`) are kept.
    pub fn file_for(deps_dir: &Path) -> PathBuf {
        deps_dir.parent().unwrap_or(deps_dir).join(FILE_NAME)
    }

    /// The timings in `file` over the committed ones: a binary this build has never run is
    /// ordered by its committed time. The run writes the file for the next one.
    pub fn load(file: &Path) -> Self {
        let local = std::fs::read_to_string(file)
            .map(|text| Self::parse(&text))
            .unwrap_or_default();
        Self::parse(COMMITTED).overlaid_with(local)
    }

    /// These timings with those of `newer` replacing them where both have a binary.
    pub fn overlaid_with(mut self, newer: Self) -> Self {
        self.seconds.extend(newer.seconds);
        self
    }

    /// Timings from `seconds<TAB>key` lines; other lines (comments, blanks) are skipped.
    pub fn parse(text: &str) -> Self {
        let seconds = text
            .lines()
            .filter_map(|line| {
                let (seconds, key) = line.split_once('\t')?;
                Some((key.to_owned(), seconds.parse().ok()?))
            })
            .collect();
        Self { seconds }
    }

    /// The timings as the file holds them, slowest first.
    pub fn render(&self) -> String {
        let mut rows: Vec<(&String, &f64)> = self.seconds.iter().collect();
        rows.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
        rows.iter()
            .map(|(key, seconds)| format!("{seconds:.2}\t{key}\n"))
            .collect()
    }

    /// Records that `key` took `elapsed`.
    pub fn record(&mut self, key: &str, elapsed: Duration) {
        self.seconds.insert(key.to_owned(), elapsed.as_secs_f64());
    }

    /// How long `key` took last time, if it ran.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.seconds.get(key).copied()
    }

    /// Sorts `items` slowest first by their key's last time. Items never timed go first, in
    /// their given order: a new test binary may be slow, and starting it early costs nothing.
    pub fn order<T>(&self, items: &mut [T], key: impl Fn(&T) -> String) {
        items.sort_by(|a, b| {
            let (a, b) = (self.get(&key(a)), self.get(&key(b)));
            match (a, b) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(a), Some(b)) => b.total_cmp(&a),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_round_trip_through_their_file_text() {
        let mut timings = Timings::default();
        timings.record("adk-cli test create", Duration::from_millis(138_820));
        timings.record("adk-core lib adk_core", Duration::from_millis(410));
        let text = timings.render();
        assert_eq!(
            text,
            "138.82\tadk-cli test create\n0.41\tadk-core lib adk_core\n"
        );
        assert_eq!(Timings::parse(&text), timings);
        assert_eq!(Timings::parse("garbage\nx\ty\n"), Timings::default());
    }

    #[test]
    fn the_slowest_go_first_after_those_never_timed() {
        let timings = Timings::parse("2\tb\n9\tc\n0.5\ta\n");
        let mut items = vec!["a", "new", "b", "c", "newer"];
        timings.order(&mut items, |item| (*item).to_owned());
        assert_eq!(items, ["new", "newer", "c", "b", "a"]);
    }

    #[test]
    fn a_build_that_never_ran_a_binary_goes_by_the_committed_time() {
        let committed = Timings::parse(COMMITTED);
        assert!(
            committed.get("adk-cli test create").is_some(),
            "the committed timings name the workspace's slow binaries"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        assert_eq!(Timings::load(&file), committed);

        std::fs::write(&file, "1.5\tadk-cli test create\n2\tnew test\n").unwrap();
        let loaded = Timings::load(&file);
        assert_eq!(loaded.get("adk-cli test create"), Some(1.5));
        assert_eq!(loaded.get("new test"), Some(2.0));
        assert_eq!(
            loaded.get("adk-session test session_conformance"),
            committed.get("adk-session test session_conformance")
        );
    }

    #[test]
    fn the_file_sits_beside_the_deps_folder() {
        assert_eq!(
            Timings::file_for(Path::new("/t/debug/deps")),
            Path::new("/t/debug/xtask-test-timings.tsv")
        );
    }
}
