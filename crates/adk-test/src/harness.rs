//! A libtest-compatible front for a test target with `harness = false` that holds one check: it
//! honours the test-name filters, `--exact`, `--skip`, `--ignored` and `--list` as cargo passes
//! them, and prints libtest's lines (`running 1 test`, `test name ... ok`, `test result: ...`), so
//! that `cargo test some_filter` and tools adding up summaries treat it like any other test.

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::time::Instant;

/// What libtest's command line asks of a run: which tests to run, or to list them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestArgs {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    list: bool,
    ignored_only: bool,
}

/// libtest options that take a value, which must not be read as filters.
const OPTIONS_WITH_VALUE: &[&str] = &[
    "--skip",
    "--test-threads",
    "--color",
    "--format",
    "--logfile",
    "--shuffle-seed",
    "-Z",
];

impl TestArgs {
    /// Reads libtest's arguments (without the program name).
    ///
    /// ```
    /// use adk_test::TestArgs;
    ///
    /// let args = TestArgs::parse(["crash", "--test-threads", "2", "--skip", "slow"].map(String::from));
    /// assert!(args.selects("crash_safety"));
    /// assert!(!args.selects("crash_safety_slow"));
    /// assert!(!args.selects("other"));
    /// ```
    pub fn parse(args: impl IntoIterator<Item = String>) -> Self {
        let mut parsed = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--exact" => parsed.exact = true,
                "--list" => parsed.list = true,
                "--ignored" => parsed.ignored_only = true,
                "--skip" => parsed.skips.extend(args.next()),
                option if OPTIONS_WITH_VALUE.contains(&option) => {
                    args.next();
                }
                option if option.starts_with('-') => {}
                filter => parsed.filters.push(filter.to_owned()),
            }
        }
        parsed
    }

    /// Whether a test named `name` (never ignored) runs under these arguments.
    pub fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        !self.ignored_only
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }

    /// Whether only a listing is asked for.
    pub fn is_list(&self) -> bool {
        self.list
    }
}

/// Runs the one test `name` of this target as libtest would under `args`: lists it, filters it
/// out, or runs `body` (a panic fails it) and prints the summary line. Returns the exit code.
pub fn run_single_test(args: &TestArgs, name: &str, body: impl FnOnce()) -> ExitCode {
    let mut out = std::io::stdout();
    if args.is_list() {
        let _ = writeln!(out, "{name}: test");
        return ExitCode::SUCCESS;
    }
    if !args.selects(name) {
        let _ = writeln!(out, "\nrunning 0 tests\n");
        let _ = writeln!(
            out,
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out; \
             finished in 0.00s\n"
        );
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(out, "\nrunning 1 test");
    let _ = out.flush();
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(body));
    let seconds = started.elapsed().as_secs_f64();
    let (verdict, passed, failed, code) = match outcome {
        Ok(()) => ("ok", 1, 0, ExitCode::SUCCESS),
        Err(_) => ("FAILED", 0, 1, ExitCode::from(101)),
    };
    let _ = writeln!(out, "test {name} ... {verdict}\n");
    if failed > 0 {
        let _ = writeln!(out, "failures:\n    {name}\n");
    }
    let _ = writeln!(
        out,
        "test result: {verdict}. {passed} passed; {failed} failed; 0 ignored; 0 measured; \
         0 filtered out; finished in {seconds:.2}s\n"
    );
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> TestArgs {
        TestArgs::parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn no_filter_selects_the_test() {
        assert!(parse(&[]).selects("crash_safety"));
        assert!(parse(&["--nocapture", "--test-threads", "1"]).selects("crash_safety"));
    }

    #[test]
    fn filters_select_by_substring_or_exactly() {
        assert!(parse(&["crash"]).selects("crash_safety"));
        assert!(!parse(&["conformance"]).selects("crash_safety"));
        assert!(parse(&["conformance", "safety"]).selects("crash_safety"));
        assert!(!parse(&["crash", "--exact"]).selects("crash_safety"));
        assert!(parse(&["--exact", "crash_safety"]).selects("crash_safety"));
    }

    #[test]
    fn skips_and_ignored_only_runs_leave_it_out() {
        assert!(!parse(&["--skip", "crash"]).selects("crash_safety"));
        assert!(parse(&["--skip", "other"]).selects("crash_safety"));
        assert!(!parse(&["--ignored"]).selects("crash_safety"));
    }

    #[test]
    fn option_values_are_not_filters() {
        assert!(parse(&["--color", "never", "--format", "pretty"]).selects("crash_safety"));
        assert!(parse(&["--list"]).is_list());
    }
}
