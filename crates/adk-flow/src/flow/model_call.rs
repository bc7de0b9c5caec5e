//! `call_llm`: the model call with its before-, after- and on-error callbacks.

use adk_core::internal::InvocationControl as _;
use adk_core::{CallbackContext, LlmRequest, LlmResponse, Result};
use async_stream::try_stream;
use futures::stream::BoxStream;
use tracing::Instrument as _;

use super::Step;
use crate::agent_tool::GROUNDING_METADATA_KEY;
use crate::callbacks::first_answer;
use crate::next_on_heap::next_on_heap;
use crate::plugin::Plugins;

/// Calls the model, unless a before-model plugin or callback answers instead. Each response passes
/// the after-model hooks; a failure passes the on-model-error hooks, which may recover. At each hook
/// the plugins run first.
///
/// The responses come boxed, and are held boxed here (see [`next_on_heap`]): the step holds each
/// across several awaits.
pub(super) fn call_llm<'a>(
    step: &'a Step,
    callback_ctx: &'a CallbackContext,
    mut request: Box<LlmRequest>,
) -> BoxStream<'a, Result<Box<LlmResponse>>> {
    Box::pin(try_stream! {
        let callbacks = &step.agent.callbacks;
        let plugins = step.ctx.invocation_data::<Plugins>();
        let mut answered = None;
        for plugin in plugins.iter() {
            answered = plugin.before_model(callback_ctx, &mut request).await?.map(Box::new);
            if answered.is_some() {
                break;
            }
        }
        if answered.is_none() {
            answered = first_answer(&callbacks.before_model, |callback| callback(callback_ctx, &mut request))?
                .map(Box::new);
        }
        if let Some(response) = answered {
            yield response;
            return;
        }
        step.ctx.count_llm_call()?;
        let mode = step.ctx.run_config().streaming_mode;
        // The model is called and polled inside the call's `generate_content` span, which ends
        // at the last response, before the caller runs the tools it asks for.
        let mut model_call = adk_telemetry::ModelCall::start(&step.ctx, &request);
        // Error hooks see the request after the model took it: keep a copy (its history is
        // shared, its tool declarations are not) only when there are hooks to see it.
        let has_error_hooks = !plugins.is_empty() || !callbacks.on_model_error.is_empty();
        let kept = has_error_hooks.then(|| request.clone());
        let request = *request;
        let mut responses = model_call
            .span()
            .in_scope(|| step.model.generate(request, mode));
        while let Some(result) = next_on_heap(&mut responses).instrument(model_call.span().clone()).await {
            match &result {
                Ok(response) => model_call.record_response(response),
                Err(error) => model_call.record_error(error),
            }
            let (response, failed) = match result {
                Ok(response) => (response, false),
                Err(error) => {
                    let mut recovered = None;
                    if let Some(request) = &kept {
                        for plugin in plugins.iter() {
                            recovered = plugin
                                .on_model_error(callback_ctx, request, &error)
                                .await?
                                .map(Box::new);
                            if recovered.is_some() {
                                break;
                            }
                        }
                        if recovered.is_none() {
                            recovered = first_answer(&callbacks.on_model_error, |callback| {
                                callback(callback_ctx, request, &error)
                            })?
                            .map(Box::new);
                        }
                    }
                    let Some(response) = recovered else {
                        Err::<(), _>(error)?;
                        return;
                    };
                    (response, true)
                }
            };
            let response = with_propagated_grounding(callback_ctx, response);
            let mut replaced = None;
            for plugin in plugins.iter() {
                replaced = plugin.after_model(callback_ctx, &response).await?.map(Box::new);
                if replaced.is_some() {
                    break;
                }
            }
            if replaced.is_none() {
                replaced = first_answer(&callbacks.after_model, |callback| callback(callback_ctx, &response))?
                    .map(Box::new);
            }
            yield replaced.unwrap_or(response);
            if failed {
                break;
            }
        }
    })
}

/// Puts on `response` the grounding metadata an agent tool left for this invocation (see
/// [`AgentTool::propagate_grounding_metadata`](crate::AgentTool::propagate_grounding_metadata)),
/// unless the model sent its own.
fn with_propagated_grounding(
    callback_ctx: &CallbackContext,
    mut response: Box<LlmResponse>,
) -> Box<LlmResponse> {
    if response.grounding_metadata.is_none() {
        response.grounding_metadata = callback_ctx.state(GROUNDING_METADATA_KEY);
    }
    response
}
