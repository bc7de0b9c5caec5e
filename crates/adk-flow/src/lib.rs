#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_builder;
mod agent_lifecycle;
mod agent_tool;
mod agents;
mod callbacks;
mod client_calls;
mod code_executor;
mod flow;
mod instruction_template;
mod live_events;
mod llm_agent;
mod mode;
mod next_on_heap;
mod node_paths;
mod overflow;
mod planner;
mod plugin;
mod processors;
mod step;
pub mod task;
mod tool_calls;

pub use agent_tool::AgentTool;
pub use agents::{
    CustomAgent, CustomAgentBuilder, LoopAgent, LoopAgentBuilder, ParallelAgent,
    ParallelAgentBuilder, RunFn, SequentialAgent, SequentialAgentBuilder,
};
pub use callbacks::{
    AfterAgentCallback, AfterModelCallback, AfterToolCallback, BeforeAgentCallback,
    BeforeModelCallback, BeforeToolCallback, OnModelErrorCallback, OnToolErrorCallback,
    ToolCallbacks,
};
pub use code_executor::{
    BuiltInCodeExecutor, CodeExecution, CodeExecutor, CodeExecutorError, CodeExecutorErrorKind,
    ExecutionLimits, IntoCodeExecutor, SandboxedCodeExecutor, SandboxedCodeExecutorBuilder,
    UnsafeLocalCodeExecutor, UnsafeLocalCodeExecutorBuilder,
};
pub use live_events::without_rewound;
pub use llm_agent::{IncludeContents, InstructionProvider, LlmAgent, LlmAgentBuilder};
pub use mode::AgentMode;
pub use node_paths::{agent_path, next_run_id};
pub use planner::{BuiltInPlanner, IntoPlanner, PlanReActPlanner, Planner};
pub use plugin::{IntoPlugin, Plugin};
pub use step::REPEATED_TOOL_CALLS;
pub use tool_calls::{ToolInvoker, ToolMap, ToolResponses, assign_call_ids};

/// What the runner hands the flow through an invocation's data (its plugins, whether tools may
/// write `app:` state, compaction on a context overflow).
///
/// Public only so that the runner can reach it; not part of the API, and changed in any release.
#[doc(hidden)]
pub mod internal {
    pub use crate::overflow::{ContextCompactor, OverflowCompaction};
    pub use crate::plugin::Plugins;
    pub use crate::tool_calls::ToolStateScopes;
}
