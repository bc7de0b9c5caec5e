//! [`ModelCall`] and [`ToolCall`]: the span and the metrics of one model call and one tool call,
//! from start to end.
//!
//! Each ends at its last result (or, if the caller stops early, when dropped): its span closes and
//! its duration is recorded. Ending at the last result matters for the model call, whose caller
//! runs the tools the answer asks for before it polls the model's stream again.

use std::sync::OnceLock;
use std::time::Instant;

use adk_core::{Error, FunctionCall, InvocationContext, LlmRequest, LlmResponse};
use serde_json::{Map, Value};
use tracing::Span;

use crate::content::{capture_message_content, response_json};
use crate::metrics::{self, ModelCallMeasure};
use crate::spans::{execute_tool_span, generate_content_span, record_error};

/// One model call: the `generate_content {model}` span (a child of the current span) and the
/// model-call metrics.
///
/// ```
/// # fn call(ctx: &adk_core::InvocationContext, request: &adk_core::LlmRequest, response: &adk_core::LlmResponse) {
/// let mut call = adk_telemetry::ModelCall::start(ctx, request);
/// // Poll the model's stream inside `call.span()`, then for each response:
/// call.record_response(response);
/// # }
/// ```
#[derive(Debug)]
pub struct ModelCall {
    span: Span,
    started: Instant,
    agent: String,
    model: String,
    ended: bool,
    error_type: Option<&'static str>,
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    cached_tokens: Option<u32>,
}

impl ModelCall {
    /// Opens the call's span as a child of the current span, with the request's model and
    /// sampling settings (and the request itself when content capture is on).
    pub fn start(ctx: &InvocationContext, request: &LlmRequest) -> Self {
        Self {
            span: generate_content_span(ctx, request),
            started: Instant::now(),
            agent: ctx.agent_name().to_owned(),
            model: request.model.clone(),
            ended: false,
            error_type: None,
            input_tokens: None,
            output_tokens: None,
            cached_tokens: None,
        }
    }

    /// The call's span, to enter while polling the model; a disabled span once the call ended.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Records a response: finish reason, token usage and model version (and the response when
    /// content capture is on). A response that is not a partial chunk ends the call.
    pub fn record_response(&mut self, response: &LlmResponse) {
        if self.ended {
            return;
        }
        if let Some(usage) = &response.usage_metadata {
            self.input_tokens = usage.prompt_token_count.or(self.input_tokens);
            self.output_tokens = usage.candidates_token_count.or(self.output_tokens);
            self.cached_tokens = usage.cached_content_token_count.or(self.cached_tokens);
        }
        if !self.span.is_disabled() {
            let span = &self.span;
            if let Some(reason) = &response.finish_reason {
                span.record(
                    "gen_ai.response.finish_reasons",
                    reason.as_str().to_ascii_lowercase(),
                );
            }
            if let Some(tokens) = self.input_tokens {
                span.record("gen_ai.usage.input_tokens", i64::from(tokens));
            }
            if let Some(tokens) = self.output_tokens {
                span.record("gen_ai.usage.output_tokens", i64::from(tokens));
            }
            if let Some(tokens) = self.cached_tokens {
                span.record("gen_ai.usage.cache_read.input_tokens", i64::from(tokens));
            }
            if let Some(version) = &response.model_version {
                span.record("gen_ai.response.model", version.as_str());
            }
            if capture_message_content() {
                span.record("gcp.vertex.agent.llm_response", response_json(response));
            }
        }
        if !response.is_partial() {
            self.end();
        }
    }

    /// Records the failure that ended the call.
    pub fn record_error(&mut self, error: &Error) {
        if self.ended {
            return;
        }
        record_error(&self.span, error);
        self.error_type = Some(error.kind().as_str());
        self.end();
    }

    fn end(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        metrics::record_model_call(&ModelCallMeasure {
            agent: &self.agent,
            model: &self.model,
            elapsed: self.started.elapsed(),
            error_type: self.error_type,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        });
        // Dropping the handle closes the span now, not when the caller's stream is dropped.
        self.span = Span::none();
    }
}

impl Drop for ModelCall {
    fn drop(&mut self) {
        self.end();
    }
}

/// One tool call: the `execute_tool {tool}` span (a child of the current span) and the tool's
/// duration metric. Shared by reference while the call runs, so that the code that sees a failure
/// can record it.
#[derive(Debug)]
pub struct ToolCall {
    span: Span,
    started: Instant,
    agent: String,
    tool: String,
    error_type: OnceLock<&'static str>,
}

impl ToolCall {
    /// Opens the call's span as a child of the current span, with the tool's name and description
    /// and the call's id (and its arguments when content capture is on).
    pub fn start(ctx: &InvocationContext, description: &str, call: &FunctionCall) -> Self {
        let span = execute_tool_span(
            &call.name,
            description,
            call.id.as_ref().map(|id| id.as_str()),
        );
        if !span.is_disabled() && capture_message_content() {
            span.record(
                "gcp.vertex.agent.tool_call_args",
                Value::Object(call.args.clone()).to_string(),
            );
        }
        Self {
            span,
            started: Instant::now(),
            agent: ctx.agent_name().to_owned(),
            tool: call.name.clone(),
            error_type: OnceLock::new(),
        }
    }

    /// The call's span, to run the call in.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Records that the tool failed, even if a callback then recovered with a result.
    pub fn record_error(&self, error: &Error) {
        record_error(&self.span, error);
        let _ = self.error_type.set(error.kind().as_str());
    }

    /// Ends the call with the result the model will read (none for a long-running tool that has
    /// not answered yet), recorded when content capture is on, and records its duration.
    pub fn finish(self, result: Option<&Map<String, Value>>) {
        if let Some(result) = result
            && !self.span.is_disabled()
            && capture_message_content()
        {
            self.span.record(
                "gcp.vertex.agent.tool_response",
                serde_json::to_string(result).unwrap_or_default(),
            );
        }
        // Recorded by `drop`, which also covers a call dropped before it finished.
    }
}

impl Drop for ToolCall {
    fn drop(&mut self) {
        metrics::record_tool_duration(
            &self.agent,
            &self.tool,
            self.started.elapsed(),
            self.error_type.get().copied(),
        );
    }
}
