//! `adk`, the adk-rs command line: `adk run <agent>` opens an interactive terminal session with a
//! bundled agent (`quickstart`, `multi_agent`, `pipeline`, `confirmation`); `adk web` serves them
//! all over ADK's REST + SSE API with the adk-web dev UI, and `adk api_server` without the UI.
//!
//! Run it from the workspace with `cargo run -p adk-cli -- run quickstart`; `--help` lists the
//! options.

// A command-line program reports to the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod agents;
mod args;
mod model;
mod serve;
mod store;
mod terminal;

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};

/// The error and its causes on one line, without repeating a cause whose text an earlier link
/// already holds (lower layers often include their source's message in their own).
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for link in error.chain().map(ToString::to_string) {
        if !line.contains(&link) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&link);
        }
    }
    line
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run(args) => terminal::run(args).await,
        Command::Web(args) => {
            let ui = !args.no_ui;
            serve::serve(args, ui).await
        }
        Command::ApiServer(args) => serve::serve(args, false).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // An error can quote what a server sent, so it is shown as carefully as model text.
            if cli.verbose {
                eprintln!("error: {}", terminal::printable(&format!("{error:?}")));
            } else {
                eprintln!("error: {}", terminal::printable(&one_line(&error)));
                eprintln!("(run with -v for details)");
            }
            ExitCode::FAILURE
        }
    }
}
