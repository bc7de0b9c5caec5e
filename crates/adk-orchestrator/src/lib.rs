//! dspy-go's planning orchestrator and configurable agent run loop (seed 004), as adk-rs agents.
//!
//! Both run under the `Runner` like every other agent: their work is events in the session, spans
//! in the trace (`invoke_agent`, `call_llm`, `generate_content`, `execute_tool`, and the
//! orchestrator's `phase` and `task` spans), and messages in the dev UI.
//!
//! # The orchestrator
//!
//! [`FlexibleOrchestrator`] asks an analyzer model to break the user's request into tasks,
//! written as XML; [`XmlTaskParser`] reads them, with an [`XmlNormalizer`] that repairs the
//! mistakes models make (code fences, stray text, unescaped `&`, missing closing tags) and an
//! [`XmlError`] with the seed's codes for what it cannot; the [`DependencyPlanCreator`] orders
//! them into phases by their dependencies, rejecting cycles by name. Each task goes to the
//! [`TaskProcessor`] registered for it: an agent ([`AgentProcessor`]), a tool
//! ([`ToolProcessor`]) or a closure ([`FnProcessor`]). Phases run in order and the tasks of a
//! phase at the same time, each with a timeout and retries ([`OrchestrationConfig`],
//! [`RetryConfig`]); the [`OrchestratorResult`] lands in the session state.
//!
//! ```
//! use std::sync::Arc;
//! use adk_orchestrator::{FlexibleOrchestrator, FnProcessor, OrchestrationConfig, RetryConfig};
//! use adk_test::ScriptedModel;
//! use serde_json::json;
//!
//! let analyzer = ScriptedModel::new("planner").then_text(
//!     r#"<tasks>
//!          <task id="a" type="count" processor="count"><metadata><item key="n">2</item></metadata></task>
//!          <task id="b" type="count" processor="count"><dependencies><dep>a</dep></dependencies></task>
//!        </tasks>"#,
//! );
//! let orchestrator = FlexibleOrchestrator::builder("planner")
//!     .model(Arc::new(analyzer))
//!     .processor("count", FnProcessor::new("Counts.", |input| async move {
//!         Ok(json!(input.dependency_outputs.len()))
//!     }))
//!     .config(OrchestrationConfig::default().with_retry(RetryConfig::new(2)))
//!     .build()
//!     .unwrap();
//! # let _ = orchestrator;
//! ```

mod analyzer;
mod config;
mod error;
mod events;
mod execute;
mod model_call;
mod orchestrator;
mod parser;
mod plan;
mod processor;
mod processors;
mod result;
mod run_loop;
mod task;
mod tool_call;

pub use analyzer::{AnalyzerConfig, DEFAULT_BASE_INSTRUCTION, DEFAULT_FORMAT_INSTRUCTIONS};
pub use config::{OrchestrationConfig, RetryConfig};
pub use error::{AnalysisError, AnalysisFailure};
pub use events::{EVENT_METADATA_KEY, event_status};
pub use orchestrator::{DEFAULT_RESULT_KEY, FlexibleOrchestrator, FlexibleOrchestratorBuilder};
pub use parser::{TaskParser, XmlError, XmlErrorCode, XmlNormalizer, XmlTaskParser};
pub use plan::{DependencyPlanCreator, Plan, PlanCreator, PlanError};
pub use processor::{TaskInput, TaskProcessor, TaskStep, TaskStream};
pub use processors::{AgentProcessor, FnProcessor, ToolProcessor};
pub use result::{FailureReason, OrchestratorResult, TaskFailure};
pub use run_loop::{
    ContextTransform, DefaultStrategy, EventHook, LOOP_METADATA_KEY, LoopAction, LoopConfig,
    LoopEvent, LoopResult, LoopStrategy, RequestInput, RunLoopAgent, RunLoopAgentBuilder,
    StopReason, TokenUsage, ToolUsePolicy,
};
pub use task::Task;
