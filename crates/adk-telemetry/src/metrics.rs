//! Metrics through the OpenTelemetry metrics API: agent-invocation, tool and model-call durations,
//! token counts and model-call counts.
//!
//! Instruments come from the global meter provider, so they are no-ops until the user installs a
//! meter provider (the `otel` feature's exporter does), and a provider installed late is used from
//! then on. Each instrument is made once per provider, when first needed.
//! Names follow ADK Python and the GenAI semantic conventions.

use std::sync::{Arc, OnceLock, PoisonError, RwLock, Weak};
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider};
use opentelemetry::{KeyValue, StringValue, Value};

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

/// The global meter provider as `opentelemetry::global` hands it out.
type Provider = dyn MeterProvider + Send + Sync;

/// The instruments of one meter provider, each made the first time it records.
struct Instruments {
    /// The provider they come from, compared by address with the global one at each recording. A
    /// weak reference keeps its address from being reused without keeping a replaced provider
    /// alive.
    provider: Weak<Provider>,
    meter: Meter,
    agent_duration: OnceLock<Histogram<f64>>,
    tool_duration: OnceLock<Histogram<f64>>,
    model_calls: OnceLock<Counter<u64>>,
    operation_duration: OnceLock<Histogram<f64>>,
    token_usage: OnceLock<Histogram<u64>>,
}

/// The instruments of the provider that recorded last.
static INSTRUMENTS: RwLock<Option<Arc<Instruments>>> = RwLock::new(None);

/// The instruments of the global meter provider. Asking the provider for a meter and its
/// instruments at each recording cost several allocations and locks each time, even with no
/// provider installed; they are made once per provider instead, and made anew when another
/// provider is installed.
fn instruments() -> Arc<Instruments> {
    let provider = opentelemetry::global::meter_provider();
    if let Some(cached) = INSTRUMENTS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        && std::ptr::addr_eq(cached.provider.as_ptr(), Arc::as_ptr(&provider))
    {
        return Arc::clone(cached);
    }
    let made = Arc::new(Instruments {
        provider: Arc::downgrade(&provider),
        meter: provider.meter(METER_NAME),
        agent_duration: OnceLock::new(),
        tool_duration: OnceLock::new(),
        model_calls: OnceLock::new(),
        operation_duration: OnceLock::new(),
        token_usage: OnceLock::new(),
    });
    *INSTRUMENTS.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&made));
    made
}

/// `attributes` as an instrument takes them: all of them when the last is `error.type` of a
/// failure, else all but the last. Attributes live in arrays on the stack, so recording
/// allocates only the strings it names.
fn with_error<'a>(attributes: &'a [KeyValue], error_type: Option<&'static str>) -> &'a [KeyValue] {
    match error_type {
        Some(_) => attributes,
        None => &attributes[..attributes.len() - 1],
    }
}

/// The `error.type` attribute, empty when there was no error (and then left out by [`with_error`]).
fn error_attribute(error_type: Option<&'static str>) -> KeyValue {
    KeyValue::new(ERROR_TYPE, error_type.unwrap_or_default())
}

/// A string attribute that clones by reference count.
fn shared(key: &'static str, value: &str) -> KeyValue {
    KeyValue::new(
        key,
        Value::String(StringValue::from(Arc::<str>::from(value))),
    )
}

pub(crate) fn record_agent_duration(
    agent: &str,
    elapsed: Duration,
    error_type: Option<&'static str>,
) {
    let attributes = [
        KeyValue::new(GEN_AI_AGENT_NAME, agent.to_owned()),
        error_attribute(error_type),
    ];
    let instruments = instruments();
    instruments
        .agent_duration
        .get_or_init(|| {
            instruments
                .meter
                .f64_histogram(INVOKE_AGENT_DURATION)
                .with_unit("s")
                .with_description("Duration of agent invocations.")
                .build()
        })
        .record(elapsed.as_secs_f64(), with_error(&attributes, error_type));
}

pub(crate) fn record_tool_duration(
    agent: &str,
    tool: &str,
    elapsed: Duration,
    error_type: Option<&'static str>,
) {
    let attributes = [
        KeyValue::new(GEN_AI_AGENT_NAME, agent.to_owned()),
        KeyValue::new(GEN_AI_TOOL_NAME, tool.to_owned()),
        error_attribute(error_type),
    ];
    let instruments = instruments();
    instruments
        .tool_duration
        .get_or_init(|| {
            instruments
                .meter
                .f64_histogram(EXECUTE_TOOL_DURATION)
                .with_unit("s")
                .with_description("Duration of tool executions.")
                .build()
        })
        .record(elapsed.as_secs_f64(), with_error(&attributes, error_type));
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
    let instruments = instruments();
    let meter = &instruments.meter;
    let agent = shared(GEN_AI_AGENT_NAME, measure.agent);
    let operation = KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_GENERATE_CONTENT);
    let model = shared(GEN_AI_REQUEST_MODEL, measure.model);
    let attributes = [
        agent.clone(),
        operation.clone(),
        model.clone(),
        error_attribute(measure.error_type),
    ];
    let with_error = with_error(&attributes, measure.error_type);
    instruments
        .model_calls
        .get_or_init(|| {
            meter
                .u64_counter(MODEL_CALLS)
                .with_description("Model calls made.")
                .build()
        })
        .add(1, with_error);
    instruments
        .operation_duration
        .get_or_init(|| {
            meter
                .f64_histogram(CLIENT_OPERATION_DURATION)
                .with_unit("s")
                .with_description("GenAI operation duration.")
                .build()
        })
        .record(measure.elapsed.as_secs_f64(), with_error);
    let counts = [
        ("input", measure.input_tokens),
        ("output", measure.output_tokens),
    ];
    if counts
        .iter()
        .all(|(_, count)| count.is_none_or(|count| count == 0))
    {
        return;
    }
    let tokens = instruments.token_usage.get_or_init(|| {
        meter
            .u64_histogram(CLIENT_TOKEN_USAGE)
            .with_unit("{token}")
            .with_description("Number of input and output tokens used.")
            .build()
    });
    for (kind, count) in counts {
        if let Some(count) = count.filter(|count| *count > 0) {
            let attributes = [
                agent.clone(),
                operation.clone(),
                model.clone(),
                KeyValue::new(GEN_AI_TOKEN_TYPE, kind),
            ];
            tokens.record(u64::from(count), &attributes);
        }
    }
}
