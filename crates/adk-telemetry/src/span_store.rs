//! [`SpanStore`]: the most recent finished spans of adk-rs, kept in memory behind a `tracing`
//! layer, for debug views (the dev UI's trace panel) that ask for one session's or one event's spans.
//!
//! The store is a ring of at most `capacity` spans: when it is full the oldest span is dropped, so
//! a long-running server holds a bounded amount of memory. Only spans of adk-rs crates (targets
//! starting with `adk`) are kept. Span and trace ids are numbers the layer assigns (unique within
//! the process); a trace is the tree under one root span, usually a runner's `invocation`.
//!
//! ```
//! use adk_telemetry::span_store::SpanStore;
//! use tracing_subscriber::layer::SubscriberExt as _;
//!
//! let store = SpanStore::new(1_000);
//! let subscriber = tracing_subscriber::registry().with(store.layer());
//! tracing::subscriber::with_default(subscriber, || {
//!     let span = tracing::info_span!(target: "adk_example", "invocation", "gen_ai.conversation.id" = "s-1");
//!     span.in_scope(|| tracing::info_span!(target: "adk_example", "call_llm").in_scope(|| {}));
//! });
//! let spans = store.session_spans("s-1");
//! assert_eq!(spans.len(), 2);
//! assert_eq!(spans[0].name, "call_llm");
//! assert_eq!(spans[0].parent_span_id, Some(spans[1].span_id));
//! ```

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Map, Value};
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::attributes::{
    ADK_EVENT_ID, ADK_SESSION_ID, GEN_AI_CONVERSATION_ID, GEN_AI_RESPONSE_FINISH_REASONS,
};

/// The spans a debug view asks for by event: those that record the event they produced.
const EVENT_SPAN_NAMES: [&str; 3] = ["call_llm", "generate_content", "execute_tool"];

/// One finished span: its name, ids, times (nanoseconds since the Unix epoch) and attributes, in
/// the shape ADK's dev UI reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RecordedSpan {
    /// The span's name (`otel.name` when set, as exported to OpenTelemetry).
    pub name: String,
    /// The span's id.
    pub span_id: u64,
    /// The id of the trace: the span id of the trace's root span.
    pub trace_id: u64,
    /// The parent span's id; `None` for a root.
    pub parent_span_id: Option<u64>,
    /// When the span was opened.
    pub start_time: u64,
    /// When the span closed.
    pub end_time: u64,
    /// The span's fields that had a value (`otel.*` fields left out).
    pub attributes: Map<String, Value>,
}

impl RecordedSpan {
    fn attribute_str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// The session the span belongs to, from `gcp.vertex.agent.session_id` or
    /// `gen_ai.conversation.id`.
    fn session_id(&self) -> Option<&str> {
        self.attribute_str(ADK_SESSION_ID)
            .or_else(|| self.attribute_str(GEN_AI_CONVERSATION_ID))
    }
}

/// A bounded in-memory store of finished spans; cheap to clone (clones share the store).
#[derive(Debug, Clone)]
pub struct SpanStore {
    inner: Arc<Mutex<Ring>>,
}

#[derive(Debug)]
struct Ring {
    spans: VecDeque<RecordedSpan>,
    capacity: usize,
}

impl SpanStore {
    /// A store that keeps at most `capacity` spans (at least one), dropping the oldest first.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            inner: Arc::new(Mutex::new(Ring {
                spans: VecDeque::with_capacity(capacity.min(4_096)),
                capacity,
            })),
        }
    }

    /// The `tracing` layer that fills this store; add it to the application's subscriber.
    pub fn layer(&self) -> SpanStoreLayer {
        SpanStoreLayer {
            store: self.clone(),
        }
    }

    /// How many spans the store holds now.
    pub fn len(&self) -> usize {
        self.inner.lock().spans.len()
    }

    /// Whether the store holds no span.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every kept span of the traces that touched session `session_id`, in the store's order of
    /// closing (a child closes before its parent).
    ///
    /// A `generate_content` span gets the `gcp.vertex.agent.event_id` of its `call_llm` parent
    /// when it has none of its own: the model call ends before its answer becomes an event, and
    /// the dev UI reads the event of a model call from that attribute.
    pub fn session_spans(&self, session_id: &str) -> Vec<RecordedSpan> {
        let ring = self.inner.lock();
        let traces: HashSet<u64> = ring
            .spans
            .iter()
            .filter(|span| span.session_id() == Some(session_id))
            .map(|span| span.trace_id)
            .collect();
        let mut spans: Vec<RecordedSpan> = ring
            .spans
            .iter()
            .filter(|span| traces.contains(&span.trace_id))
            .cloned()
            .collect();
        drop(ring);
        let step_events: HashMap<u64, Value> = spans
            .iter()
            .filter_map(|span| Some((span.span_id, span.attributes.get(ADK_EVENT_ID)?.clone())))
            .collect();
        for span in &mut spans {
            if span.attributes.contains_key(ADK_EVENT_ID)
                || !span.name.starts_with("generate_content")
            {
                continue;
            }
            if let Some(event_id) = span
                .parent_span_id
                .and_then(|parent| step_events.get(&parent))
            {
                span.attributes
                    .insert(ADK_EVENT_ID.to_owned(), event_id.clone());
            }
        }
        spans
    }

    /// The attributes of the most recent `call_llm`, `generate_content` or `execute_tool` span that
    /// produced event `event_id`, with its `trace_id` and `span_id` added; `None` when no such span
    /// is kept.
    pub fn event_attributes(&self, event_id: &str) -> Option<Map<String, Value>> {
        let ring = self.inner.lock();
        let span = ring.spans.iter().rev().find(|span| {
            span.attribute_str(ADK_EVENT_ID) == Some(event_id)
                && EVENT_SPAN_NAMES
                    .iter()
                    .any(|name| span.name.split(' ').next() == Some(name))
        })?;
        let mut attributes = span.attributes.clone();
        attributes.insert("trace_id".to_owned(), span.trace_id.into());
        attributes.insert("span_id".to_owned(), span.span_id.into());
        Some(attributes)
    }

    fn push(&self, span: RecordedSpan) {
        let mut ring = self.inner.lock();
        if ring.spans.len() == ring.capacity {
            ring.spans.pop_front();
        }
        ring.spans.push_back(span);
    }
}

/// The `tracing` layer of a [`SpanStore`]; made by [`SpanStore::layer`].
#[derive(Debug)]
pub struct SpanStoreLayer {
    store: SpanStore,
}

/// What the layer keeps in a span's extensions while it is open.
struct OpenSpan(RecordedSpan);

/// Ids for spans: unique within the process, never reused (tracing's own ids are).
fn next_span_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
        })
}

impl<S> Layer<S> for SpanStoreLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        if !span.metadata().target().starts_with("adk") {
            return;
        }
        let parent = span.parent().and_then(|parent| {
            parent
                .extensions()
                .get::<OpenSpan>()
                .map(|open| (open.0.span_id, open.0.trace_id))
        });
        let span_id = next_span_id();
        let mut visitor = FieldVisitor::default();
        attrs.record(&mut visitor);
        let recorded = RecordedSpan {
            name: visitor
                .otel_name
                .take()
                .unwrap_or_else(|| span.metadata().name().to_owned()),
            span_id,
            trace_id: parent.map_or(span_id, |(_, trace_id)| trace_id),
            parent_span_id: parent.map(|(parent_id, _)| parent_id),
            start_time: now_nanos(),
            end_time: 0,
            attributes: visitor.attributes,
        };
        span.extensions_mut().insert(OpenSpan(recorded));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(open) = extensions.get_mut::<OpenSpan>() else {
            return;
        };
        let mut visitor = FieldVisitor {
            attributes: std::mem::take(&mut open.0.attributes),
            otel_name: None,
        };
        values.record(&mut visitor);
        open.0.attributes = visitor.attributes;
        if let Some(name) = visitor.otel_name {
            open.0.name = name;
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(OpenSpan(mut recorded)) = span.extensions_mut().remove::<OpenSpan>() else {
            return;
        };
        recorded.end_time = now_nanos();
        self.store.push(recorded);
    }
}

/// Turns a span's fields into JSON attributes; `otel.name` becomes the name and other `otel.*`
/// fields are left out.
#[derive(Default)]
struct FieldVisitor {
    attributes: Map<String, Value>,
    otel_name: Option<String>,
}

impl FieldVisitor {
    fn insert(&mut self, field: &Field, value: Value) {
        let name = field.name();
        if name == "otel.name" {
            if let Value::String(text) = value {
                self.otel_name = Some(text);
            }
        } else if name == GEN_AI_RESPONSE_FINISH_REASONS {
            // The semantic conventions make this an array, which a `tracing` field cannot hold;
            // the dev UI refuses a whole trace whose finish reasons are not one.
            let reasons = match value {
                Value::Array(reasons) => reasons,
                reason => vec![reason],
            };
            self.attributes
                .insert(name.to_owned(), Value::Array(reasons));
        } else if !name.starts_with("otel.") {
            self.attributes.insert(name.to_owned(), value);
        }
    }
}

impl Visit for FieldVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.insert(field, Value::String(value.to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.insert(field, value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.insert(field, value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.insert(field, value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.insert(field, value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.insert(field, Value::String(format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    fn record(store: &SpanStore, work: impl FnOnce()) {
        let subscriber = tracing_subscriber::registry().with(store.layer());
        tracing::subscriber::with_default(subscriber, work);
    }

    #[test]
    fn the_oldest_spans_are_dropped_past_the_capacity() {
        let store = SpanStore::new(3);
        record(&store, || {
            for index in 0..5_i64 {
                tracing::info_span!(target: "adk_test", "step", index).in_scope(|| {});
            }
        });
        let kept: Vec<i64> = store
            .inner
            .lock()
            .spans
            .iter()
            .map(|span| span.attributes["index"].as_i64().unwrap())
            .collect();
        assert_eq!(kept, [2, 3, 4]);
    }

    #[test]
    fn spans_of_other_crates_are_not_kept() {
        let store = SpanStore::new(10);
        record(&store, || {
            tracing::info_span!(target: "hyper", "conn").in_scope(|| {});
        });
        assert!(store.is_empty());
    }

    #[test]
    fn a_session_gets_the_whole_trace_and_an_event_its_step() {
        let store = SpanStore::new(100);
        record(&store, || {
            let invocation = tracing::info_span!(target: "adk_test", "invocation", "gen_ai.conversation.id" = "s-1");
            invocation.in_scope(|| {
                let step = tracing::info_span!(
                    target: "adk_test",
                    "call_llm",
                    "gcp.vertex.agent.event_id" = tracing::field::Empty,
                    "otel.name" = "call_llm",
                );
                step.record("gcp.vertex.agent.event_id", "ev-1");
                step.in_scope(|| {
                    tracing::info_span!(target: "adk_test", "execute_tool", "otel.name" = "execute_tool get_weather")
                        .in_scope(|| {});
                });
            });
            tracing::info_span!(target: "adk_test", "invocation", "gen_ai.conversation.id" = "s-2")
                .in_scope(|| {});
        });
        let spans = store.session_spans("s-1");
        let names: Vec<&str> = spans.iter().map(|span| span.name.as_str()).collect();
        assert_eq!(
            names,
            ["execute_tool get_weather", "call_llm", "invocation"]
        );
        let root = spans[2].span_id;
        assert!(spans.iter().all(|span| span.trace_id == root));
        assert_eq!(spans[1].parent_span_id, Some(root));
        assert_eq!(spans[0].parent_span_id, Some(spans[1].span_id));
        assert!(spans.iter().all(|span| span.end_time >= span.start_time));

        let attributes = store.event_attributes("ev-1").unwrap();
        assert_eq!(attributes["gcp.vertex.agent.event_id"], "ev-1");
        assert_eq!(attributes["span_id"], spans[1].span_id);
        assert_eq!(store.event_attributes("ev-2"), None);
    }

    #[test]
    fn a_model_call_is_shown_with_its_steps_event_and_its_finish_reasons_as_a_list() {
        let store = SpanStore::new(100);
        record(&store, || {
            let invocation = tracing::info_span!(target: "adk_test", "invocation", "gen_ai.conversation.id" = "s-1");
            invocation.in_scope(|| {
                let step = tracing::info_span!(
                    target: "adk_test",
                    "call_llm",
                    "gcp.vertex.agent.event_id" = tracing::field::Empty,
                );
                step.in_scope(|| {
                    let call = tracing::info_span!(
                        target: "adk_test",
                        "generate_content",
                        "otel.name" = "generate_content scripted",
                        "gen_ai.response.finish_reasons" = tracing::field::Empty,
                    );
                    call.record("gen_ai.response.finish_reasons", "stop");
                    drop(call);
                });
                step.record("gcp.vertex.agent.event_id", "ev-1");
            });
        });
        let spans = store.session_spans("s-1");
        let call = spans
            .iter()
            .find(|span| span.name == "generate_content scripted")
            .unwrap();
        assert_eq!(call.attributes["gcp.vertex.agent.event_id"], "ev-1");
        assert_eq!(
            call.attributes["gen_ai.response.finish_reasons"],
            serde_json::json!(["stop"])
        );
    }
}
