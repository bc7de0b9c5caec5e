//! The tally of a test run: libtest's `test result:` summaries added up, with the tests that
//! reported they could not run counted as skipped rather than passed.

use std::fmt;

/// The text that starts the line a test prints when it could not run (`adk_test::report_skipped`
/// prints it; keep the two in step). libtest counts such a test as passed; the tally moves it to
/// skipped.
pub const SKIPPED_MARKER: &str = "adk-test: skipped:";

/// The totals of every `test result:` line cargo test printed, with the tests that reported
/// themselves skipped moved from passed to skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestTally {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests that were ignored.
    pub ignored: u64,
    /// Tests that returned early after printing a [`SKIPPED_MARKER`] line: libtest counted them
    /// as passed, but they tested nothing.
    pub skipped: u64,
}

impl TestTally {
    /// The counts of one libtest summary line, such as
    /// `test result: ok. 18 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; ...`.
    pub fn parse_summary(line: &str) -> Option<Self> {
        let rest = line.trim().strip_prefix("test result: ")?;
        let (_outcome, counts) = rest.split_once(". ")?;
        let mut tally = Self::default();
        for part in counts.split(';') {
            let mut words = part.split_whitespace();
            let (Some(count), Some(label)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(count) = count.parse::<u64>() else {
                continue;
            };
            match label {
                "passed" => tally.passed = count,
                "failed" => tally.failed = count,
                "ignored" => tally.ignored = count,
                _ => {}
            }
        }
        Some(tally)
    }

    /// The test `line` says did not run, when it holds a [`SKIPPED_MARKER`] (libtest may have
    /// written its own `test name ... ` before it on the same line).
    pub fn skipped_test(line: &str) -> Option<&str> {
        let (_, rest) = line.split_once(SKIPPED_MARKER)?;
        let rest = rest.trim_start();
        Some(rest.split_once(" (").map_or(rest, |(test, _)| test).trim())
    }

    /// Adds another summary's counts to these.
    pub fn add(&mut self, other: Self) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
        self.skipped += other.skipped;
    }

    /// The tests that passed and really ran: libtest's passed count less the skipped ones.
    pub fn passed_and_ran(&self) -> u64 {
        self.passed.saturating_sub(self.skipped)
    }
}

impl fmt::Display for TestTally {
    /// The plain closing line CI reads: `tests: N passed, N failed, N skipped`, where skipped
    /// counts the ignored tests and those that reported they could not run.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tests: {} passed, {} failed, {} skipped",
            self.passed_and_ran(),
            self.failed,
            self.ignored + self.skipped
        )
    }
}

/// Reads cargo test's output, line by line, into a [`TestTally`]: a summary adds its counts, and
/// a test that reported it could not run moves from passed to skipped once, however many skip
/// lines it printed (a test that checks two databases prints one for each).
#[derive(Debug, Default)]
pub struct TallyReader {
    tally: TestTally,
    /// The tests of the test binary being read that reported a skip.
    skipped_here: std::collections::HashSet<String>,
}

impl TallyReader {
    /// Adds one line of output.
    pub fn observe(&mut self, line: &str) {
        if let Some(summary) = TestTally::parse_summary(line) {
            // A binary's summary closes its output: its skips were all seen.
            self.tally.add(summary);
            self.skipped_here.clear();
        } else if let Some(test) = TestTally::skipped_test(line)
            && self.skipped_here.insert(test.to_owned())
        {
            self.tally.skipped += 1;
        }
    }

    /// The totals so far.
    pub fn tally(&self) -> TestTally {
        self.tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_summaries_are_parsed_and_added_up() {
        let ok = "test result: ok. 18 passed; 0 failed; 2 ignored; 0 measured; \
                  0 filtered out; finished in 0.00s";
        let failed = "test result: FAILED. 13 passed; 1 failed; 0 ignored; 0 measured; \
                      0 filtered out; finished in 0.11s";
        let mut tally = TestTally::parse_summary(ok).unwrap();
        tally.add(TestTally::parse_summary(failed).unwrap());
        assert_eq!(
            tally,
            TestTally {
                passed: 31,
                failed: 1,
                ignored: 2,
                skipped: 0,
            }
        );
        assert_eq!(tally.to_string(), "tests: 31 passed, 1 failed, 2 skipped");
    }

    #[test]
    fn tests_that_report_a_skip_count_as_skipped_not_passed() {
        let output = [
            "running 3 tests",
            "",
            "adk-test: skipped: postgres::create_get_list_delete (ADK_POSTGRES_URL is not set)",
            "test postgres::create_get_list_delete ... ok",
            // Run with one test thread, libtest writes the name before the test prints.
            "test postgres::unicode_round_trips ... adk-test: skipped: \
             postgres::unicode_round_trips (ADK_POSTGRES_URL is not set)",
            "test in_memory::unicode_round_trips ... ok",
            "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; \
             finished in 0.01s",
        ];
        let mut reader = TallyReader::default();
        for line in output {
            reader.observe(line);
        }
        let tally = reader.tally();
        assert_eq!(tally.skipped, 2);
        assert_eq!(tally.passed_and_ran(), 1);
        assert_eq!(tally.to_string(), "tests: 1 passed, 0 failed, 3 skipped");
    }

    #[test]
    fn a_test_that_reports_its_skip_twice_is_one_skipped_test() {
        // A test that checks two databases asks for PostgreSQL twice, and says so twice.
        let output = [
            "running 2 tests",
            "adk-test: skipped: postgres_first_layout_upgrade (ADK_POSTGRES_URL is not set)",
            "adk-test: skipped: postgres_first_layout_upgrade (ADK_POSTGRES_URL is not set)",
            "test postgres_first_layout_upgrade ... ok",
            "test sqlite_first_layout_upgrade ... ok",
            "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; \
             finished in 0.01s",
            // Another binary's test of the same name is another test.
            "running 1 test",
            "test postgres_first_layout_upgrade ... adk-test: skipped: \
             postgres_first_layout_upgrade (ADK_POSTGRES_URL is not set)",
            "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; \
             finished in 0.01s",
        ];
        let mut reader = TallyReader::default();
        for line in output {
            reader.observe(line);
        }
        let tally = reader.tally();
        assert_eq!((tally.skipped, tally.passed_and_ran()), (2, 1));
        assert_eq!(
            TestTally::skipped_test("x ... adk-test: skipped: a::b (why (really))"),
            Some("a::b")
        );
    }

    #[test]
    fn other_lines_are_not_summaries() {
        assert_eq!(TestTally::parse_summary("running 18 tests"), None);
        assert_eq!(TestTally::parse_summary("test a ... ok"), None);
    }
}
