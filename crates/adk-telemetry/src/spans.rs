//! The spans of a run, opened as children of the current span, and what is recorded on them
//! afterwards.
//!
//! Span names are static in `tracing`, so each span also sets `otel.name`, which
//! `tracing-opentelemetry` exports as the name: `invoke_agent {agent}`, `generate_content
//! {model}`, `execute_tool {tool}`. Every attribute recorded later is declared empty at creation, as
//! `tracing` requires. Integers are recorded as `i64`, which `tracing-opentelemetry` exports as
//! integers (it would export a `u32` as text). With no subscriber, or one that filters the spans out, opening a span costs
//! one check and evaluates none of its fields.

use adk_core::{Error, Event, EventId, InvocationContext, LlmRequest};
use tracing::Span;
use tracing::field::Empty;

use crate::attributes::{
    MERGED_TOOLS_NAME, OPERATION_EXECUTE_TOOL, OPERATION_GENERATE_CONTENT, OPERATION_INVOKE_AGENT,
};
use crate::content::capture_message_content;

/// The span of one run of the runner, the root of the tree: `invocation`, with the invocation id
/// and the session id. The runner instruments the run's stream with it (see
/// [`trace_invocation`](crate::trace_invocation)).
pub fn invocation_span(ctx: &InvocationContext) -> Span {
    tracing::info_span!(
        "invocation",
        "gcp.vertex.agent.invocation_id" = ctx.invocation_id().as_str(),
        "gen_ai.conversation.id" = ctx.session_key().session_id.as_str(),
        "user.id" = ctx.session_key().user_id.as_str(),
        "error.type" = Empty,
        "otel.status_description" = Empty,
    )
}

/// The span of one agent's run, `invoke_agent {agent}`, for the agent `ctx` runs.
pub fn invoke_agent_span(ctx: &InvocationContext) -> Span {
    let agent = ctx.agent();
    tracing::info_span!(
        "invoke_agent",
        "otel.name" = format!("invoke_agent {}", agent.name()),
        "gen_ai.operation.name" = OPERATION_INVOKE_AGENT,
        "gen_ai.agent.name" = agent.name(),
        "gen_ai.agent.description" = agent.description(),
        "gen_ai.conversation.id" = ctx.session_key().session_id.as_str(),
        "gcp.vertex.agent.invocation_id" = ctx.invocation_id().as_str(),
        "error.type" = Empty,
        "otel.status_description" = Empty,
    )
}

/// The span of one step of an `LlmAgent`, `call_llm`: the model call and what its answer leads
/// to (tool calls, a transfer). The model-response event's id is recorded with
/// [`record_event_id`] once known.
pub fn call_llm_span(ctx: &InvocationContext, request: &LlmRequest) -> Span {
    tracing::info_span!(
        "call_llm",
        "gen_ai.request.model" = request.model.as_str(),
        "gcp.vertex.agent.invocation_id" = ctx.invocation_id().as_str(),
        "gcp.vertex.agent.session_id" = ctx.session_key().session_id.as_str(),
        "gcp.vertex.agent.event_id" = Empty,
        "error.type" = Empty,
        "otel.status_description" = Empty,
    )
}

/// The span of the model call itself, `generate_content {model}`; opened by
/// [`ModelCall::start`](crate::ModelCall::start), which records the answer on it.
pub(crate) fn generate_content_span(ctx: &InvocationContext, request: &LlmRequest) -> Span {
    let span = tracing::info_span!(
        "generate_content",
        "otel.name" = format!("generate_content {}", request.model),
        "gen_ai.operation.name" = OPERATION_GENERATE_CONTENT,
        "gen_ai.request.model" = request.model.as_str(),
        "gen_ai.request.top_p" = request.config.top_p.map(f64::from),
        "gen_ai.request.max_tokens" = request.config.max_output_tokens.map(i64::from),
        "gen_ai.response.model" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gcp.vertex.agent.invocation_id" = ctx.invocation_id().as_str(),
        "gcp.vertex.agent.llm_request" = Empty,
        "gcp.vertex.agent.llm_response" = Empty,
        "error.type" = Empty,
        "otel.status_description" = Empty,
    );
    if !span.is_disabled() && capture_message_content() {
        span.record(
            "gcp.vertex.agent.llm_request",
            crate::content::request_json(request),
        );
    }
    span
}

/// The span of one tool call, `execute_tool {tool}`; opened by
/// [`ToolCall::start`](crate::ToolCall::start).
pub(crate) fn execute_tool_span(name: &str, description: &str, call_id: Option<&str>) -> Span {
    tracing::info_span!(
        "execute_tool",
        "otel.name" = format!("execute_tool {name}"),
        "gen_ai.operation.name" = OPERATION_EXECUTE_TOOL,
        "gen_ai.tool.name" = name,
        "gen_ai.tool.description" = description,
        "gen_ai.tool.call.id" = call_id,
        "gcp.vertex.agent.tool_call_args" = Empty,
        "gcp.vertex.agent.tool_response" = Empty,
        "error.type" = Empty,
        "otel.status_description" = Empty,
    )
}

/// The span around the calls of one model response when it has several, `execute_tool (merged)`;
/// each call's `execute_tool` span is its child. [`record_merged_tools`] records the merged
/// response event on it.
pub fn merged_tools_span() -> Span {
    tracing::info_span!(
        "execute_tool (merged)",
        "gen_ai.operation.name" = OPERATION_EXECUTE_TOOL,
        "gen_ai.tool.name" = MERGED_TOOLS_NAME,
        "gen_ai.tool.description" = MERGED_TOOLS_NAME,
        "gen_ai.tool.call.id" = Empty,
        "gcp.vertex.agent.event_id" = Empty,
        "gcp.vertex.agent.tool_response" = Empty,
    )
}

/// Records the id of the event a span's operation produced (`gcp.vertex.agent.event_id`).
pub fn record_event_id(span: &Span, id: &EventId) {
    span.record("gcp.vertex.agent.event_id", id.as_str());
}

/// Records the merged response event of parallel calls on their `execute_tool (merged)` span:
/// its id, and with content capture its content.
pub fn record_merged_tools(span: &Span, event: &Event) {
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.tool.call.id", event.id.as_str());
    record_event_id(span, &event.id);
    if capture_message_content()
        && let Ok(json) = serde_json::to_string(&event.response.content)
    {
        span.record("gcp.vertex.agent.tool_response", json);
    }
}

/// Marks a span as failed: `error.type` is the error's kind, and the span's status is an error
/// with the message.
pub fn record_error(span: &Span, error: &Error) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", error.kind().as_str());
    span.record("otel.status_description", error.message());
}
