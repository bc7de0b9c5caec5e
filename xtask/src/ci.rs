//! The `cargo xtask ci` pipeline: fmt, clippy, doc, every feature set, tidy, codegen, deny and
//! test, run in order, stopping at the first failure.
// The pipeline reports its progress on stdout, interleaved with the output of the cargo commands.
#![allow(clippy::print_stdout)]

use std::ffi::OsString;
use std::fmt;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::feature_sets::workspace_feature_sets;
use crate::{deny, tidy};

/// What one CI step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Runs `cargo` with these arguments in the workspace root.
    Cargo(&'static [&'static str]),
    /// Runs `cargo` with these arguments, echoing its output and adding up its test summaries.
    CargoTest(&'static [&'static str]),
    /// Runs `cargo` with these arguments and [`DOC_FLAGS`] added to `RUSTDOCFLAGS`.
    CargoDoc(&'static [&'static str]),
    /// Runs `cargo check` once per feature set of every package
    /// ([`workspace_feature_sets`]).
    FeatureSets,
    /// Runs [`tidy::run`] in this process.
    Tidy,
    /// Runs [`deny::check`]: `cargo deny check licenses bans sources`, installing the pinned
    /// `cargo-deny` first if needed.
    Deny,
}

/// One named step of the CI pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The step's short name, printed before it runs and named when it fails.
    pub name: &'static str,
    /// What the step does.
    pub action: Action,
}

/// The CI pipeline, in the order its steps run.
pub const STEPS: &[Step] = &[
    Step {
        name: "fmt",
        action: Action::Cargo(&["fmt", "--all", "--", "--check"]),
    },
    Step {
        name: "clippy",
        action: Action::Cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]),
    },
    Step {
        name: "doc",
        // The documentation as docs.rs builds it (every feature), with broken intra-doc links and
        // every other rustdoc warning as errors; the doctests run in the test step.
        action: Action::CargoDoc(&["doc", "--workspace", "--all-features", "--no-deps"]),
    },
    Step {
        name: "features",
        action: Action::FeatureSets,
    },
    Step {
        name: "tidy",
        action: Action::Tidy,
    },
    Step {
        name: "codegen",
        action: Action::Cargo(&["xtask", "codegen", "--check"]),
    },
    Step {
        name: "deny",
        action: Action::Deny,
    },
    Step {
        name: "test",
        // Every feature, so that the MCP, PostgreSQL and OTLP tests are built and run too.
        action: Action::CargoTest(&["test", "--workspace", "--all-features"]),
    },
];

/// What the doc step adds to `RUSTDOCFLAGS`: every rustdoc warning is an error.
pub const DOC_FLAGS: &str = "-D warnings";

impl Step {
    /// How the step reads as a command line, for progress and error messages.
    pub fn command_line(&self) -> String {
        match self.action {
            Action::Cargo(args) | Action::CargoTest(args) => format!("cargo {}", args.join(" ")),
            Action::CargoDoc(args) => {
                format!("RUSTDOCFLAGS=\"{DOC_FLAGS}\" cargo {}", args.join(" "))
            }
            Action::FeatureSets => {
                "cargo check -p <each package> (defaults, no features, each feature alone)"
                    .to_owned()
            }
            Action::Tidy => "cargo xtask tidy".to_owned(),
            Action::Deny => format!("cargo deny check {}", deny::CHECKS.join(" ")),
        }
    }
}

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

/// Runs every step of [`STEPS`] in the workspace at `root`, stopping at the first that fails.
///
/// The cargo commands inherit this process's environment, so `CARGO_TARGET_DIR` (and any other
/// cargo setting) passes through to them unchanged. The last line printed on success is the
/// total of the test summaries, in the plain `N passed, N failed` form.
pub fn run(root: &Path) -> anyhow::Result<()> {
    print_target_dir();
    let mut tally = None;
    for (index, step) in STEPS.iter().enumerate() {
        announce(index, step);
        let started = Instant::now();
        let step_tally = run_step(root, step).with_context(|| {
            format!(
                "ci step `{}` failed ({}); stopping here",
                step.name,
                step.command_line()
            )
        })?;
        tally = tally.or(step_tally);
        println!(
            "==> ci step `{}` passed in {:.1}s",
            step.name,
            started.elapsed().as_secs_f64()
        );
    }
    println!("\nci: all {} steps passed", STEPS.len());
    if let Some(tally) = tally {
        println!("{tally}");
    }
    Ok(())
}

/// Prints which target directory the cargo commands will use.
fn print_target_dir() {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => println!("ci: CARGO_TARGET_DIR={}", dir.to_string_lossy()),
        None => println!("ci: CARGO_TARGET_DIR is not set; cargo uses the workspace's target/"),
    }
}

/// Prints the step's name and command before it runs.
fn announce(index: usize, step: &Step) {
    println!(
        "\n==> ci step {}/{}: {} ({})",
        index + 1,
        STEPS.len(),
        step.name,
        step.command_line()
    );
    // The cargo child writes to the same terminal: make the heading come first.
    flush_stdout();
}

/// Runs one step to completion; a test step returns its tally.
fn run_step(root: &Path, step: &Step) -> anyhow::Result<Option<TestTally>> {
    match step.action {
        Action::Cargo(args) => {
            let status = cargo(root, args)
                .status()
                .context("could not start cargo")?;
            check_status(status)?;
            Ok(None)
        }
        Action::CargoDoc(args) => {
            let status = cargo(root, args)
                .env("RUSTDOCFLAGS", rustdoc_flags())
                .status()
                .context("could not start cargo")?;
            check_status(status)?;
            Ok(None)
        }
        Action::CargoTest(args) => run_cargo_test(root, args).map(Some),
        Action::FeatureSets => check_feature_sets(root).map(|()| None),
        Action::Tidy => tidy::run(root).map(|()| None),
        Action::Deny => deny::check(root).map(|()| None),
    }
}

/// Checks every feature set of the workspace, one `cargo check` each, stopping at the first that
/// fails (also `cargo xtask features`).
pub fn check_feature_sets(root: &Path) -> anyhow::Result<()> {
    let sets = workspace_feature_sets(root)?;
    for (index, set) in sets.iter().enumerate() {
        println!("--> feature set {}/{}: {set}", index + 1, sets.len());
        flush_stdout();
        let args = set.cargo_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let status = cargo(root, &args)
            .status()
            .context("could not start cargo")?;
        check_status(status).with_context(|| format!("feature set failed: {set}"))?;
    }
    println!("--> all {} feature sets check", sets.len());
    Ok(())
}

/// Runs a cargo test command, echoing its stdout line by line and adding up its summaries.
fn run_cargo_test(root: &Path, args: &[&str]) -> anyhow::Result<TestTally> {
    let mut child = cargo(root, args)
        .stdout(Stdio::piped())
        .spawn()
        .context("could not start cargo")?;
    let stdout = child
        .stdout
        .take()
        .context("cargo's stdout was not piped")?;
    let mut reader = TallyReader::default();
    for line in BufReader::new(stdout).lines() {
        let line = line.context("could not read cargo's output")?;
        println!("{line}");
        flush_stdout();
        reader.observe(&line);
    }
    let tally = reader.tally();
    let status = child.wait().context("could not wait for cargo")?;
    if !status.success() {
        println!("{tally}");
    }
    check_status(status)?;
    Ok(tally)
}

/// `RUSTDOCFLAGS` for the doc step: the caller's, if any, then [`DOC_FLAGS`].
fn rustdoc_flags() -> OsString {
    let mut flags = std::env::var_os("RUSTDOCFLAGS").unwrap_or_default();
    if !flags.is_empty() {
        flags.push(" ");
    }
    flags.push(DOC_FLAGS);
    flags
}

/// A `cargo` command with `args`, run in `root` with this process's environment.
fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(crate::tools::cargo());
    command.args(args).current_dir(root);
    command
}

/// Fails unless the command exited successfully.
fn check_status(status: ExitStatus) -> anyhow::Result<()> {
    if !status.success() {
        bail!("cargo exited with {status}");
    }
    Ok(())
}

/// Flushes stdout so that our lines and the child's output appear in order.
fn flush_stdout() {
    // A failed flush only risks out-of-order output; there is nothing better to do with it.
    let _ = std::io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_fmt_clippy_doc_features_tidy_codegen_deny_then_test() {
        let names: Vec<_> = STEPS.iter().map(|step| step.name).collect();
        assert_eq!(
            names,
            [
                "fmt", "clippy", "doc", "features", "tidy", "codegen", "deny", "test"
            ]
        );
    }

    #[test]
    fn steps_spell_out_the_expected_commands() {
        let commands: Vec<_> = STEPS.iter().map(Step::command_line).collect();
        assert_eq!(
            commands,
            [
                "cargo fmt --all -- --check",
                "cargo clippy --workspace --all-targets --all-features -- -D warnings",
                "RUSTDOCFLAGS=\"-D warnings\" cargo doc --workspace --all-features --no-deps",
                "cargo check -p <each package> (defaults, no features, each feature alone)",
                "cargo xtask tidy",
                "cargo xtask codegen --check",
                "cargo deny check licenses bans sources",
                "cargo test --workspace --all-features",
            ]
        );
    }

    #[test]
    fn tidy_and_deny_run_in_process() {
        assert_eq!(STEPS[4].action, Action::Tidy);
        assert_eq!(STEPS[6].action, Action::Deny);
    }

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
