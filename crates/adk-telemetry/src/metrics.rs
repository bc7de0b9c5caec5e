//! Metrics through the OpenTelemetry metrics API: agent-invocation, tool and model-call durations,
//! token counts and model-call counts.
//!
//! Instruments come from the global meter provider at each recording, so they are no-ops until the
//! user installs a meter provider (the `otel` feature's exporter does), and a provider installed
//! late is used from then on. Names follow ADK Python and the GenAI semantic conventions.

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Meter;

use crate::attributes::{
    ERROR_TYPE, GEN_AI_AGENT_NAME, GEN_AI_OPERATION_NAME, GEN_AI_REQUEST_MODEL, GEN_AI_TOKEN_TYPE,
    GEN_AI_TOOL_NAME, OPERATION_GENERATE_CONTENT,
};

/// The instrumentation scope of every adk-rs instrument, as ADK names its meter and tracer.
pub const METER_NAME: &str = "gcp.vertex.agent";

/// Histogram of agent invocations (`invoke_agent` spans), in seconds.
pub const INVOKE_AGENT_DURATION: &str = "gen_ai.invoke_agent.duration";
/// Histogram of tool calls (`execute_tool` spans), in seconds.
pub const EXECUTE_TOOL_DURATION: &str = "gen_ai.execute_tool.duration";
/// Histogram of model calls (`generate_content` spans), in seconds.
pub const CLIENT_OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// Histogram of the tokens of each model call, split by `gen_ai.token.type` (`input`, `output`).
pub const CLIENT_TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// Counter of model calls made, by agent and model.
pub const MODEL_CALLS: &str = "adk.model.calls";

fn meter() -> Meter {
    opentelemetry::global::meter(METER_NAME)
}

fn with_error(mut attributes: Vec<KeyValue>, error_type: Option<&'static str>) -> Vec<KeyValue> {
    if let Some(error_type) = error_type {
        attributes.push(KeyValue::new(ERROR_TYPE, error_type));
    }
    attributes
}

pub(crate) fn record_agent_duration(
    agent: &str,
    elapsed: Duration,
    error_type: Option<&'static str>,
) {
    let attributes = with_error(
        vec![KeyValue::new(GEN_AI_AGENT_NAME, agent.to_owned())],
        error_type,
    );
    meter()
        .f64_histogram(INVOKE_AGENT_DURATION)
        .with_unit("s")
        .with_description("Duration of agent invocations.")
        .build()
        .record(elapsed.as_secs_f64(), &attributes);
}

pub(crate) fn record_tool_duration(
    agent: &str,
    tool: &str,
    elapsed: Duration,
    error_type: Option<&'static str>,
) {
    let attributes = with_error(
        vec![
            KeyValue::new(GEN_AI_AGENT_NAME, agent.to_owned()),
            KeyValue::new(GEN_AI_TOOL_NAME, tool.to_owned()),
        ],
        error_type,
    );
    meter()
        .f64_histogram(EXECUTE_TOOL_DURATION)
        .with_unit("s")
        .with_description("Duration of tool executions.")
        .build()
        .record(elapsed.as_secs_f64(), &attributes);
}

/// What one model call measured, recorded when it ends.
pub(crate) struct ModelCallMeasure<'a> {
    pub(crate) agent: &'a str,
    pub(crate) model: &'a str,
    pub(crate) elapsed: Duration,
    pub(crate) error_type: Option<&'static str>,
    pub(crate) input_tokens: Option<u32>,
    pub(crate) output_tokens: Option<u32>,
}

pub(crate) fn record_model_call(measure: &ModelCallMeasure<'_>) {
    let meter = meter();
    let base = vec![
        KeyValue::new(GEN_AI_AGENT_NAME, measure.agent.to_owned()),
        KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_GENERATE_CONTENT),
        KeyValue::new(GEN_AI_REQUEST_MODEL, measure.model.to_owned()),
    ];
    let with_error = with_error(base.clone(), measure.error_type);
    meter
        .u64_counter(MODEL_CALLS)
        .with_description("Model calls made.")
        .build()
        .add(1, &with_error);
    meter
        .f64_histogram(CLIENT_OPERATION_DURATION)
        .with_unit("s")
        .with_description("GenAI operation duration.")
        .build()
        .record(measure.elapsed.as_secs_f64(), &with_error);
    let tokens = meter
        .u64_histogram(CLIENT_TOKEN_USAGE)
        .with_unit("{token}")
        .with_description("Number of input and output tokens used.")
        .build();
    for (kind, count) in [
        ("input", measure.input_tokens),
        ("output", measure.output_tokens),
    ] {
        if let Some(count) = count.filter(|count| *count > 0) {
            let mut attributes = base.clone();
            attributes.push(KeyValue::new(GEN_AI_TOKEN_TYPE, kind));
            tokens.record(u64::from(count), &attributes);
        }
    }
}
