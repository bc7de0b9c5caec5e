#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_to_run;
mod cancel_on_drop;
mod client_state;
mod compaction;
mod credentials;
mod persist;
pub mod plugins;
mod resume;
mod rewind;
mod runner;

pub use adk_core::{RunConfig, StreamingMode};
pub use adk_flow::{Plugin, Plugins};
pub use compaction::{CompactionConfig, DEFAULT_SUMMARY_PROMPT, LlmSummarizer, Summarizer};
pub use runner::{RunRequest, RunStream, Runner, RunnerBuilder};

// Runners are shared between tasks: a compile-time check that they stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Runner>();
};
