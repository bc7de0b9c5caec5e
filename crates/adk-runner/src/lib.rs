#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_to_run;
mod cancel_on_drop;
mod client_state;
mod compaction;
mod credentials;
mod cut_off;
mod persist;
pub mod plugins;
mod resume;
mod rewind;
mod run_stream;
mod runner;

pub use adk_core::{RunConfig, StreamingMode};
pub use adk_flow::{IntoPlugin, Plugin};
pub use compaction::{
    CompactionConfig, DEFAULT_SUMMARY_PROMPT, IntoSummarizer, LlmSummarizer, Summarizer,
};
pub use cut_off::CANCELLED_ERROR_CODE;
pub use run_stream::RunStream;
pub use runner::{RunRequest, Runner, RunnerBuilder};

// Runners are shared between tasks: a compile-time check that they stay `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Runner>();
    const fn assert_send<T: Send>() {}
    assert_send::<RunStream>();
};
