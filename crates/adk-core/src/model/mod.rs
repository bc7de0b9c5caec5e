//! The model contract: [`LlmRequest`] in, a stream of [`LlmResponse`]s out, through the [`Llm`] trait.
//!
//! These types name no provider. Adapters (in `adk-model`) translate them to a provider's wire format
//! and must reject, not drop, a setting they cannot honour.

mod config;
mod request;
mod response;

use std::fmt;

use futures::stream::BoxStream;

pub use config::{
    FunctionCallingConfig, FunctionCallingMode, GenerateContentConfig, SafetySetting,
    ThinkingConfig, ThinkingLevel, ToolConfig,
};
pub use request::{BuiltinTool, FunctionDeclaration, LlmRequest};
pub use response::{FinishReason, LlmResponse, UsageMetadata};

use crate::Result;

/// A stream of model responses: partial ones first when streaming, then the final one.
pub type LlmResponseStream = BoxStream<'static, Result<LlmResponse>>;

/// A language model that adk-rs can call.
///
/// `generate` returns at once; the work happens as the stream is polled, and dropping the stream
/// cancels it. With [`StreamingMode::Sse`] the adapter yields partial responses (`partial: Some(true)`)
/// holding text deltas as they arrive, then one aggregated final response with the finish reason
/// and usage. Otherwise it yields one final response.
pub trait Llm: Send + Sync {
    /// The model name, for example `gemini-2.5-flash`.
    fn name(&self) -> &str;

    /// Sends `request` to the model. With [`StreamingMode::Sse`] the stream yields partial
    /// responses with text deltas as they arrive, then the aggregated response; otherwise one
    /// response.
    fn generate(&self, request: LlmRequest, mode: StreamingMode) -> LlmResponseStream;
}

impl fmt::Debug for dyn Llm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llm").field("name", &self.name()).finish()
    }
}

/// How a run streams model output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StreamingMode {
    /// One event per model response.
    #[default]
    None,
    /// Partial events with text deltas as they arrive, then the aggregated event.
    Sse,
}

impl StreamingMode {
    /// Whether the model is asked to stream its answer.
    pub fn is_streaming(self) -> bool {
        self == Self::Sse
    }
}

crate::__into_shared!(
    /// A model ([`Llm`]) as a builder takes it: the model itself, an `Arc` of it, or an
    /// `Arc<dyn Llm>`.
    IntoLlm,
    into_llm,
    Llm,
    "`{Self}` is not a model: it does not implement `Llm`"
);
