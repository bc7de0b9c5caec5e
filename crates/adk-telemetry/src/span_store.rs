//! [`SpanStore`]: the most recent finished spans of adk-rs, kept in memory behind a `tracing`
//! layer, for debug views (the dev UI's trace panel) that ask for one session's or one event's spans.
//!
//! The store is a ring bounded by a number of spans and by bytes: when either is reached the
//! oldest spans are dropped, and a single attribute longer than a sixteenth of the byte budget
//! (a model request captured with content capture on can be tens of megabytes) is cut, so a
//! long-running server holds a bounded amount of memory. Only spans of adk-rs crates (targets
//! starting with `adk`) are kept. Each span remembers the user of its trace (the root span's
//! `user.id`), so a debug view can show a caller only its own user's spans. Span and trace ids are numbers the layer assigns (unique within
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
    ADK_EVENT_ID, ADK_SESSION_ID, GEN_AI_CONVERSATION_ID, GEN_AI_RESPONSE_FINISH_REASONS, USER_ID,
};

/// The default number of bytes a store keeps: 64 MiB.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// What a span costs besides its strings: ids, times, the map's nodes.
const SPAN_OVERHEAD: usize = 160;

/// The smallest length an attribute is ever cut to.
const MIN_ATTRIBUTE_BYTES: usize = 4 * 1024;

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
    /// The user of the span's trace, from its root's `user.id`.
    #[serde(skip)]
    user: Option<Arc<str>>,
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

    /// The user of the span's trace, when its root recorded one (`user.id`).
    pub fn user_id(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// Whether a viewer restricted to `user` (`None`: every user) may see this span.
    fn visible_to(&self, user: Option<&str>) -> bool {
        user.is_none_or(|user| self.user_id() == Some(user))
    }

    /// About how many bytes the span holds.
    fn approx_bytes(&self) -> usize {
        SPAN_OVERHEAD
            + self.name.len()
            + self
                .attributes
                .iter()
                .map(|(key, value)| key.len() + value_bytes(value))
                .sum::<usize>()
    }
}

/// About how many bytes a JSON value holds.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len() + 24,
        Value::Array(items) => 24 + items.iter().map(value_bytes).sum::<usize>(),
        Value::Object(fields) => {
            24 + fields
                .iter()
                .map(|(key, value)| key.len() + value_bytes(value))
                .sum::<usize>()
        }
        _ => 16,
    }
}

/// A bounded in-memory store of finished spans; cheap to clone (clones share the store).
#[derive(Debug, Clone)]
pub struct SpanStore {
    inner: Arc<Mutex<Ring>>,
}

#[derive(Debug)]
struct Ring {
    /// The spans, oldest first, each with what it costs.
    spans: VecDeque<(usize, RecordedSpan)>,
    capacity: usize,
    bytes: usize,
    max_bytes: usize,
}

impl SpanStore {
    /// A store that keeps at most `capacity` spans (at least one) and [`DEFAULT_MAX_BYTES`],
    /// dropping the oldest first.
    pub fn new(capacity: usize) -> Self {
        Self::with_max_bytes(capacity, DEFAULT_MAX_BYTES)
    }

    /// A store that keeps at most `capacity` spans (at least one) and about `max_bytes` bytes of
    /// them (names, attribute keys and values), dropping the oldest first; an attribute longer
    /// than a sixteenth of `max_bytes` (at least 4 KiB) is cut, with a note of how much was left
    /// out.
    ///
    /// ```
    /// use adk_telemetry::span_store::SpanStore;
    /// use tracing_subscriber::layer::SubscriberExt as _;
    ///
    /// let store = SpanStore::with_max_bytes(1_000, 64 * 1024);
    /// let subscriber = tracing_subscriber::registry().with(store.layer());
    /// tracing::subscriber::with_default(subscriber, || {
    ///     for _ in 0..100 {
    ///         let big = "x".repeat(10_000);
    ///         tracing::info_span!(target: "adk_example", "call_llm", request = big.as_str())
    ///             .in_scope(|| {});
    ///     }
    /// });
    /// assert!(store.bytes() <= 64 * 1024);
    /// ```
    pub fn with_max_bytes(capacity: usize, max_bytes: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            inner: Arc::new(Mutex::new(Ring {
                spans: VecDeque::with_capacity(capacity.min(4_096)),
                capacity,
                bytes: 0,
                max_bytes: max_bytes.max(MIN_ATTRIBUTE_BYTES),
            })),
        }
    }

    /// The `tracing` layer that fills this store; add it to the application's subscriber.
    pub fn layer(&self) -> SpanStoreLayer {
        let max_attribute_bytes = (self.inner.lock().max_bytes / 16).max(MIN_ATTRIBUTE_BYTES);
        SpanStoreLayer {
            store: self.clone(),
            max_attribute_bytes,
        }
    }

    /// About how many bytes the kept spans hold.
    pub fn bytes(&self) -> usize {
        self.inner.lock().bytes
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
        self.session_spans_of(session_id, None)
    }

    /// Like [`session_spans`](Self::session_spans), keeping only the traces of `user` (every
    /// user's with `None`): what a debug view shows a caller that may see only its own user's
    /// runs.
    pub fn session_spans_of(&self, session_id: &str, user: Option<&str>) -> Vec<RecordedSpan> {
        let ring = self.inner.lock();
        let traces: HashSet<u64> = ring
            .spans
            .iter()
            .map(|(_, span)| span)
            .filter(|span| span.session_id() == Some(session_id) && span.visible_to(user))
            .map(|span| span.trace_id)
            .collect();
        let mut spans: Vec<RecordedSpan> = ring
            .spans
            .iter()
            .map(|(_, span)| span)
            .filter(|span| traces.contains(&span.trace_id) && span.visible_to(user))
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
        self.event_attributes_of(event_id, None)
    }

    /// Like [`event_attributes`](Self::event_attributes), only for a span of `user`'s traces
    /// (any user's with `None`).
    pub fn event_attributes_of(
        &self,
        event_id: &str,
        user: Option<&str>,
    ) -> Option<Map<String, Value>> {
        let ring = self.inner.lock();
        let (_, span) = ring.spans.iter().rev().find(|(_, span)| {
            span.attribute_str(ADK_EVENT_ID) == Some(event_id)
                && span.visible_to(user)
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
        let cost = span.approx_bytes();
        let mut ring = self.inner.lock();
        while ring.spans.len() >= ring.capacity
            || (!ring.spans.is_empty() && ring.bytes + cost > ring.max_bytes)
        {
            let Some((freed, _)) = ring.spans.pop_front() else {
                break;
            };
            ring.bytes -= freed;
        }
        ring.bytes += cost;
        ring.spans.push_back((cost, span));
    }
}

/// The `tracing` layer of a [`SpanStore`]; made by [`SpanStore::layer`].
#[derive(Debug)]
pub struct SpanStoreLayer {
    store: SpanStore,
    /// Longer attribute values are cut to this.
    max_attribute_bytes: usize,
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
                .map(|open| (open.0.span_id, open.0.trace_id, open.0.user.clone()))
        });
        let span_id = next_span_id();
        let mut visitor = FieldVisitor::new(self.max_attribute_bytes);
        attrs.record(&mut visitor);
        let user = match visitor.attributes.get(USER_ID) {
            Some(Value::String(user)) => Some(Arc::from(user.as_str())),
            _ => parent.as_ref().and_then(|(_, _, user)| user.clone()),
        };
        let recorded = RecordedSpan {
            name: visitor
                .otel_name
                .take()
                .unwrap_or_else(|| span.metadata().name().to_owned()),
            span_id,
            trace_id: parent
                .as_ref()
                .map_or(span_id, |(_, trace_id, _)| *trace_id),
            parent_span_id: parent.as_ref().map(|(parent_id, _, _)| *parent_id),
            start_time: now_nanos(),
            end_time: 0,
            attributes: visitor.attributes,
            user,
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
            max_bytes: self.max_attribute_bytes,
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
/// fields are left out; text longer than `max_bytes` is cut.
struct FieldVisitor {
    attributes: Map<String, Value>,
    otel_name: Option<String>,
    max_bytes: usize,
}

impl FieldVisitor {
    fn new(max_bytes: usize) -> Self {
        Self {
            attributes: Map::new(),
            otel_name: None,
            max_bytes,
        }
    }

    /// `text`, cut to `max_bytes` (at a character boundary) with a note of what was left out.
    fn text(&self, text: &str) -> Value {
        if text.len() <= self.max_bytes {
            return Value::String(text.to_owned());
        }
        let mut end = self.max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Value::String(format!(
            "{}… [{} more bytes not kept by the trace store]",
            &text[..end],
            text.len() - end
        ))
    }

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
        let value = self.text(value);
        self.insert(field, value);
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
        let value = self.text(&format!("{value:?}"));
        self.insert(field, value);
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
            .map(|(_, span)| span.attributes["index"].as_i64().unwrap())
            .collect();
        assert_eq!(kept, [2, 3, 4]);
    }

    #[test]
    fn security_resource_bounds_spans_with_huge_captured_content_stay_within_the_byte_budget() {
        // Content capture puts whole model requests in attributes: a 30 MiB request must neither
        // be kept whole nor let the store grow past its budget.
        let store = SpanStore::with_max_bytes(10_000, 1024 * 1024);
        let request = "r".repeat(30 * 1024 * 1024);
        record(&store, || {
            for _ in 0..3 {
                tracing::info_span!(target: "adk_test", "call_llm", llm_request = request.as_str())
                    .in_scope(|| {});
            }
            for index in 0..500_i64 {
                tracing::info_span!(target: "adk_test", "step", index, text = "y".repeat(4_000).as_str())
                    .in_scope(|| {});
            }
        });
        assert!(store.bytes() <= 1024 * 1024, "{}", store.bytes());
        let ring = store.inner.lock();
        let newest = &ring.spans.back().unwrap().1;
        assert_eq!(newest.attributes["index"], 499);
        assert!(ring.spans.len() < 500, "old spans were dropped for bytes");
        drop(ring);

        let store = SpanStore::with_max_bytes(10, 1024 * 1024);
        record(&store, || {
            tracing::info_span!(target: "adk_test", "call_llm", llm_request = request.as_str())
                .in_scope(|| {});
        });
        let ring = store.inner.lock();
        let kept = ring.spans[0].1.attributes["llm_request"].as_str().unwrap();
        assert!(kept.len() < 70 * 1024, "{}", kept.len());
        assert!(kept.ends_with("more bytes not kept by the trace store]"));
    }

    #[test]
    fn a_viewer_restricted_to_a_user_sees_only_that_users_traces() {
        let store = SpanStore::new(100);
        record(&store, || {
            for user in ["ada", "bob"] {
                let invocation = tracing::info_span!(target: "adk_test", "invocation", "gen_ai.conversation.id" = "s-1", "user.id" = user);
                invocation.in_scope(|| {
                    let step = tracing::info_span!(target: "adk_test", "call_llm", "gcp.vertex.agent.event_id" = format!("ev-{user}").as_str());
                    step.in_scope(|| {});
                });
            }
        });
        assert_eq!(store.session_spans_of("s-1", None).len(), 4);
        let ada = store.session_spans_of("s-1", Some("ada"));
        assert_eq!(ada.len(), 2);
        assert!(ada.iter().all(|span| span.user_id() == Some("ada")));
        assert!(store.event_attributes_of("ev-bob", Some("ada")).is_none());
        assert!(store.event_attributes_of("ev-bob", Some("bob")).is_some());
        assert!(store.session_spans_of("s-1", Some("")).is_empty());
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
