//! `adk`, the adk-rs command line: the bundled example agents (`quickstart`, `multi_agent`,
//! `pipeline`, `confirmation`, `oauth_mail`, `orchestrator`, `workflow`) on the launcher of `adk-launcher`: `adk run <agent>` opens an
//! interactive terminal session, `adk web` serves them all with the adk-web dev UI, `adk
//! api_server` without the UI, `adk create NAME` starts a project of your own.
//!
//! Run it from the workspace with `cargo run -p adk-cli -- run quickstart`; `--help` lists the
//! options.

mod agents;

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    agents::bundled(adk_launcher::Launcher::new()).run().await
}
