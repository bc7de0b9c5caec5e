#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(inline)]
pub use adk_core::*;

/// The vocabulary and contracts (`adk-core`).
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
