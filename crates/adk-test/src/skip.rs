//! Reporting a test that could not run, so that the summary counts it as skipped instead of passed.
//!
//! libtest has no "skipped" outcome: a test that returns early because what it needs is missing
//! (a PostgreSQL server without `ADK_POSTGRES_URL`, say) reads as passed. Such a test calls
//! [`report_skipped`] before returning; the line it prints reaches the terminal even while the
//! harness captures output, and `cargo xtask ci` counts those lines as skipped and subtracts them
//! from the passed count.

use std::io::Write as _;

/// The text that starts every skip line; `cargo xtask ci` looks for it in the test output. Keep
/// it in step with `SKIPPED_MARKER` in `xtask/src/test_run/tally.rs`.
pub const SKIPPED_MARKER: &str = "adk-test: skipped:";

/// The line [`report_skipped`] prints for `test` skipped for `reason`.
///
/// ```
/// assert_eq!(
///     adk_test::skipped_line("a::b", "no database"),
///     "adk-test: skipped: a::b (no database)"
/// );
/// ```
pub fn skipped_line(test: &str, reason: &str) -> String {
    format!("{SKIPPED_MARKER} {test} ({reason})")
}

/// Says on stdout that the running test did not run for `reason`; call it right before the
/// test returns early. The test is named after the current thread, which libtest names after
/// the test.
pub fn report_skipped(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>");
    // Straight to the process's stdout, not through `println!`: the harness captures that for
    // passing tests, and the summary must see this line.
    let mut stdout = std::io::stdout().lock();
    // A line that cannot be written only loses the count; the test itself has nothing to report.
    let _ = writeln!(stdout, "\n{}", skipped_line(test, reason));
    let _ = stdout.flush();
}
