//! One run of the loop: iterate (transform the history, prepare the request, call the model,
//! parse the answer, run its tools) until a stop reason holds, then report the result.

use std::sync::Arc;

use adk_core::{
    Content, Error, ErrorKind, Event, EventStream, FunctionDeclaration, GenerateContentConfig,
    InvocationContext, Llm,
};
use adk_flow::{ToolCallbacks, ToolMap, assign_call_ids};
use adk_telemetry::InstrumentStream as _;
use adk_tool::Tool;
use async_stream::try_stream;
use futures::StreamExt as _;
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::history::session_history;
use super::tools::run_calls;
use super::{
    LOOP_METADATA_KEY, LoopConfig, LoopEvent, LoopResult, LoopStrategy, RequestInput, StopReason,
    TokenUsage, ToolUsePolicy,
};
use crate::model_call::call_model;

/// What every run of one loop works with: the model, its instruction and tools, the strategy and
/// the loop's settings. The run-loop agent holds one, checked when it was built, and hands it to
/// each run.
pub(super) struct LoopSetup {
    pub(super) model: Arc<dyn Llm>,
    pub(super) instruction: Option<String>,
    pub(super) tools: Vec<Arc<dyn Tool>>,
    pub(super) tool_callbacks: ToolCallbacks,
    pub(super) strategy: Arc<dyn LoopStrategy>,
    pub(super) config: LoopConfig,
    pub(super) generate_config: GenerateContentConfig,
    pub(super) output_key: Option<String>,
}

/// Why the loop stopped, and the event that ended it when that was the model's final answer.
struct Stop {
    reason: StopReason,
    error: Option<Error>,
    final_event: Option<Event>,
}

impl Stop {
    fn new(reason: StopReason) -> Self {
        Self {
            reason,
            error: None,
            final_event: None,
        }
    }

    fn error(error: Error) -> Self {
        Self {
            reason: StopReason::Error,
            error: Some(error),
            final_event: None,
        }
    }
}

/// Runs the loop of `setup` in the invocation of `ctx`.
pub(super) fn run(setup: Arc<LoopSetup>, ctx: InvocationContext) -> EventStream {
    Box::pin(try_stream! {
        let config = &setup.config;
        let strategy = setup.strategy.clone();
        let policy = strategy.tool_use_policy();
        let declarations: Vec<FunctionDeclaration> = match policy {
            ToolUsePolicy::Disabled => Vec::new(),
            _ => setup.tools.iter().filter_map(|tool| tool.declaration()).collect(),
        };
        let tools: ToolMap = setup
            .tools
            .iter()
            .map(|tool| (tool.name().to_owned(), tool.clone()))
            .collect();
        let mode = ctx.run_config().streaming_mode;
        // The history is read from the session once; later turns are appended to it, and
        // `Arc::make_mut` copies it only if a request still holds it.
        let mut history = Arc::new(session_history(&ctx));
        let mut usage = TokenUsage::default();
        let mut iteration = 0;
        let mut output = None;

        let stop = 'run: loop {
            if ctx.cancellation().is_cancelled() || ctx.is_ended() {
                break Stop::new(StopReason::Aborted);
            }
            if iteration >= config.max_iterations {
                break Stop::new(StopReason::MaxIterations);
            }
            if config.token_budget.is_some_and(|budget| usage.total_tokens >= budget) {
                break Stop::new(StopReason::BudgetExhausted);
            }
            iteration += 1;
            config.emit(LoopEvent::IterationStarted { iteration });

            // One model call, retried once with a shorter history if the context overflowed.
            let mut trimmed = false;
            let (response, span) = loop {
                let messages = match &config.transform_context {
                    Some(transform) => match transform(history.clone()).await {
                        Ok(messages) => messages,
                        Err(error) => break 'run Stop::error(error),
                    },
                    None => history.clone(),
                };
                let input = RequestInput {
                    model: setup.model.name(),
                    instruction: setup.instruction.as_deref(),
                    history: messages,
                    tools: &declarations,
                    config: &setup.generate_config,
                };
                let request = match strategy.prepare_request(input).await {
                    Ok(request) => request,
                    Err(error) => break 'run Stop::error(error),
                };
                let span = adk_telemetry::call_llm_span(&ctx, &request);
                let (model, caller) = (setup.model.clone(), strategy.clone());
                let mut responses = call_model(ctx.clone(), request, move |request| {
                    caller.call_model(model, request, mode)
                })
                .in_span(span.clone());
                let mut last = None;
                let mut failure = None;
                while let Some(item) = responses.next().await {
                    match item {
                        Ok(response) if response.is_partial() => {
                            let mut event = ctx.new_event();
                            event.response = response;
                            yield event;
                        }
                        Ok(response) => last = Some(response),
                        Err(error) => {
                            adk_telemetry::record_error(&span, &error);
                            failure = Some(error);
                            break;
                        }
                    }
                }
                drop(responses);
                if let Some(error) = failure {
                    if error.is_context_overflow()
                        && !trimmed
                        && let Some(shorter) = strategy.on_context_overflow(&history)
                    {
                        config.emit(LoopEvent::ContextTrimmed { from: history.len(), to: shorter.len() });
                        history = shorter;
                        trimmed = true;
                        continue;
                    }
                    break 'run Stop::error(error);
                }
                match last {
                    Some(response) => break (response, span),
                    None => {
                        break 'run Stop::error(Error::new(
                            ErrorKind::Model,
                            "the model's answer ended without a final response",
                        ));
                    }
                }
            };

            if let Some(reported) = &response.usage_metadata {
                usage.add(reported);
            }
            let mut event = ctx.new_event();
            event.response = response;
            assign_call_ids(&ctx, &mut event);
            adk_telemetry::record_event_id(&span, &event.id);
            let action = match strategy.parse_response(&event.response) {
                Ok(action) => action,
                Err(error) => {
                    yield event;
                    break Stop::error(error);
                }
            };
            config.emit(LoopEvent::ModelResponded { iteration, tool_calls: action.tool_calls.len() });
            if let Some(content) = &event.response.content {
                Arc::make_mut(&mut history).push(content.clone());
            }
            output = action.output.clone().or(output);
            let go_on = strategy.should_continue(&action, iteration);

            if action.tool_calls.is_empty() {
                if go_on {
                    yield event;
                    continue;
                }
                let mut stop = Stop::new(action.stop_reason.unwrap_or(StopReason::Finish));
                stop.final_event = Some(event);
                break stop;
            }
            yield event;
            let (responses, hook_error) = run_calls(
                &ctx,
                &tools,
                &setup.tool_callbacks,
                &action.tool_calls,
                policy,
                config,
            )
            .instrument(span)
            .await;
            if let Some(content) = &responses.response.content {
                Arc::make_mut(&mut history).push(content.clone());
            }
            yield responses;
            if let Some(error) = hook_error {
                break Stop::error(error);
            }
            config.emit(LoopEvent::ToolsFinished {
                iteration,
                tools: action.tool_calls.iter().map(|call| call.name.clone()).collect(),
            });
            if !go_on {
                break Stop::new(action.stop_reason.unwrap_or(StopReason::Finish));
            }
        };

        let mut reason = stop.reason;
        let over_budget = config.token_budget.is_some_and(|budget| usage.total_tokens > budget);
        if reason == StopReason::Finish && over_budget {
            reason = StopReason::FinishOverBudget;
        }
        let result = LoopResult {
            stop_reason: reason,
            iterations: iteration,
            usage,
            output: if reason.is_finish() { output } else { None },
            error: stop.error.as_ref().map(ToString::to_string),
            messages: history,
        };
        config.emit(LoopEvent::Stopped(result.clone()));
        let mut last = match stop.final_event {
            Some(event) => event,
            None => stop_event(&ctx, &result, config.token_budget),
        };
        let metadata = last.response.custom_metadata.get_or_insert_with(Map::new);
        metadata.insert(LOOP_METADATA_KEY.to_owned(), serde_json::to_value(&result).unwrap_or(Value::Null));
        if let (Some(key), Some(text)) = (&setup.output_key, &result.output) {
            last.actions.state_delta.insert(key.clone(), json!(text));
        }
        yield last;
    })
}

/// The event that says why the loop stopped without a final answer.
fn stop_event(ctx: &InvocationContext, result: &LoopResult, budget: Option<u64>) -> Event {
    let text = match result.stop_reason {
        StopReason::MaxIterations => format!(
            "Stopped after {} iterations without a final answer.",
            result.iterations
        ),
        StopReason::BudgetExhausted => format!(
            "Stopped: the token budget of {} tokens is spent ({} used) and there is no final answer.",
            budget.unwrap_or_default(),
            result.usage.total_tokens
        ),
        StopReason::Aborted => "Stopped: the run was cancelled.".to_owned(),
        StopReason::Error => format!(
            "Stopped by an error: {}",
            result.error.as_deref().unwrap_or("unknown")
        ),
        StopReason::Finish | StopReason::FinishOverBudget => "Finished.".to_owned(),
    };
    let mut event = ctx.new_event().with_content(Content::model(text.clone()));
    if !result.stop_reason.is_finish() {
        event.response.error_code = Some(result.stop_reason.as_str().to_ascii_uppercase());
        event.response.error_message = Some(text);
    }
    event
}
