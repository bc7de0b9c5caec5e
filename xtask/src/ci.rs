//! The `cargo xtask ci` pipeline: fmt, clippy, doc, every feature set, tidy, codegen, deny and
//! test, run in order, stopping at the first failure.
// The pipeline reports its progress on stdout, interleaved with the output of the cargo commands.
#![allow(clippy::print_stdout)]

use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::feature_sets::workspace_feature_sets;
use crate::prepare::Preparation;
use crate::test_run::{self, TestTally};
use crate::{deny, tidy};

/// What one CI step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Runs `cargo` with these arguments in the workspace root.
    Cargo(&'static [&'static str]),
    /// Builds the tests of `cargo` with these arguments and runs them with [`test_run::run`]:
    /// a few binaries at a time, slowest first, adding up their summaries.
    Tests(&'static [&'static str]),
    /// Runs `cargo` with these arguments and [`DOC_FLAGS`] added to `RUSTDOCFLAGS`.
    CargoDoc(&'static [&'static str]),
    /// Runs `cargo check` once per feature set of every package
    /// ([`workspace_feature_sets`]).
    FeatureSets,
    /// Runs [`tidy::run`] in this process.
    Tidy,
    /// Runs `cargo deny check licenses bans sources` ([`deny::check_with`]) with the pinned
    /// `cargo-deny`, which [`Preparation`] installs in the background from the first step.
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
        // The libraries' documentation as docs.rs builds it (every feature), with broken
        // intra-doc links and every other rustdoc warning as errors; the doctests run in the test
        // step. The examples are documented too: they bring in the dev-dependencies, whose
        // features (tokio's `test-util` among them) then resolve as in clippy's `--all-targets`,
        // so every dependency clippy checked is reused instead of checked again.
        action: Action::CargoDoc(&[
            "doc",
            "--workspace",
            "--all-features",
            "--no-deps",
            "--lib",
            "--examples",
        ]),
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
        action: Action::Tests(TEST_ARGS),
    },
];

/// The test step's cargo arguments: every feature, so that the MCP, PostgreSQL and OTLP tests
/// are built and run too.
pub const TEST_ARGS: &[&str] = &["test", "--workspace", "--all-features"];

/// What the doc step adds to `RUSTDOCFLAGS`: every rustdoc warning is an error.
pub const DOC_FLAGS: &str = "-D warnings";

impl Step {
    /// How the step reads as a command line, for progress and error messages.
    pub fn command_line(&self) -> String {
        match self.action {
            Action::Cargo(args) => format!("cargo {}", args.join(" ")),
            Action::Tests(args) => format!(
                "cargo {} --no-run, then its binaries in parallel, slowest first",
                args.join(" ")
            ),
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

/// Runs every step of [`STEPS`] in the workspace at `root`, stopping at the first that fails.
///
/// The slow installs of later steps (`cargo-deny`, the local model) start at once on a background
/// thread ([`Preparation`]) and are stopped if the run stops early.
///
/// The cargo commands inherit this process's environment, so `CARGO_TARGET_DIR` (and any other
/// cargo setting) passes through to them unchanged. The last line printed on success is the
/// total of the test summaries, in the plain `N passed, N failed` form.
pub fn run(root: &Path) -> anyhow::Result<()> {
    print_target_dir();
    let preparation = Preparation::start();
    let mut tally = None;
    for (index, step) in STEPS.iter().enumerate() {
        announce(index, step);
        let started = Instant::now();
        let step_tally = run_step(root, step, &preparation).with_context(|| {
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
fn run_step(
    root: &Path,
    step: &Step,
    preparation: &Preparation,
) -> anyhow::Result<Option<TestTally>> {
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
        Action::Tests(args) => test_run::run(root, args).map(Some),
        Action::FeatureSets => check_feature_sets(root).map(|()| None),
        Action::Tidy => tidy::run(root).map(|()| None),
        Action::Deny => deny::check_with(root, &preparation.cargo_deny()?).map(|()| None),
    }
}

/// Runs the test step alone (also `cargo xtask test`) and prints its tally.
pub fn test(root: &Path) -> anyhow::Result<()> {
    let tally = test_run::run(root, TEST_ARGS)?;
    println!("{tally}");
    Ok(())
}

/// Checks every feature set of the workspace, one `cargo check` each, stopping at the first that
/// fails to build, and fails at the end if any set compiled with a warning (also `cargo xtask
/// features`).
///
/// Clippy sees the workspace with every feature on; code only some sets compile (dead code under
/// one feature, an import another feature needs) warns only here. The warnings are read from
/// cargo's JSON messages rather than denied with `RUSTFLAGS`, which would change the flags of
/// every dependency and so rebuild them all.
pub fn check_feature_sets(root: &Path) -> anyhow::Result<()> {
    let sets = workspace_feature_sets(root)?;
    let mut warned = Vec::new();
    for (index, set) in sets.iter().enumerate() {
        println!("--> feature set {}/{}: {set}", index + 1, sets.len());
        flush_stdout();
        let mut args = set.cargo_args();
        args.push("--message-format=json".to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = cargo(root, &args)
            .stderr(Stdio::inherit())
            .output()
            .context("could not start cargo")?;
        let warnings = print_diagnostics(&String::from_utf8_lossy(&output.stdout));
        check_status(output.status).with_context(|| format!("feature set failed: {set}"))?;
        if warnings > 0 {
            warned.push(format!("{set} ({warnings} warning(s))"));
        }
    }
    if !warned.is_empty() {
        bail!(
            "feature sets compiled with warnings:\n  {}",
            warned.join("\n  ")
        );
    }
    println!("--> all {} feature sets check", sets.len());
    Ok(())
}

/// Prints the compiler's diagnostics among cargo's JSON `messages`, as cargo would have, and
/// returns how many of them are warnings about code (the "N warnings emitted" summaries, which
/// point at no code, are not counted).
fn print_diagnostics(messages: &str) -> usize {
    let mut warnings = 0;
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message" {
            continue;
        }
        let diagnostic = &message["message"];
        if let Some(rendered) = diagnostic["rendered"].as_str() {
            print!("{rendered}");
        }
        let points_at_code = diagnostic["spans"]
            .as_array()
            .is_some_and(|spans| !spans.is_empty());
        if diagnostic["level"] == "warning" && points_at_code {
            warnings += 1;
        }
    }
    flush_stdout();
    warnings
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
    fn warnings_about_code_are_counted_and_their_summaries_are_not() {
        let messages = [
            r#"{"reason":"compiler-artifact","package_id":"a"}"#,
            r#"{"reason":"compiler-message","message":{"level":"warning","rendered":"warning: unused\n","spans":[{"file_name":"src/lib.rs"}]}}"#,
            r#"{"reason":"compiler-message","message":{"level":"warning","rendered":"warning: 1 warning emitted\n","spans":[]}}"#,
            r#"{"reason":"compiler-message","message":{"level":"note","rendered":"note\n","spans":[{"file_name":"src/lib.rs"}]}}"#,
            "not json",
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(print_diagnostics(&messages), 1);
        assert_eq!(print_diagnostics(""), 0);
    }

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
                "RUSTDOCFLAGS=\"-D warnings\" cargo doc --workspace --all-features --no-deps --lib --examples",
                "cargo check -p <each package> (defaults, no features, each feature alone)",
                "cargo xtask tidy",
                "cargo xtask codegen --check",
                "cargo deny check licenses bans sources",
                "cargo test --workspace --all-features --no-run, then its binaries in parallel, \
                 slowest first",
            ]
        );
    }

    #[test]
    fn tidy_and_deny_run_in_process() {
        assert_eq!(STEPS[4].action, Action::Tidy);
        assert_eq!(STEPS[6].action, Action::Deny);
    }
}
