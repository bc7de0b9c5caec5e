#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

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
    ContextTransform, DefaultStrategy, EventHook, IntoLoopStrategy, LOOP_METADATA_KEY, LoopAction,
    LoopConfig, LoopEvent, LoopResult, LoopStrategy, RequestInput, RunLoopAgent,
    RunLoopAgentBuilder, StopReason, TokenUsage, ToolUsePolicy,
};
pub use task::Task;
