//! Tracing for adk-rs: the span tree of a run with OpenTelemetry GenAI attributes, metrics
//! through the OpenTelemetry API, and OTLP export behind the `otel` feature.
//!
//! # What is traced
//!
//! ```text
//! invocation                                  the runner's run (trace_invocation)
//! └─ invoke_agent {agent}                     every agent's run (trace_agent)
//!    └─ call_llm                              one step of an LlmAgent
//!       ├─ generate_content {model}           the model call (ModelCall)
//!       ├─ execute_tool {tool}                a tool call (ToolCall)
//!       ├─ execute_tool (merged)              several calls of one response, run in parallel
//!       │  └─ execute_tool {tool}
//!       └─ invoke_agent {other agent}         the agent the step transferred to
//! ```
//!
//! Span names and attribute keys are in [`attributes`]; they follow ADK Python and ADK Go:
//! `gen_ai.operation.name`, `gen_ai.agent.*`, `gen_ai.conversation.id`, `gen_ai.request.model`,
//! `gen_ai.response.finish_reasons`, `gen_ai.usage.*`, `gen_ai.tool.*`, `error.type`, and ADK's
//! `gcp.vertex.agent.*` ids. Model requests and responses and tool arguments and results are
//! recorded only when [content capture](content) is on, as they may hold secrets.
//!
//! # Design
//!
//! Spans are `tracing` spans, so they cost next to nothing without a subscriber and any
//! `tracing` subscriber sees them; `tracing-opentelemetry` turns them into OpenTelemetry spans
//! (`otel.name` carries the dynamic span name). Spans are entered only while a future or stream
//! is polled ([`InstrumentStream`], `tracing::Instrument`), never held across an `.await`.
//! Metrics ([`metrics`]) go through the global OpenTelemetry meter provider and are no-ops until
//! one is installed. This crate never installs a global subscriber or provider by itself: with
//! the `otel` feature, `otel::install` does when the application calls it.
//!
//! With the `span-store` feature, [`span_store::SpanStore`] keeps the most recent finished spans in
//! memory (a bounded ring) behind a `tracing` layer, so a server can show a session's trace.

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
