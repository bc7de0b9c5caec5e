//! The `cargo xtask` command line: dispatches `ci`, `tidy`, `codegen`, `deny` and `release` to the
//! xtask library, and `local-model`, `bench` and `bench --serve` to their modules.
// xtask is a developer tool whose output is meant for a terminal, so printing is its job.
#![allow(clippy::print_stdout)]

mod bench;
mod local_model;
mod serve_bench;

use std::process::ExitCode;

use anyhow::bail;
use xtask::{ci, codegen, deny, release, tidy, workspace_root};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci        run fmt --check, clippy -D warnings, doc -D warnings, the feature sets, tidy,
            codegen --check, cargo deny and the workspace tests, in that order
  test      build the workspace's tests (every feature) and run their binaries a few at a
            time, slowest first, with the doctests beside them: the ci's test step alone
  features  check every package with its defaults, with no features and with each feature alone
  tidy      check layering, `//!` doc headers and forbidden attributes and macros
  deny      check licences, banned duplicates and sources with cargo deny (installed on first use)
  bench     measure the performance workload of perf/ beside its floor (instructions with
            callgrind, cold start, memory, concurrency)
  bench --serve
            serve one weather agent with adk-rs's and ADK Python's `adk api_server` and a bare
            relay, and measure 100 and 1,000 concurrent /run_sse turns side by side
  codegen [--check]
            write the files generated from Rust types (schemas/agent-config.schema.json);
            with --check, write nothing and fail when a committed one is stale
  help      print this message
";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command named by the arguments (everything after `cargo xtask`).
fn run(args: Vec<String>) -> anyhow::Result<()> {
    let root = workspace_root();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["ci"] => ci::run(&root),
        ["test"] => ci::test(&root),
        ["features"] => ci::check_feature_sets(&root),
        ["tidy"] => tidy::run(&root),
        ["codegen"] => codegen::run(&root, codegen::Mode::Write),
        ["codegen", "--check"] => codegen::run(&root, codegen::Mode::Check),
        ["bench"] => bench::run(&root),
        ["bench", "--serve"] => serve_bench::run(&root),
        ["deny"] => deny::check(&root),
        ["local-model", rest @ ..] => local_model::run(rest),
        ["release", rest @ ..] => release::run(&root, &release::Options::parse(rest)?).map(drop),
        [] | ["help" | "-h" | "--help"] => {
            println!("{USAGE}{}{}", release::USAGE, local_model::USAGE);
            Ok(())
        }
        _ => bail!(
            "unknown arguments {args:?}\n\n{USAGE}{}{}",
            release::USAGE,
            local_model::USAGE
        ),
    }
}
