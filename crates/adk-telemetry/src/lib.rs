#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod attributes;
mod calls;
pub mod content;
pub mod metrics;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(feature = "span-store")]
pub mod span_store;
mod spans;
mod streams;

pub use calls::{ModelCall, ToolCall};
pub use spans::{
    call_llm_span, invocation_span, invoke_agent_span, merged_tools_span, record_error,
    record_event_id, record_merged_tools,
};
pub use streams::{InSpan, InstrumentStream, trace_agent, trace_invocation};
