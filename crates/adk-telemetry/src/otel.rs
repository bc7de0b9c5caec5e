//! OTLP/HTTP export (feature `otel`): [`install`] sets up the whole pipeline in one call, and
//! [`layer`] returns the `tracing` layer for applications that compose their own subscriber.
//!
//! Spans go through `tracing-opentelemetry` to an OpenTelemetry SDK tracer provider with a batch
//! processor and a blocking HTTP/protobuf exporter; metrics go to a meter provider with a periodic
//! reader, installed as the global meter provider. Both run on their own threads, so export
//! needs no async runtime. The standard environment variables configure them:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`), the per-signal
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; values set
//! on [`OtelConfig`] win over them.
//!
//! The [`OtelGuard`] flushes and shuts the exporters down when dropped. Drop it outside an async
//! runtime (at the end of `main`, after the runtime): flushing blocks until the export finishes.

use std::fmt;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Registry};

use crate::metrics::METER_NAME;

/// The `tracing` layer that exports spans over OTLP; see [`layer`].
pub type OtelLayer<S = Registry> = OpenTelemetryLayer<S, Tracer>;

/// What [`install`] and [`layer`] set up; every field left unset falls back to the standard
/// `OTEL_*` environment variables.
#[derive(Debug, Clone)]
pub struct OtelConfig {
    endpoint: Option<String>,
    service_name: Option<String>,
    metrics: bool,
}

impl Default for OtelConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            service_name: None,
            metrics: true,
        }
    }
}

impl OtelConfig {
    /// Everything from the environment, metrics exported too.
    pub fn new() -> Self {
        Self::default()
    }

    /// The collector's base URL, like `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to
    /// `{endpoint}/v1/traces` and metrics to `{endpoint}/v1/metrics`.
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The `service.name` resource attribute, like `OTEL_SERVICE_NAME`.
    #[must_use]
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Whether to export metrics too, through a meter provider installed as the global one
    /// (on by default).
    #[must_use]
    pub fn metrics(mut self, export: bool) -> Self {
        self.metrics = export;
        self
    }

    fn signal_endpoint(&self, path: &str) -> Option<String> {
        self.endpoint
            .as_ref()
            .map(|base| format!("{}{path}", base.trim_end_matches('/')))
    }

    fn resource(&self) -> Resource {
        let builder = Resource::builder();
        match &self.service_name {
            Some(name) => builder.with_service_name(name.clone()).build(),
            None => builder.build(),
        }
    }
}

/// What went wrong setting up export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The exporter could not be built: an invalid endpoint, header or timeout.
    Exporter,
    /// A global `tracing` subscriber was already installed.
    Subscriber,
    /// Flushing or shutting down the exporters failed.
    Flush,
}

/// An error of export setup: its [`kind`](Error::kind) and a message that says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    fn new(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

/// Keeps the exporters running; dropping it flushes what is buffered and shuts them down.
pub struct OtelGuard {
    tracer_provider: SdkTracerProvider,
    meter_provider: Option<SdkMeterProvider>,
}

impl OtelGuard {
    /// Exports every finished span and the current metrics now, blocking until done. Call it
    /// outside an async runtime, or from `spawn_blocking`.
    pub fn flush(&self) -> Result<(), Error> {
        self.tracer_provider.force_flush().map_err(|error| {
            Error::new(
                ErrorKind::Flush,
                format!("exporting spans failed: {error}"),
                error,
            )
        })?;
        if let Some(meter_provider) = &self.meter_provider {
            meter_provider.force_flush().map_err(|error| {
                Error::new(
                    ErrorKind::Flush,
                    format!("exporting metrics failed: {error}"),
                    error,
                )
            })?;
        }
        Ok(())
    }
}

impl fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtelGuard")
            .field("metrics", &self.meter_provider.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        // Errors here have nowhere to go: the exporters log them through OpenTelemetry's own
        // internal logging, and the process is usually ending.
        let _ = self.tracer_provider.shutdown();
        if let Some(meter_provider) = &self.meter_provider {
            let _ = meter_provider.shutdown();
        }
    }
}

/// Installs OTLP/HTTP export as the process's `tracing` subscriber: the layer of [`layer`] under
/// an `EnvFilter` from `RUST_LOG` (default `info`), and the tracer provider as OpenTelemetry's
/// global one. Call it once at the start of `main`; keep the guard until the end.
///
/// ```no_run
/// let _telemetry = adk_telemetry::otel::install(adk_telemetry::otel::OtelConfig::new())?;
/// // ... run agents ...
/// # Ok::<(), adk_telemetry::otel::Error>(())
/// ```
pub fn install(config: OtelConfig) -> Result<OtelGuard, Error> {
    let (layer, guard) = layer(&config)?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(layer)
        .try_init()
        .map_err(|error| {
            Error::new(
                ErrorKind::Subscriber,
                "a global tracing subscriber is already installed; add adk_telemetry::otel::layer() \
                 to it instead of calling install()",
                error,
            )
        })?;
    opentelemetry::global::set_tracer_provider(guard.tracer_provider.clone());
    Ok(guard)
}

/// The `tracing` layer that exports spans over OTLP/HTTP, for a subscriber the application
/// composes itself, and the guard that keeps the exporters running. With metrics on (the
/// default), the meter provider is installed as OpenTelemetry's global one.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt as _;
/// use tracing_subscriber::util::SubscriberInitExt as _;
///
/// let (otel, _guard) = adk_telemetry::otel::layer(&adk_telemetry::otel::OtelConfig::new())?;
/// tracing_subscriber::registry().with(otel).with(tracing_subscriber::fmt::layer()).init();
/// # Ok::<(), adk_telemetry::otel::Error>(())
/// ```
pub fn layer<S>(config: &OtelConfig) -> Result<(OtelLayer<S>, OtelGuard), Error>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    let resource = config.resource();
    let mut spans = opentelemetry_otlp::SpanExporter::builder().with_http();
    if let Some(endpoint) = config.signal_endpoint("/v1/traces") {
        spans = spans.with_endpoint(endpoint);
    }
    let spans = spans.build().map_err(|error| {
        Error::new(
            ErrorKind::Exporter,
            format!("the OTLP span exporter could not be built ({error}); check the OTEL_EXPORTER_OTLP_* variables"),
            error,
        )
    })?;
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();

    let meter_provider = if config.metrics {
        let mut metrics = opentelemetry_otlp::MetricExporter::builder().with_http();
        if let Some(endpoint) = config.signal_endpoint("/v1/metrics") {
            metrics = metrics.with_endpoint(endpoint);
        }
        let metrics = metrics.build().map_err(|error| {
            Error::new(
                ErrorKind::Exporter,
                format!("the OTLP metric exporter could not be built ({error}); check the OTEL_EXPORTER_OTLP_* variables"),
                error,
            )
        })?;
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        Some(meter_provider)
    } else {
        None
    };

    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer_provider.tracer(METER_NAME))
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_location(false);
    Ok((
        layer,
        OtelGuard {
            tracer_provider,
            meter_provider,
        },
    ))
}
