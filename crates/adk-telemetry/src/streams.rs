//! Streams in spans: [`InSpan`] enters a span each time its stream is polled, and
//! [`trace_agent`] / [`trace_invocation`] run an event stream in its `invoke_agent` or
//! `invocation` span.
//!
//! A span is entered only while the stream is polled, never held across an `.await` of the
//! consumer, so concurrent runs on one thread do not see each other's spans.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use adk_core::{Event, EventStream, InvocationContext, Result};
use futures::{Stream, StreamExt as _};
use pin_project_lite::pin_project;
use tracing::Span;

use crate::metrics;
use crate::spans::{invocation_span, invoke_agent_span, record_error};

pin_project! {
    /// A stream that enters its span each time it is polled; made by
    /// [`InstrumentStream::in_span`].
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct InSpan<S> {
        #[pin]
        inner: S,
        span: Span,
    }
}

impl<S: Stream> Stream for InSpan<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        let _entered = this.span.enter();
        this.inner.poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

/// Runs a stream in a span, as `tracing::Instrument` does for futures.
pub trait InstrumentStream: Stream + Sized {
    /// The stream, entering `span` each time it is polled.
    fn in_span(self, span: Span) -> InSpan<Self> {
        InSpan { inner: self, span }
    }
}

impl<S: Stream> InstrumentStream for S {}

/// Runs an agent's events in its `invoke_agent {agent}` span, for the agent `ctx` runs.
///
/// The span opens when the stream is first polled, as a child of the span current then (the
/// invocation, a parent agent, or the step that transferred), and closes when the stream ends or
/// is dropped. An error the stream yields marks the span failed. The agent's duration goes to the
/// `gen_ai.invoke_agent.duration` metric.
pub fn trace_agent(ctx: InvocationContext, events: EventStream) -> EventStream {
    Box::pin(Traced::new(ctx, events, Kind::Agent))
}

/// Runs a whole invocation's events in its `invocation` span, the root of the run's tree; the
/// runner calls it around the root agent's stream.
///
/// The span opens when the stream is first polled and closes when it ends or is dropped; an error
/// the stream yields marks it failed.
pub fn trace_invocation(ctx: InvocationContext, events: EventStream) -> EventStream {
    Box::pin(Traced::new(ctx, events, Kind::Invocation))
}

/// What a [`Traced`] stream runs.
#[derive(Clone, Copy)]
enum Kind {
    Invocation,
    Agent,
}

/// An event stream in the span of its invocation or agent. Written by hand rather than as an
/// `async` block, which would keep room for an event in its state while the run waits.
///
/// Fields drop in order: the events, then the agent's metric, then the span.
struct Traced {
    /// `None` once the events ended.
    events: Option<EventStream>,
    /// The agent's duration metric, recorded when the run ends or is dropped.
    agent: Option<AgentRun>,
    /// Disabled until the first poll opens it.
    span: Span,
    /// Until the first poll.
    ctx: Option<InvocationContext>,
    kind: Kind,
}

impl Traced {
    fn new(ctx: InvocationContext, events: EventStream, kind: Kind) -> Self {
        Self {
            events: Some(events),
            agent: None,
            span: Span::none(),
            ctx: Some(ctx),
            kind,
        }
    }

    /// Opens the span under the span current now, and starts the agent's clock.
    fn open(&mut self, ctx: &InvocationContext) {
        match self.kind {
            Kind::Invocation => self.span = invocation_span(ctx),
            Kind::Agent => {
                self.span = invoke_agent_span(ctx);
                self.agent = Some(AgentRun {
                    agent: ctx.agent_name().to_owned(),
                    started: Instant::now(),
                    error_type: None,
                });
            }
        }
    }
}

impl Stream for Traced {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(ctx) = this.ctx.take() {
            this.open(&ctx);
        }
        let Some(events) = &mut this.events else {
            return Poll::Ready(None);
        };
        let item = {
            let _entered = this.span.enter();
            ready!(events.poll_next_unpin(cx))
        };
        match &item {
            Some(Err(error)) => {
                record_error(&this.span, error);
                if let Some(agent) = &mut this.agent {
                    agent.error_type = Some(error.kind().as_str());
                }
            }
            Some(Ok(_)) => {}
            None => {
                this.events = None;
                this.agent = None;
                this.span = Span::none();
            }
        }
        Poll::Ready(item)
    }
}

/// What an agent run's duration metric needs; recorded when dropped.
struct AgentRun {
    agent: String,
    started: Instant,
    error_type: Option<&'static str>,
}

impl Drop for AgentRun {
    fn drop(&mut self) {
        metrics::record_agent_duration(&self.agent, self.started.elapsed(), self.error_type);
    }
}
