//! The LLM flow (ADK's `base_flow`): [`run`] loops [`run_one_step`] until the agent gives a
//! final response, transfers, or the invocation ends.
//!
//! A step reads top to bottom as ADK's: prepare the request, resume the calls the user answered
//! (`resume`), preprocess the request, call the model, postprocess each response, finalize the
//! model-response event, handle its function calls, ask for credentials and confirmations, emit
//! structured output, and transfer to the chosen agent. `agent` runs the flow as the agent's
//! `Agent::run`.

mod agent;
mod function_calls;
mod model_call;
mod resume;
mod steps;

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{
    Agent, CallbackContext, Error, ErrorKind, Event, EventStream, InvocationContext, LlmRequest,
    LlmResponse, Result,
};
use adk_telemetry::InstrumentStream as _;
use async_stream::try_stream;
use futures::StreamExt as _;
use tracing::Instrument as _;

use crate::LlmAgent;
use crate::client_calls;
use crate::next_on_heap::next_on_heap;
use crate::overflow::OverflowCompaction;
use crate::processors;
use crate::step::Step;
use function_calls::handle_function_calls;
use steps::StepLoop;

/// Runs the agent's steps until one ends the flow.
pub(crate) fn run(agent: Arc<LlmAgent>, ctx: InvocationContext) -> EventStream {
    Box::pin(StepLoop::new(agent, ctx))
}

/// One step: one model call and the tool calls it asks for.
fn run_one_step(agent: Arc<LlmAgent>, ctx: InvocationContext) -> EventStream {
    Box::pin(try_stream! {
        let mut step = Step::new(agent, ctx.clone())?;
        // The request and the callback context are boxed, as are the model's responses: each
        // outlives several of the step's awaits, and inline they would take room in its state.
        let mut request = Box::<LlmRequest>::default();

        // Boxed, as are the compaction's futures below: they run seldom, and inline they would
        // make every step's state larger while it waits on the model.
        processors::prepare(&mut step, &mut request).await?;
        let resumed = Box::pin(resume::answered_calls(&step)).await?;
        // A resumed call that now waits for the user (a decision about an interrupted call)
        // ends the step: the model is not asked until the user answers.
        let waits = resumed.last().is_some_and(waits_for_user);
        for event in resumed {
            yield event;
        }
        if waits {
            return;
        }
        step.check_hooks()?;
        if let Some(event) = step.loop_stop_event() {
            yield event;
            return;
        }
        processors::preprocess(&mut step, &mut request).await?;
        if ctx.is_ended() {
            return;
        }

        let callback_ctx = Box::new(CallbackContext::new(ctx.clone()));
        let mut compacted = false;
        let (call_llm_span, first, responses) = loop {
            // The step's `call_llm` span covers the model call and what its answer leads to: the
            // tool calls and the agent transferred to, as in ADK.
            let call_llm_span = adk_telemetry::call_llm_span(&ctx, &request);
            // The request moves to the model: an overflow rebuilds it from the session.
            let mut responses =
                model_call::call_llm(&step, &callback_ctx, std::mem::take(&mut request))
                    .in_span(call_llm_span.clone());
            let overflow = match responses.next().await {
                Some(Err(error)) if error.kind() == ErrorKind::ContextOverflow => error,
                first => break (call_llm_span, first, responses),
            };
            if compacted {
                Err::<(), _>(still_overflowing(overflow))?;
                return;
            }
            // The request is longer than the model's context window: summarize the history once
            // and ask again with the shorter request.
            let Some(compactor) = OverflowCompaction::of(&ctx) else {
                break (call_llm_span, Some(Err(overflow)), responses);
            };
            drop(responses);
            if !Box::pin(compactor.compact_now(&ctx)).await? {
                Err::<(), _>(still_overflowing(overflow))?;
                return;
            }
            compacted = true;
            request = Box::pin(processors::rebuild_request(&mut step)).await?;
        };
        let mut responses = futures::stream::iter(first).chain(responses);
        while let Some(response) = responses.next().await {
            let mut response =
                response.inspect_err(|error| adk_telemetry::record_error(&call_llm_span, error))?;
            for event in processors::postprocess(&step, &mut response).await? {
                yield event;
            }
            if is_empty_response(&response) {
                continue;
            }
            // Boxed: the event outlives the tool calls it asks for, and a step's state should
            // not carry its bytes while it waits on the model.
            let model_event = Box::new(finalize_model_response_event(&step, &callback_ctx, *response));
            adk_telemetry::record_event_id(&call_llm_span, &model_event.id);
            // The step reads the event after yielding it only to check a final answer against
            // the output schema or to run the calls it asks for; otherwise it goes without a copy.
            let read_after = step.agent.output_validator.is_some()
                || (!model_event.is_partial() && model_event.function_calls().next().is_some());
            if !read_after {
                yield *model_event;
                continue;
            }
            yield Event::clone(&model_event);
            // A statement of its own, so that what `?` holds is gone before the yield.
            let correction =
                processors::output_schema::text_answer_correction(&step, &model_event)?.map(Box::new);
            if let Some(correction) = correction {
                yield *correction;
                continue;
            }
            if model_event.is_partial() || model_event.function_calls().next().is_none() {
                continue;
            }

            // Calls of task and single-turn sub-agents are run by the flow (see `task`): the
            // single-turn agents answer before the tools, the tasks after.
            let delegations = Box::new(crate::task::Delegations::of(&step.agent, &model_event));
            let mut answers = Vec::new();
            for (call, target) in &delegations.single_turn {
                let answer = Arc::new(parking_lot::Mutex::new(None));
                let mut events =
                    crate::task::run_single_turn_call(&ctx, call, target.clone(), answer.clone());
                while let Some(event) = next_on_heap(&mut events).await {
                    yield *event?;
                }
                answers.extend(answer.lock().take());
            }
            let Some(mut calls) = Box::pin(run_function_calls(
                &step,
                &model_event,
                &call_llm_span,
                delegations.others.as_ref(),
                answers,
            ))
            .await?
            else {
                let mut events = crate::task::run_task_calls(&ctx, &delegations.tasks);
                while let Some(event) = next_on_heap(&mut events).await {
                    yield *event?;
                }
                if ctx.is_ended() {
                    return;
                }
                continue;
            };
            if let Some(event) = calls.response_event.take() {
                yield event;
            }
            step.check_hooks()?;
            if let Some(event) = calls.auth_event.take() {
                yield event;
            }
            if let Some(event) = calls.confirmation_event.take() {
                yield event;
            }
            // After the response event, so that the refused call is answered in the history.
            if let Some(event) = step.loop_stop_event() {
                yield event;
                return;
            }
            // After the response event, so that a failed answer is stored before the run ends.
            if let Some(error) = calls.structured_error.take() {
                Err::<(), _>(error)?;
            }
            if let Some(event) = calls.structured_event.take() {
                yield event;
            }
            if let Some(error) = calls.refused_transfer.take() {
                Err::<(), _>(error)?;
            }
            let mut events = crate::task::run_task_calls(&ctx, &delegations.tasks);
            while let Some(event) = next_on_heap(&mut events).await {
                yield *event?;
            }
            if ctx.is_ended() {
                return;
            }
            if let Some(target) = calls.transfer_target.take() {
                let next = agent_to_run(&ctx, &target)?;
                let path = crate::node_paths::transfer_path(&ctx, &next);
                let mut events = next
                    .clone()
                    .run(ctx.with_agent(next).with_node_path(path))
                    .in_span(call_llm_span.clone());
                while let Some(event) = next_on_heap(&mut events).await {
                    yield *event?;
                }
                return;
            }
        }
    })
}

/// What running a model event's function calls produced, in the order the step yields it. Boxed,
/// so that the step's state holds one pointer while the events wait their turn.
struct FunctionCallsOutcome {
    response_event: Option<Event>,
    auth_event: Option<Event>,
    confirmation_event: Option<Event>,
    structured_event: Option<Event>,
    /// Why the structured answer could not be built.
    structured_error: Option<Error>,
    refused_transfer: Option<Error>,
    transfer_target: Option<String>,
}

/// Runs the function calls of `model_event` (inside the step's `call_llm` span) and builds the
/// events that follow them: the screened function-response event, the credential and
/// confirmation requests, the structured answer, and the transfer it asks for; `None` when no
/// call produced a response.
async fn run_function_calls(
    step: &Step,
    model_event: &Event,
    call_llm_span: &tracing::Span,
    only: Option<&std::collections::HashSet<adk_core::FunctionCallId>>,
    delegated_answers: Vec<adk_core::Part>,
) -> Result<Option<Box<FunctionCallsOutcome>>> {
    let answered = match only {
        Some(only) if only.is_empty() => None,
        _ => {
            handle_function_calls(step, model_event, &HashMap::new(), only)
                .instrument(call_llm_span.clone())
                .await
        }
    };
    let Some(mut response_event) = crate::task::with_answers(step, answered, delegated_answers)
    else {
        return Ok(None);
    };
    let auth_event = client_calls::auth_request_event(step, &response_event);
    let confirmation_event =
        client_calls::confirmation_request_event(step, model_event, &response_event);
    let (structured_event, structured_error) =
        match processors::output_schema::structured_response_event(step, &response_event) {
            Ok(event) => (event, None),
            Err(error) => (None, Some(error)),
        };
    let refused_transfer = refuse_unallowed_transfer(step, &mut response_event);
    let transfer_target = response_event.actions.transfer_to_agent.clone();
    Ok(Some(Box::new(FunctionCallsOutcome {
        response_event: Some(response_event),
        auth_event,
        confirmation_event,
        structured_event,
        structured_error,
        refused_transfer,
        transfer_target,
    })))
}

/// The error of a request that overflows the model's context window although the history was
/// compacted (or has nothing left to compact).
fn still_overflowing(cause: Error) -> Error {
    Error::new(
        ErrorKind::ContextOverflow,
        format!(
            "the request is longer than the model's context window even after compacting the \
             session's history; shorten the instruction, the tools' results or the message, or \
             use a model with a larger window: {cause}"
        ),
    )
    .with_source(cause)
}

/// Whether `event` asks the user for something the run must wait for (its long-running calls).
fn waits_for_user(event: &Event) -> bool {
    event
        .long_running_tool_ids
        .as_ref()
        .is_some_and(|ids| !ids.is_empty())
}

/// A response with nothing to show or record (a keep-alive chunk, say) makes no event.
fn is_empty_response(response: &LlmResponse) -> bool {
    response.content.is_none() && response.error_code.is_none() && response.interrupted.is_none()
}

/// Turns a model response into the agent's event: function-call ids unique in the session (see
/// `call_ids`), the ids of long-running calls, author and branch, and the state the model
/// callbacks set.
fn finalize_model_response_event(
    step: &Step,
    callback_ctx: &CallbackContext,
    response: LlmResponse,
) -> Event {
    let mut event = step.ctx.new_event();
    event.response = response;
    if !event.is_partial() {
        event.actions.merge(callback_ctx.take_actions());
    }
    crate::assign_call_ids(&step.ctx, &mut event);
    let mut long_running = Vec::new();
    let mut has_calls = false;
    for call in event.function_calls() {
        has_calls = true;
        if step
            .tools
            .get(&call.name)
            .is_some_and(|tool| tool.is_long_running())
        {
            long_running.extend(call.id.clone());
        }
    }
    if has_calls {
        event.long_running_tool_ids = Some(long_running);
    }
    event
}

/// Takes a transfer the agent may not make out of `response_event` and returns the error that
/// ends the step once the event (with the tools' results) is stored. Only the built-in
/// `transfer_to_agent` tool checks its argument; a custom tool may pass on any name the model
/// chose, so the flow holds every transfer to the same rule: a sub-agent, or the parent and peers
/// unless the agent disallows them.
fn refuse_unallowed_transfer(step: &Step, response_event: &mut Event) -> Option<Error> {
    let target = response_event.actions.transfer_to_agent.as_deref()?;
    if processors::may_transfer_to(step, target) {
        return None;
    }
    let error = Error::new(
        ErrorKind::Agent,
        format!(
            "a tool of agent '{}' asked to transfer to '{target}', which is not one of its \
             sub-agents, nor a parent or peer it may transfer to; the transfer was refused",
            step.agent.name()
        ),
    );
    tracing::warn!(agent = step.agent.name(), target, "transfer refused");
    response_event.actions.transfer_to_agent = None;
    Some(error)
}

/// The agent a transfer names, anywhere in the tree.
fn agent_to_run(ctx: &InvocationContext, name: &str) -> Result<Arc<dyn Agent>> {
    ctx.agent_tree().find(name).cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::Agent,
            format!(
                "agent '{}' asked to transfer to '{name}', which is not in the agent tree",
                ctx.agent_name()
            ),
        )
    })
}
