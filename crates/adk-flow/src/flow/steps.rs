//! The flow's loop: one step after another until a step ends the flow.
//!
//! A hand-written stream rather than an `async` block: it only passes the steps' events on, and
//! a block that yields would keep room for an event in its state while a step waits on the model.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use adk_core::{Agent as _, Event, EventStream, InvocationContext, Result};
use futures::{Stream, StreamExt as _};

use super::run_one_step;
use crate::LlmAgent;
use crate::processors;

/// The events of the agent's steps, run one after another until one gives a final response,
/// transfers, or ends the invocation, or fails.
pub(super) struct StepLoop {
    agent: Arc<LlmAgent>,
    ctx: InvocationContext,
    /// The running step; `None` once the flow ended.
    step: Option<EventStream>,
    /// What the running step's events said so far.
    outcome: StepOutcome,
}

impl StepLoop {
    pub(super) fn new(agent: Arc<LlmAgent>, ctx: InvocationContext) -> Self {
        let step = run_one_step(agent.clone(), ctx.clone());
        Self {
            agent,
            ctx,
            step: Some(step),
            outcome: StepOutcome::default(),
        }
    }
}

impl Stream for StepLoop {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            let Some(step) = &mut this.step else {
                return Poll::Ready(None);
            };
            match ready!(step.poll_next_unpin(cx)) {
                Some(Ok(event)) => {
                    this.outcome.observe(&event, this.agent.name());
                    return Poll::Ready(Some(Ok(event)));
                }
                Some(Err(error)) => {
                    this.step = None;
                    return Poll::Ready(Some(Err(error)));
                }
                None if this.outcome.ends_flow() || this.ctx.is_ended() => {
                    this.step = None;
                    return Poll::Ready(None);
                }
                None => {
                    this.outcome = StepOutcome::default();
                    this.step = Some(run_one_step(this.agent.clone(), this.ctx.clone()));
                }
            }
        }
    }
}

/// What the events of a step say about whether the flow goes on.
#[derive(Default)]
struct StepOutcome {
    last_ends_turn: Option<bool>,
    transferred: bool,
}

impl StepOutcome {
    fn observe(&mut self, event: &Event, agent_name: &str) {
        // A partial last event means the stream stopped mid-answer; calling the model again
        // would repeat the turn, so it ends the flow like a final response does. A correction of
        // an answer that broke the output schema asks the model to answer again.
        self.last_ends_turn = Some(
            (event.is_final_response() || event.is_partial())
                && !processors::output_schema::is_correction(event, agent_name),
        );
        if event.author == agent_name && event.actions.transfer_to_agent.is_some() {
            self.transferred = true;
        }
    }

    fn ends_flow(&self) -> bool {
        self.transferred || self.last_ends_turn != Some(false)
    }
}
