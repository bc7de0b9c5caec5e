#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// What a program writes, at the root: the agents, the runner, tools, models, and the vocabulary
// of their inputs and outputs. Everything else stays in the modules below.
#[doc(inline)]
pub use adk_core::{
    Agent, Content, Error, ErrorKind, Event, Llm, Part, Result, Role, RunConfig, Session,
    StreamingMode,
};
#[doc(inline)]
pub use adk_flow::{AgentTool, CustomAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent};
#[doc(inline)]
pub use adk_macros::tool;
#[cfg(feature = "anthropic")]
#[doc(inline)]
pub use adk_model::Anthropic;
#[cfg(feature = "gemini")]
#[doc(inline)]
pub use adk_model::Gemini;
#[cfg(feature = "openai")]
#[doc(inline)]
pub use adk_model::OpenAi;
#[doc(inline)]
pub use adk_runner::{RunRequest, RunStream, Runner};
#[doc(inline)]
pub use adk_tool::{FunctionTool, Tool, ToolContext};

/// One `use` for a program: the agents, the runner, tools, the models, messages and events, and
/// the stream extension traits that read a run's events.
///
/// ```
/// use adk::prelude::*;
///
/// let message = Content::from("Hello");
/// assert_eq!(message.role, Some(Role::User));
/// ```
pub mod prelude {
    #[cfg(feature = "anthropic")]
    #[doc(no_inline)]
    pub use crate::Anthropic;
    #[cfg(feature = "gemini")]
    #[doc(no_inline)]
    pub use crate::Gemini;
    #[cfg(feature = "openai")]
    #[doc(no_inline)]
    pub use crate::OpenAi;
    #[doc(no_inline)]
    pub use crate::{
        Agent, AgentTool, Content, Event, FunctionTool, LlmAgent, LoopAgent, ParallelAgent, Role,
        RunConfig, RunRequest, Runner, SequentialAgent, StreamingMode, Tool, ToolContext,
    };
    #[doc(no_inline)]
    pub use futures::{StreamExt as _, TryStreamExt as _};
}

/// The vocabulary and contracts (`adk-core`): content, events, state, sessions, the `Agent` and
/// `Llm` traits, contexts, service traits, errors.
pub mod core {
    #[doc(inline)]
    pub use adk_core::*;
}

/// Model adapters (`adk-model`).
pub mod model {
    #[doc(inline)]
    pub use adk_model::*;
}

/// Tools and toolsets (`adk-tool`).
pub mod tool {
    #[doc(inline)]
    pub use adk_tool::*;
}

/// Session, artifact and memory services (`adk-session`).
pub mod session {
    #[doc(inline)]
    pub use adk_session::*;
}

/// The LLM flow and agents (`adk-flow`).
pub mod flow {
    #[doc(inline)]
    pub use adk_flow::*;
}

/// The runner (`adk-runner`).
pub mod runner {
    #[doc(inline)]
    pub use adk_runner::*;
}

/// Tracing and OpenTelemetry (`adk-telemetry`).
pub mod telemetry {
    #[doc(inline)]
    pub use adk_telemetry::*;
}

/// Test doubles for your agents' tests (feature `test-util`): [`ScriptedModel`](testing::ScriptedModel)
/// answers from a script, so that tests run without a key or a network.
///
/// ```
/// use adk::prelude::*;
/// use adk::testing::ScriptedModel;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> adk::Result<()> {
/// let model = ScriptedModel::new("scripted").then_text("Hello, Ada!");
/// let agent = LlmAgent::builder("greeter").model(model.clone()).build()?;
/// let runner = Runner::in_memory("app", agent)?;
/// assert_eq!(runner.run("ada", "s1", "Hi").final_text().await?, "Hello, Ada!");
/// assert_eq!(model.requests().len(), 1);
/// # Ok(()) }
/// ```
#[cfg(feature = "test-util")]
pub mod testing {
    #[doc(inline)]
    pub use adk_core::testing::*;
}

/// The HTTP server: ADK's REST + SSE API and the dev UI (`adk-server`, feature `server`).
#[cfg(feature = "server")]
pub mod server {
    #[doc(inline)]
    pub use adk_server::*;
}

/// Evaluation with ADK's eval sets, metrics and result files (`adk-eval`, feature `eval`).
#[cfg(feature = "eval")]
pub mod eval {
    #[doc(inline)]
    pub use adk_eval::*;
}

/// The command line for your own binary: `run`, `web`, `api_server`, `create` (`adk-launcher`,
/// feature `launcher`).
#[cfg(feature = "launcher")]
pub mod launcher {
    #[doc(inline)]
    pub use adk_launcher::*;
}

#[cfg(feature = "launcher")]
#[doc(inline)]
pub use adk_launcher::Launcher;

/// The planning orchestrator and the configurable agent run loop (`adk-orchestrator`, feature
/// `orchestrator`).
#[cfg(feature = "orchestrator")]
pub mod orchestrator {
    #[doc(inline)]
    pub use adk_orchestrator::*;
}

/// Graph workflows as ADK 2.x runs them: nodes, edges with routes, fan-out and fan-in, loops,
/// retries, timeouts and questions to the user (`adk-workflow`, feature `workflow`).
#[cfg(feature = "workflow")]
pub mod workflow {
    #[doc(inline)]
    pub use adk_workflow::*;
}

/// The Agent2Agent protocol: expose an app over A2A, call remote agents (`adk-a2a`, feature
/// `a2a`).
#[cfg(feature = "a2a")]
pub mod a2a {
    #[doc(inline)]
    pub use adk_a2a::*;
}

/// What the code `#[adk::tool]` writes names; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use async_trait;
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
