//! One model call of the orchestrator's analyzer or of the run loop: counted against the
//! invocation's limit, in its `generate_content` span, with usage and errors recorded.

use adk_core::internal::InvocationControl as _;
use adk_core::{InvocationContext, LlmRequest, LlmResponseStream};
use adk_telemetry::ModelCall;
use async_stream::try_stream;
use futures::StreamExt as _;
use tracing::Instrument as _;

/// Calls the model through `generate` (a `dyn Llm`, or a strategy that owns the call) and yields
/// what it answers. Dropping the stream cancels the call.
pub(crate) fn call_model(
    ctx: InvocationContext,
    request: LlmRequest,
    generate: impl FnOnce(LlmRequest) -> LlmResponseStream + Send + 'static,
) -> LlmResponseStream {
    Box::pin(try_stream! {
        ctx.count_llm_call()?;
        let mut model_call = ModelCall::start(&ctx, &request);
        let mut responses = model_call.span().in_scope(|| generate(request));
        while let Some(result) = responses.next().instrument(model_call.span().clone()).await {
            match &result {
                Ok(response) => model_call.record_response(response),
                Err(error) => model_call.record_error(error),
            }
            yield result?;
        }
    })
}
